// Package sqltext does the few token-level operations on SQL text that
// evaluation needs: finding a top-level ORDER BY, test-suite's DISTINCT
// stripping and post-processing, and the read-only check of the validate
// stage.
//
// It is a small hand-written lexer, not a parser, on purpose. Every
// operation here must be quote-, comment- and parenthesis-aware (an ORDER BY
// inside a string literal or a sub-query is not a top-level ORDER BY), and
// one must reproduce what another tool's tokeniser does to the text:
// test-suite strips DISTINCT over sqlparse's flattened tokens, which
// sqlparse.go reproduces with a lexer of its own. None of them
// needs a syntax tree, and a parser would reject exactly the malformed
// predictions an evaluator has to handle. The lexer never fails: any input,
// valid SQL or not, becomes a sequence of tokens whose texts concatenate back
// to the input.
package sqltext

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a token.
type Kind uint8

// Token kinds.
const (
	Space    Kind = iota // whitespace, including newlines
	Comment              // -- line comment (with its newline) or /* block */
	Word                 // identifier or keyword, unquoted
	Number               // numeric literal
	String               // '…' string literal
	Quoted               // "…", `…` or […] quoted identifier
	Punct                // ( ) , ; .
	Operator             // operators and any other symbol
)

// Token is one lexeme. Text is exactly the input slice it covers, so the
// texts of all tokens of an input concatenate back to that input.
type Token struct {
	Kind Kind
	Text string
	Pos  int // byte offset in the input
}

// Significant reports whether the token is neither whitespace nor a comment.
func (t Token) Significant() bool { return t.Kind != Space && t.Kind != Comment }

// IsWord reports whether the token is the unquoted word w, compared without
// regard to case (ASCII folding, as SQL keywords are ASCII).
func (t Token) IsWord(w string) bool { return t.Kind == Word && strings.EqualFold(t.Text, w) }

// Lex splits sql into tokens with SQLite's lexical rules: a doubled quote
// character stands for itself inside a string or quoted name; "…", `…` and
// […] quote identifiers; -- and /* */ start comments. An unterminated
// string, quoted identifier or block comment extends to the end of the
// input, as SQLite reads it.
func Lex(sql string) []Token { return lex(sql) }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func lex(s string) []Token {
	// Most SQL has a token every few bytes: sized once, the slice rarely
	// grows.
	return appendTokens(make([]Token, 0, len(s)/4+4), s)
}

// Tokens yields Lex's tokens of sql one by one, without building a slice:
// for a caller that looks at each token once.
func Tokens(sql string) iter.Seq[Token] {
	return func(yield func(Token) bool) {
		for i := 0; i < len(sql); {
			k, end := scan(sql, i)
			if !yield(Token{Kind: k, Text: sql[i:end], Pos: i}) {
				return
			}
			i = end
		}
	}
}

// AppendTokens appends the tokens of sql (Lex's) to dst and returns the
// extended slice, so that a caller lexing many texts can reuse one buffer.
func AppendTokens(dst []Token, sql string) []Token { return appendTokens(dst, sql) }

func appendTokens(toks []Token, s string) []Token {
	for i := 0; i < len(s); {
		k, end := scan(s, i)
		toks = append(toks, Token{Kind: k, Text: s[i:end], Pos: i})
		i = end
	}
	return toks
}

// scan reads the token that starts at s[i] (i < len(s)) and returns its
// kind and end. The lexer is this function called until the input ends.
func scan(s string, i int) (Kind, int) {
	c := s[i]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		j := i + 1
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		return Space, j
	case c == '-' && strings.HasPrefix(s[i:], "--"):
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return Comment, len(s)
		}
		return Comment, i + j + 1
	case c == '/' && strings.HasPrefix(s[i:], "/*"):
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return Comment, i + 2 + j + 2
		}
		return Comment, len(s)
	case c == '\'' || c == '"' || c == '`':
		kind := Quoted
		if c == '\'' {
			kind = String
		}
		if end, ok := closeQuote(s, i, c); ok {
			return kind, end
		}
		return kind, len(s)
	case c == '[':
		if j := strings.IndexByte(s[i+1:], ']'); j >= 0 {
			return Quoted, i + 1 + j + 1
		}
		return Quoted, len(s)
	case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && s[k] >= '0' && s[k] <= '9' {
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				j = k
			}
		}
		if j < len(s) {
			if nr, _ := decodeRune(s, j); isWordRune(nr) || nr == '$' {
				// 12abc is one word to both SQLite and sqlparse.
				return Word, wordEnd(s, j)
			}
		}
		return Number, j
	case strings.IndexByte("(),;.", c) >= 0:
		return Punct, i + 1
	}
	r, size := decodeRune(s, i)
	if isWordRune(r) {
		return Word, wordEnd(s, i+size)
	}
	return Operator, i + size
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// decodeRune is utf8.DecodeRuneInString(s[i:]) with an ASCII fast path.
func decodeRune(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// wordEnd returns the end of the word that continues at j: word runes, $
// (SQLite allows it inside identifiers) and # (kept from when this lexer
// also stood for sqlparse's).
func wordEnd(s string, j int) int {
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			// ASCII, most of every query: one table lookup a byte.
			if !wordByte[c] {
				break
			}
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if !isWordRune(r) {
			break
		}
		j += size
	}
	return j
}

// wordByte marks the ASCII bytes wordEnd continues a word with: isWordRune's
// ASCII letters, digits and _, and $ and #.
var wordByte = func() (t [utf8.RuneSelf]bool) {
	for c := range rune(utf8.RuneSelf) {
		t[c] = isWordRune(c) || c == '$' || c == '#'
	}
	return t
}()

// closeQuote returns the end of the quoted token that starts at s[i] = q,
// as SQLite reads it: a doubled quote stands for itself, the first single
// one closes.
func closeQuote(s string, i int, q byte) (int, bool) {
	j := i + 1
	for j < len(s) {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j += 2
				continue
			}
			return j + 1, true
		}
		j++
	}
	return 0, false
}
