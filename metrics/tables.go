package metrics

// Table accuracy (metric-calculators, “Table Accuracy Metric”): Jaccard similarity between the base
// tables a generated SQL query reads in its FROM and JOIN clauses and the
// expected tables.
//
// Parser: no maintained pure-Go SQL parser is reachable from this project's
// module proxy (github.com/rqlite/sql, vitess.io/vitess and
// github.com/xwb1989/sqlparser are all refused), so the extraction is a small
// hand-written lexer and clause walker that covers what the metric needs
// across SQLite, PostgreSQL and MySQL syntax:
//
//   - tokens: identifiers, "quoted", `quoted` and [quoted] identifiers,
//     'strings' (with ” escapes), numbers, -- and /* */ comments, operators;
//   - a table reference after FROM, JOIN (any flavour) or a comma in a FROM
//     list; schema-qualified names keep the last part (main.users → users);
//     an alias (AS u, or a bare name) is skipped, so aliases never count;
//   - a parenthesised FROM item is a subquery or nested join: the walker
//     descends into it and resumes the FROM list after it; a name followed by
//     "(" is a table-valued function and not a table;
//   - FROM inside a function call's parentheses (EXTRACT(YEAR FROM d),
//     SUBSTRING(s FROM 2), TRIM(x FROM y)) is not a clause;
//   - WITH [RECURSIVE] names are CTEs: references to them are dropped;
//   - names are compared lower-cased (case-insensitive), quotes removed.
//
// A query the lexer cannot read (unterminated string, quoted identifier or
// comment, unbalanced parentheses) or a FROM/JOIN with no table after it is
// a parse error: the metric then fails with value 0, the SQL text and the
// error (“Error Reporting” requirement), and other metrics are unaffected.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/item"
)

type sqlTokKind uint8

const (
	tokWord   sqlTokKind = iota // bare word: keyword or identifier
	tokQuoted                   // quoted identifier
	tokString                   // string literal
	tokNumber
	tokPunct
)

type sqlTok struct {
	kind sqlTokKind
	text string // for words: as written; for quoted: unquoted
	pos  int
}

// SQLParseError is a SQL text the table extractor could not read.
type SQLParseError struct {
	Pos int
	Msg string
}

func (e *SQLParseError) Error() string { return fmt.Sprintf("offset %d: %s", e.Pos, e.Msg) }

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// lexSQL splits s into tokens, dropping whitespace and comments.
func lexSQL(s string) ([]sqlTok, error) {
	var toks []sqlTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, &SQLParseError{i, "unterminated /* comment"}
			}
			i += end + 4
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					what := "quoted identifier"
					if c == '\'' {
						what = "string literal"
					}
					return nil, &SQLParseError{i, "unterminated " + what}
				}
				if s[j] == closer {
					if closer != ']' && j+1 < len(s) && s[j+1] == closer { // doubled quote
						b.WriteByte(closer)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			kind := tokQuoted
			if c == '\'' {
				kind = tokString
			}
			toks = append(toks, sqlTok{kind, b.String(), i})
			i = j + 1
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, sqlTok{tokWord, s[i:j], i})
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (isIdentPart(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, sqlTok{tokNumber, s[i:j], i})
			i = j
		default:
			toks = append(toks, sqlTok{tokPunct, string(c), i})
			i++
		}
	}
	return toks, nil
}

// sqlNoAlias are words that end a table reference instead of naming an
// alias, and sqlNotFunc words that open a parenthesised group rather than a
// function call.
var (
	sqlNoAlias = setOf("where", "join", "inner", "left", "right", "full", "outer", "cross",
		"natural", "on", "using", "group", "order", "having", "limit", "union", "except",
		"intersect", "window", "offset", "fetch", "for", "lateral", "straight_join",
		"returning", "set", "values", "select", "from", "into", "indexed", "not", "as",
		"tablesample", "qualify", "partition", "when", "then", "else", "end", "and", "or")
	sqlNotFunc = setOf("in", "exists", "as", "from", "join", "on", "where", "and", "or", "not",
		"select", "union", "all", "any", "some", "values", "with", "having", "by", "then",
		"else", "when", "case", "lateral", "using", "is", "except", "intersect", "distinct",
		"materialized", "recursive", "like", "between", "return", "limit", "offset", "over")
	sqlJoinWords = setOf("inner", "left", "right", "full", "outer", "cross", "natural", "straight_join")
)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func (t sqlTok) is(word string) bool { return t.kind == tokWord && strings.EqualFold(t.text, word) }

func (t sqlTok) punct(p string) bool { return t.kind == tokPunct && t.text == p }

// SQLTables returns the lower-cased base tables of the FROM and JOIN clauses
// of sql (subqueries included, CTE names and aliases excluded), sorted.
func SQLTables(sql string) ([]string, error) {
	toks, err := lexSQL(sql)
	if err != nil {
		return nil, err
	}
	w := &tableWalker{toks: toks, tables: map[string]bool{}, ctes: map[string]bool{}}
	if err := w.walk(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(w.tables))
	for t := range w.tables {
		if !w.ctes[t] {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

// parenFrame is one open parenthesis: whether it is a function call, and
// whether a FROM list resumes after it closes.
type parenFrame struct {
	fn         bool
	resumeFrom bool
}

type tableWalker struct {
	toks   []sqlTok
	i      int
	stack  []parenFrame
	tables map[string]bool
	ctes   map[string]bool
}

func (w *tableWalker) peek(k int) sqlTok {
	if w.i+k < len(w.toks) {
		return w.toks[w.i+k]
	}
	return sqlTok{kind: tokPunct, text: "", pos: -1}
}

func (w *tableWalker) inFunc() bool { return len(w.stack) > 0 && w.stack[len(w.stack)-1].fn }

func (w *tableWalker) walk() error {
	for w.i < len(w.toks) {
		t := w.toks[w.i]
		switch {
		case t.punct("("):
			fn := false
			if w.i > 0 {
				p := w.toks[w.i-1]
				fn = (p.kind == tokWord && !sqlNotFunc[strings.ToLower(p.text)]) || p.kind == tokQuoted
			}
			w.stack = append(w.stack, parenFrame{fn: fn})
			w.i++
		case t.punct(")"):
			if len(w.stack) == 0 {
				return &SQLParseError{t.pos, "unbalanced )"}
			}
			f := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			w.i++
			if f.resumeFrom {
				if err := w.afterRef(); err != nil {
					return err
				}
			}
		case t.is("with") && !w.inFunc():
			w.i++
			w.cteNames()
		case (t.is("from") || t.is("join")) && !w.inFunc():
			w.i++
			if err := w.tableRef(t); err != nil {
				return err
			}
		default:
			w.i++
		}
	}
	if len(w.stack) > 0 {
		return &SQLParseError{len(w.toks), "unbalanced ("}
	}
	return nil
}

// cteNames records the names of the WITH list starting at w.i without
// moving w.i: the walk goes on through the CTE bodies as usual.
func (w *tableWalker) cteNames() {
	j := w.i
	at := func(k int) sqlTok {
		if k < len(w.toks) {
			return w.toks[k]
		}
		return sqlTok{kind: tokPunct, pos: -1}
	}
	// skipParens returns the index after the group opening at k.
	skipParens := func(k int) int {
		depth := 0
		for ; k < len(w.toks); k++ {
			if w.toks[k].punct("(") {
				depth++
			} else if w.toks[k].punct(")") {
				depth--
				if depth == 0 {
					return k + 1
				}
			}
		}
		return k
	}
	if at(j).is("recursive") {
		j++
	}
	for {
		name := at(j)
		if name.kind != tokWord && name.kind != tokQuoted {
			return
		}
		w.ctes[strings.ToLower(name.text)] = true
		j++
		if at(j).punct("(") { // column list
			j = skipParens(j)
		}
		if !at(j).is("as") {
			return
		}
		j++
		for at(j).is("not") || at(j).is("materialized") {
			j++
		}
		if !at(j).punct("(") {
			return
		}
		j = skipParens(j)
		if !at(j).punct(",") {
			return
		}
		j++
	}
}

// tableRef reads one FROM item after kw (FROM, JOIN or a list comma).
func (w *tableWalker) tableRef(kw sqlTok) error {
	for w.peek(0).is("lateral") || w.peek(0).is("only") {
		w.i++
	}
	t := w.peek(0)
	switch {
	case t.punct("("):
		w.stack = append(w.stack, parenFrame{resumeFrom: true})
		w.i++
		// A parenthesised join starts with a FROM item; a subquery with
		// SELECT, WITH or VALUES, which the walk handles.
		if n := w.peek(0); n.is("select") || n.is("with") || n.is("values") {
			return nil
		}
		return w.tableRef(t)
	case t.kind == tokWord && !sqlNoAlias[strings.ToLower(t.text)] || t.kind == tokQuoted:
		name := t.text
		w.i++
		for w.peek(0).punct(".") && (w.peek(1).kind == tokWord || w.peek(1).kind == tokQuoted) {
			name = w.peek(1).text
			w.i += 2
		}
		if w.peek(0).punct("(") { // table-valued function: not a table
			w.stack = append(w.stack, parenFrame{fn: true, resumeFrom: true})
			w.i++
			return nil
		}
		w.tables[strings.ToLower(name)] = true
		return w.afterRef()
	default:
		pos := t.pos
		if pos < 0 {
			pos = kw.pos
		}
		return &SQLParseError{pos, fmt.Sprintf("no table after %s", strings.ToUpper(kw.text))}
	}
}

// afterRef skips an alias (and its column list) and follows a comma to the
// next FROM item.
func (w *tableWalker) afterRef() error {
	if w.peek(0).is("as") {
		w.i++
	}
	if a := w.peek(0); (a.kind == tokWord && !sqlNoAlias[strings.ToLower(a.text)]) || a.kind == tokQuoted {
		w.i++
		if w.peek(0).punct("(") { // alias column list
			depth := 0
			for w.i < len(w.toks) {
				if w.peek(0).punct("(") {
					depth++
				} else if w.peek(0).punct(")") {
					depth--
					if depth == 0 {
						w.i++
						break
					}
				}
				w.i++
			}
		}
	}
	if c := w.peek(0); c.punct(",") {
		w.i++
		return w.tableRef(c)
	}
	return nil
}

// ParseTableList reads an expected-tables value: a list of strings, a JSON
// array in a string, or a comma-separated string. Names are trimmed,
// unquoted, lower-cased and reduced to their last dotted part.
func ParseTableList(v any) ([]string, error) {
	var raw []string
	switch x := v.(type) {
	case []string:
		raw = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("expected table names, got %T in the list", e)
			}
			raw = append(raw, s)
		}
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			if err := json.Unmarshal([]byte(s), &raw); err != nil {
				return nil, fmt.Errorf("expected tables %q: %v", s, err)
			}
		} else if s != "" {
			raw = strings.Split(s, ",")
		}
	default:
		return nil, fmt.Errorf("expected tables must be a list or a string, got %T", v)
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range raw {
		n := strings.TrimSpace(r)
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			n = n[i+1:]
		}
		n = strings.ToLower(strings.Trim(n, "\"`[]' "))
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// TableAccuracy is |extracted ∩ expected| / |extracted ∪ expected| over the
// tables of sql; both empty gives 1.
func TableAccuracy(sql string, expected []string) (float64, []string, error) {
	got, err := SQLTables(sql)
	if err != nil {
		return 0, nil, err
	}
	return Jaccard(setOfStrings(got), setOfStrings(expected)), got, nil
}

func setOfStrings(ss []string) map[string]struct{} {
	m := make(map[string]struct{}, len(ss))
	for _, s := range ss {
		m[strings.ToLower(s)] = struct{}{}
	}
	return m
}

type tableAccuracyMetric struct {
	field    string
	fromGold bool
}

func (tableAccuracyMetric) Info() Info { return tableAccuracyInfo }

func (m tableAccuracyMetric) Score(_ context.Context, in Input) item.Score {
	const name = "table_accuracy"
	rec := in.Record
	if rec == nil {
		return Failed(name, errors.New("no record"))
	}
	var expected []string
	if v, ok := rec.Item.Field(m.field); ok && v != nil {
		var err error
		if expected, err = ParseTableList(v); err != nil {
			return Failed(name, &MetricError{Metric: name, Input: map[string]string{"field " + m.field: fmt.Sprint(v)}, Err: err})
		}
	} else if m.fromGold && rec.Item.Gold != "" {
		var err error
		if expected, err = SQLTables(rec.Item.Gold); err != nil {
			return Failed(name, &MetricError{Metric: name, Input: map[string]string{"gold SQL": rec.Item.Gold}, Err: fmt.Errorf("parse gold SQL: %w", err)})
		}
	} else {
		return item.Score{Name: name, Null: true}
	}
	a := rec.Final()
	if a == nil {
		return Failed(name, errNoAttempt)
	}
	v, _, err := TableAccuracy(a.Query, expected)
	if err != nil {
		return Failed(name, &MetricError{Metric: name, Input: map[string]string{"generated SQL": a.Query}, Err: fmt.Errorf("parse generated SQL: %w", err)})
	}
	return item.Score{Name: name, Value: v}
}

var tableAccuracyInfo = Info{
	Name:        "table_accuracy",
	Description: "Jaccard similarity of the tables in the final query's FROM/JOIN clauses and the expected tables (aliases resolved, case-insensitive).",
	Reference:   "*metric-calculators*, “Table Accuracy Metric” requirement",
	Inputs:      "Record.Final().Query; item field expected_tables, else the tables of Record.Item.Gold",
	Range:       "[0,1]",
}

func init() {
	Register(Def{
		Info:    tableAccuracyInfo,
		Options: []string{"expected_field", "from_gold"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := o.String("expected_field", "expected_tables")
			if err != nil {
				return nil, err
			}
			g, err := o.Bool("from_gold", true)
			if err != nil {
				return nil, err
			}
			return tableAccuracyMetric{field: f, fromGold: g}, nil
		},
	})
}
