package sqltext

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// HasTopLevelOrderBy reports whether the outermost query of sql's first
// statement has an ORDER BY: the words ORDER and BY (separated only by
// whitespace or comments) at parenthesis depth 0. ORDER BY inside a
// sub-query, a CTE body, a window (OVER (…)), a string literal, a quoted
// identifier or a comment does not count. An ORDER BY after the last SELECT
// of a compound query (UNION …) orders the whole result and does count.
func HasTopLevelOrderBy(sql string) bool {
	stmts := statements(Lex(sql))
	for _, st := range stmts {
		sig := significant(st)
		if len(sig) == 0 {
			continue
		}
		depth := 0
		for i, t := range sig {
			switch {
			case t.Kind == Punct && t.Text == "(":
				depth++
			case t.Kind == Punct && t.Text == ")":
				if depth > 0 {
					depth--
				}
			case depth == 0 && t.IsWord("ORDER") && i+1 < len(sig) && sig[i+1].IsWord("BY"):
				return true
			}
		}
		return false
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
	return curYear().ReplaceAllString(sql, "2020")
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
// to and including the first ';' outside parentheses, plus the whitespace
// and line comments after it. Tokens follow sqlparse's rules where they
// differ from SQLite's (backslash escapes inside quotes, "# " comments, an
// unterminated quote or /* is a single symbol). Where test-suite would crash
// (sqlparse.parse returns no statement for empty or all-whitespace text),
// StripDistinct returns the input unchanged.
func StripDistinct(sql string) string {
	toks := firstStatementSqlparse(lex(sql, sqlparse))
	if len(toks) == 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql))
	for _, t := range toks {
		if t.Kind == Word && strings.EqualFold(t.Text, "distinct") {
			continue
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// firstStatementSqlparse mirrors sqlparse's StatementSplitter for the first
// statement: the split level rises at '(' and falls at ')' and at the keyword
// END; a ';' at level ≤ 0 ends the statement, which then also takes the
// whitespace and single-line comments that follow.
func firstStatementSqlparse(toks []Token) []Token {
	level := 0
	for i, t := range toks {
		switch {
		case t.Kind == Punct && t.Text == "(":
			level++
		case t.Kind == Punct && t.Text == ")":
			level--
		case t.IsWord("END") && !(i+1 < len(toks) && toks[i+1].Text == "(") && !(i > 0 && toks[i-1].Text == "."):
			level--
		case t.Kind == Punct && t.Text == ";" && level <= 0:
			j := i + 1
			for j < len(toks) && (toks[j].Kind == Space || toks[j].Kind == Comment && !strings.HasPrefix(toks[j].Text, "/*")) {
				j++
			}
			return toks[:j]
		}
	}
	for _, t := range toks {
		if t.Kind != Space {
			return toks
		}
	}
	return nil
}

// readOnlyFirst lists the first keywords of read-only statements.
var readOnlyFirst = map[string]bool{"SELECT": true, "VALUES": true}

// writers are first keywords of statements that change data; inside a WITH
// they make the statement (or a data-modifying CTE) not read-only.
var writers = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "MERGE": true, "UPSERT": true}

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
	var stmts [][]Token
	for _, st := range statements(Lex(sql)) {
		if sig := significant(st); len(sig) > 0 && !(len(sig) == 1 && sig[0].Text == ";") {
			stmts = append(stmts, sig)
		}
	}
	switch {
	case len(stmts) == 0:
		return false, "the query is empty"
	case len(stmts) > 1:
		return false, fmt.Sprintf("statement 2 of %d: multiple statements are not allowed", len(stmts))
	}
	sig := stmts[0]
	first := sig[0]
	if first.Kind != Word {
		return false, fmt.Sprintf("the query starts with %q, not with a keyword such as SELECT", first.Text)
	}
	kw := strings.ToUpper(first.Text)
	// Data-modifying sub-statements: '(' followed by a writer keyword.
	for i := 0; i+1 < len(sig); i++ {
		if sig[i].Kind == Punct && sig[i].Text == "(" && sig[i+1].Kind == Word && writers[strings.ToUpper(sig[i+1].Text)] {
			return false, fmt.Sprintf("%s inside parentheses modifies data; only read-only queries are allowed", strings.ToUpper(sig[i+1].Text))
		}
	}
	main := kw
	if kw == "WITH" {
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
				u := strings.ToUpper(t.Text)
				if readOnlyFirst[u] || writers[u] {
					main = u
				}
			}
			if main != "" {
				break
			}
		}
		if main == "" {
			return false, "WITH has no main SELECT statement"
		}
		if !readOnlyFirst[main] {
			return false, fmt.Sprintf("WITH … %s is not a read-only query", main)
		}
	}
	if !readOnlyFirst[main] {
		return false, fmt.Sprintf("%s is not a read-only query", kw)
	}
	depth := 0
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

// Empty reports whether text holds no statement: only whitespace, comments
// and semicolons.
func Empty(text string) bool {
	for _, t := range Lex(text) {
		if t.Significant() && t.Text != ";" {
			return false
		}
	}
	return true
}
