package sqltext

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// HasTopLevelOrderBy reports whether the outermost query of sql's first
// statement has an ORDER BY: the words ORDER and BY (separated only by
// whitespace or comments) at parenthesis depth 0. ORDER BY inside a
// sub-query, a CTE body, a window (OVER (…)), a string literal, a quoted
// identifier or a comment does not count. An ORDER BY after the last SELECT
// of a compound query (UNION …) orders the whole result and does count.
func HasTopLevelOrderBy(sql string) bool {
	// One pass over the tokens, none kept: the first statement is the
	// text up to the first ';' at depth 0 (a statement of only whitespace
	// and comments has no ';' and is the end of the input).
	depth, order := 0, false
	for i := 0; i < len(sql); {
		k, end := scan(sql, i)
		t := Token{Kind: k, Text: sql[i:end], Pos: i}
		i = end
		if !t.Significant() {
			continue
		}
		if order && t.IsWord("BY") {
			return true
		}
		order = false
		switch {
		case t.Kind == Punct && t.Text == "(":
			depth++
		case t.Kind == Punct && t.Text == ")":
			if depth > 0 {
				depth--
			}
		case t.Kind == Punct && t.Text == ";" && depth == 0:
			return false
		case depth == 0 && t.IsWord("ORDER"):
			order = true
		}
	}
	return false
}

// ContainsOrderBy is test-suite's order rule, `'order by' in g_str.lower()`:
// a plain substring test, so it fires for an ORDER BY in a sub-query, a
// string literal or a comment, and not for ORDER  BY with two spaces or a
// newline between the words.
func ContainsOrderBy(sql string) bool {
	return strings.Contains(strings.ToLower(sql), "order by")
}

// Postprocess is test-suite's postprocess: the raw substring replacements
// '> =' → '>=', '< =' → '<=', '! =' → '!=', in that order, applied anywhere
// in the text (string literals included).
func Postprocess(sql string) string {
	sql = strings.ReplaceAll(sql, "> =", ">=")
	sql = strings.ReplaceAll(sql, "< =", "<=")
	return strings.ReplaceAll(sql, "! =", "!=")
}

// curYear is test-suite's replace_cur_year pattern. Python's \s also matches
// \v and Unicode spaces; SQL written with those around CURDATE is not
// expected.
var curYear = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)YEAR[\s\v]*\([\s\v]*CURDATE[\s\v]*\([\s\v]*\)[\s\v]*\)[\s\v]*`)
})

// ReplaceCurYear is test-suite's replace_cur_year, applied just before
// execution: YEAR(CURDATE()) (any case and spacing, with the whitespace that
// follows) becomes 2020.
func ReplaceCurYear(sql string) string {
	if !containsFold(sql, "curdate") {
		return sql // the pattern needs CURDATE: nothing to replace
	}
	return curYear().ReplaceAllString(sql, "2020")
}

// containsFold reports whether s contains sub (lower-case ASCII letters)
// in any ASCII case. Where it stands for a (?i) regexp, sub must hold
// neither k nor s: Unicode folding adds to the ASCII letters only the
// Kelvin sign (k) and ſ (s).
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			if c := s[i+j]; c != sub[j] && c+('a'-'A') != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// StripDistinct reproduces test-suite's remove_distinct,
//
//	toks = [t.value for t in sqlparse.parse(s)[0].flatten()]
//	return ''.join([t for t in toks if t.lower() != 'distinct'])
//
// Every token whose text is "distinct" in any case is dropped, wherever it
// is: SELECT DISTINCT, COUNT(DISTINCT x) → COUNT( x), and also a column named
// distinct after a dot (t.distinct → t.). Strings, quoted names and comments
// that contain the word are single tokens and are kept. The surrounding
// whitespace stays, so SELECT DISTINCT a becomes "SELECT  a".
//
// Like sqlparse.parse(s)[0], only the first statement is kept: the text up
// to and including the first ';' outside parentheses (and BEGIN … END
// blocks, as sqlparse's splitter counts them), plus the whitespace other
// than line breaks and the line comments (each with its line break) that
// follow it. Tokens are sqlparse 0.4.2's
// (sqlparse.go), which differ from SQLite's: backslash escapes inside
// quotes, "# " comments, names such as #x, \x and :x, $$-quoted strings,
// an unterminated quote or /* is a single symbol. Where test-suite would
// crash (sqlparse.parse returns no statement for empty or all-whitespace
// text), StripDistinct returns the input unchanged.
//
// A token is "distinct" as Python's str.lower() sees it: in ASCII case
// only (lower() maps no other character to one of its letters; Go's
// Unicode folding would take "diſtinct", with U+017F, for the keyword).
// Text with no "distinct" in any ASCII case and no ';' but one at its
// end (then only spaces and tabs: a line break after it is not part of
// the statement) is kept whole, with nothing to drop, and is returned
// without being lexed.
func StripDistinct(sql string) string {
	i := strings.IndexByte(sql, ';')
	if (i < 0 || strings.TrimRight(sql[i+1:], " \t") == "") && !containsFold(sql, "distinct") {
		return sql
	}
	return stripDistinct(sql)
}

// stripDistinct is StripDistinct's lexing path, which every text may take.
func stripDistinct(sql string) string {
	buf := getBufs()
	defer putBufs(buf)
	buf.toks = sqlparseFirst(buf.toks, sql)
	toks := buf.toks
	if len(toks) == 0 {
		return sql
	}
	last := toks[len(toks)-1]
	n := 0
	for _, t := range toks {
		if isDistinct(t) {
			n += len(t.Text)
		}
	}
	if n == 0 {
		// The tokens' texts concatenate back to the input they cover.
		return sql[:last.Pos+len(last.Text)]
	}
	var b strings.Builder
	b.Grow(last.Pos + len(last.Text) - n)
	for _, t := range toks {
		if isDistinct(t) {
			continue
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// isDistinct reports whether t's text is distinct in any ASCII case,
// remove_distinct's test (t.lower() == 'distinct', whatever the token's
// type).
func isDistinct(t Token) bool {
	return len(t.Text) == len("distinct") && containsFold(t.Text, "distinct")
}

// readOnlyFirst lists the first keywords of read-only statements.
var readOnlyFirst = map[string]bool{"SELECT": true, "VALUES": true}

// writers are first keywords of statements that change data; inside a WITH
// they make the statement (or a data-modifying CTE) not read-only.
var writers = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "MERGE": true, "UPSERT": true}

// upperIn reports whether set holds strings.ToUpper(w), without
// allocating for a short ASCII word.
func upperIn(set map[string]bool, w string) bool {
	var b [16]byte
	if len(w) <= len(b) {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if c >= utf8.RuneSelf {
				return set[strings.ToUpper(w)]
			}
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b[i] = c
		}
		return set[string(b[:len(w)])]
	}
	return set[strings.ToUpper(w)]
}

// ReadOnly reports whether sql is exactly one read-only query, and when it
// is not, a reason a person can act on. Accepted: one statement (a trailing
// ';' and comments anywhere are fine) whose first keyword is SELECT or
// VALUES, or WITH whose main statement (the first keyword after the CTE
// definitions at parenthesis depth 0) is SELECT or VALUES. Rejected: empty
// input, several statements, any other first keyword (INSERT, UPDATE,
// DELETE, DROP, CREATE, ALTER, ATTACH, PRAGMA, EXPLAIN, …), a WITH whose body
// or whose CTEs (Postgres data-modifying CTEs) write, and SELECT … INTO at
// depth 0 (Postgres creates a table with it).
//
// It is a lexical check meant to stop accidents, not a sandbox: engines
// must still open databases read-only.
func ReadOnly(sql string) (ok bool, reason string) {
	buf := getBufs()
	defer putBufs(buf)
	buf.toks = appendTokens(buf.toks, sql)
	return readOnly(buf.toks, &buf.sig)
}

// ReadOnlyTokens is ReadOnly of the text toks cover: toks are Lex's tokens
// of a text (all of them, whitespace and comments included), possibly
// with a Word's Text changed, which is read as that word.
func ReadOnlyTokens(toks []Token) (ok bool, reason string) {
	buf := getBufs()
	defer putBufs(buf)
	return readOnly(toks, &buf.sig)
}

// readOnly is ReadOnly on toks; sig is scratch space.
func readOnly(toks []Token, sigBuf *[]Token) (bool, string) {
	// Statements end at each ';' at parenthesis depth 0; those with no
	// significant token but their ';' are empty. Only the first non-empty
	// one is looked at, unless there are several.
	stmts := 0
	var sig []Token
	note := func(st []Token) {
		n, only := 0, ""
		for _, t := range st {
			if t.Significant() {
				n++
				only = t.Text
				if n > 1 {
					break
				}
			}
		}
		if n == 0 || n == 1 && only == ";" {
			return
		}
		stmts++
		if stmts == 1 {
			sig = (*sigBuf)[:0]
			for _, t := range st {
				if t.Significant() {
					sig = append(sig, t)
				}
			}
			*sigBuf = sig
		}
	}
	depth, start := 0, 0
	for i, t := range toks {
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(":
			depth++
		case ")":
			if depth > 0 {
				depth--
			}
		case ";":
			if depth == 0 {
				note(toks[start : i+1])
				start = i + 1
			}
		}
	}
	if start < len(toks) {
		note(toks[start:])
	}
	switch {
	case stmts == 0:
		return false, "the query is empty"
	case stmts > 1:
		return false, fmt.Sprintf("statement 2 of %d: multiple statements are not allowed", stmts)
	}
	first := sig[0]
	if first.Kind != Word {
		return false, fmt.Sprintf("the query starts with %q, not with a keyword such as SELECT", first.Text)
	}
	// Data-modifying sub-statements: '(' followed by a writer keyword.
	for i := 0; i+1 < len(sig); i++ {
		if sig[i].Kind == Punct && sig[i].Text == "(" && sig[i+1].Kind == Word && upperIn(writers, sig[i+1].Text) {
			return false, fmt.Sprintf("%s inside parentheses modifies data; only read-only queries are allowed", strings.ToUpper(sig[i+1].Text))
		}
	}
	main := first.Text // as written; compared through upperIn
	if upperIn(with, first.Text) {
		main = ""
		depth := 0
		for _, t := range sig[1:] {
			switch {
			case t.Kind == Punct && t.Text == "(":
				depth++
			case t.Kind == Punct && t.Text == ")":
				if depth > 0 {
					depth--
				}
			case depth == 0 && t.Kind == Word:
				if upperIn(readOnlyFirst, t.Text) || upperIn(writers, t.Text) {
					main = t.Text
				}
			}
			if main != "" {
				break
			}
		}
		if main == "" {
			return false, "WITH has no main SELECT statement"
		}
		if !upperIn(readOnlyFirst, main) {
			return false, fmt.Sprintf("WITH … %s is not a read-only query", strings.ToUpper(main))
		}
	}
	if !upperIn(readOnlyFirst, main) {
		return false, fmt.Sprintf("%s is not a read-only query", strings.ToUpper(first.Text))
	}
	depth = 0
	for _, t := range sig {
		switch {
		case t.Kind == Punct && t.Text == "(":
			depth++
		case t.Kind == Punct && t.Text == ")":
			if depth > 0 {
				depth--
			}
		case depth == 0 && t.IsWord("INTO"):
			return false, "SELECT … INTO writes a table; only read-only queries are allowed"
		}
	}
	return true, ""
}

var with = map[string]bool{"WITH": true}

// Empty reports whether text holds no statement: only whitespace, comments
// and semicolons.
func Empty(text string) bool {
	for i := 0; i < len(text); {
		k, end := scan(text, i)
		if k != Space && k != Comment && text[i:end] != ";" {
			return false
		}
		i = end
	}
	return true
}

// bufs is scratch space for the functions that lex a text and keep none
// of its tokens.
type bufs struct{ toks, sig []Token }

var bufPool = sync.Pool{New: func() any { return &bufs{toks: make([]Token, 0, 256), sig: make([]Token, 0, 128)} }}

func getBufs() *bufs { return bufPool.Get().(*bufs) }

// putBufs returns b to the pool, dropping its references to the texts it
// lexed (a huge buffer is left to the collector).
func putBufs(b *bufs) {
	if cap(b.toks) > 1<<16 || cap(b.sig) > 1<<16 {
		return
	}
	clear(b.toks)
	clear(b.sig)
	b.toks, b.sig = b.toks[:0], b.sig[:0]
	bufPool.Put(b)
}
