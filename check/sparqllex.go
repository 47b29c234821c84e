package check

import (
	"strings"
	"unicode/utf8"
)

// lexSPARQL splits a SPARQL request into tokens: <IRIs> (a '<' that cannot
// start an IRIREF is an operator), prefixed names, ?var and $var, '…' "…"
// ”'…”' """…""" strings with backslash escapes, # comments to the end of
// the line, numbers, words and single-character punctuation. It never
// fails: unterminated strings run to the end of the input.
//
// A '<' that can start an IRIREF is one, as the grammar's longest-match
// tokenizer (Jena) reads it: HAVING(?n<1);CLEAR#> is an IRI in the middle.
func lexSPARQL(s string) []tok { return lexSPARQLReading(s, false) }

// lexSPARQLReading is lexSPARQL with a choice for '<'. With lessThan, a '<'
// inside parentheses right after a term (?v, a literal, a number, an IRI, a
// prefixed name or ')') is the less-than operator when the IRIREF it could
// start holds a ';', as a parser that reads operators in expression context
// (Oxigraph's) sees it: HAVING(?n<1);CLEAR#> is then "?n < 1", ";", CLEAR
// and a comment. Safety checks both readings.
func lexSPARQLReading(s string, lessThan bool) []tok {
	var toks []tok
	i, parens := 0, 0
	var last tok // the last significant token
	emit := func(k tokKind, end int) {
		t := tok{Kind: k, Text: s[i:end], Pos: i}
		toks = append(toks, t)
		i = end
		if t.sig() {
			last = t
		}
		switch {
		case t.p("("):
			parens++
		case t.p(")") && parens > 0:
			parens--
		}
	}
	for i < len(s) {
		c := s[i]
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\n\r\f\v", s[j]) >= 0 {
				j++
			}
			emit(tSpace, j)
		case c == '#':
			j := strings.IndexAny(s[i:], "\r\n")
			if j < 0 {
				emit(tComment, len(s))
			} else {
				emit(tComment, i+j)
			}
		case c == '<':
			if end, ok := iriEnd(s, i); ok && !(lessThan && parens > 0 && afterTerm(last) && strings.IndexByte(s[i:end], ';') >= 0) {
				emit(tIRI, end)
			} else {
				emit(tPunct, i+1)
			}
		case c == '\'' || c == '"':
			long := strings.Repeat(string(c), 3)
			if strings.HasPrefix(s[i:], long) {
				j := i + 3
				for j < len(s) && !strings.HasPrefix(s[j:], long) {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				emit(tString, min(j+3, len(s)))
			} else {
				emit(tString, closeString(s, i, c, true, false))
			}
		case (c == '?' || c == '$') && i+1 < len(s) && isPNChar(s, i+1):
			emit(tParam, pnEnd(s, i+1, false))
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
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
			emit(tNumber, j)
		case c == ':' || isIdentRune(r):
			j := i
			if c != ':' {
				j = pnEnd(s, i, false)
			}
			if j < len(s) && s[j] == ':' {
				j = pnEnd(s, j+1, true)
				emit(tPName, j)
			} else {
				emit(tWord, j)
			}
		default:
			emit(tPunct, i+size)
		}
	}
	return toks
}

// afterTerm reports whether t ends an operand: a '<' after it in an
// expression is the less-than operator.
func afterTerm(t tok) bool {
	switch t.Kind {
	case tParam, tString, tNumber, tIRI, tPName:
		return true
	}
	return t.p(")")
}

// iriEnd returns the end of an IRIREF starting at s[i] = '<'.
func iriEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '>':
			return j + 1, true
		case c <= ' ' || strings.IndexByte("<\"{}|^`", c) >= 0:
			return 0, false
		}
	}
	return 0, false
}

func isPNChar(s string, j int) bool {
	r, _ := utf8.DecodeRuneInString(s[j:])
	return isIdentRune(r)
}

// pnEnd returns the end of a name (prefix, local part or variable name)
// starting at j: name characters, '-' and inner '.'; a local part (local)
// may also hold ':' and %XX or \-escapes. A trailing '.' is not part of it.
func pnEnd(s string, j int, local bool) int {
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case isIdentRune(r) || r == '-':
		case r == '.' && j+1 < len(s) && (isPNChar(s, j+1) || s[j+1] == '-'):
		case local && r == ':':
		case local && r == '%' && j+2 < len(s):
			n = 3
		case local && r == '\\' && j+1 < len(s):
			n = 2
		default:
			return j
		}
		j += n
	}
	return j
}
