package spider

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Operator tables of process_sql.py; an id is the index in its table.
var (
	clauseKeywords = []string{"select", "from", "where", "group", "order", "limit", "intersect", "union", "except"}
	joinKeywords   = []string{"join", "on", "as"}
	whereOps       = []string{"not", "between", "=", ">", "<", ">=", "<=", "!=", "in", "like", "is", "exists"}
	unitOps        = []string{"none", "-", "+", "*", "/"}
	aggOps         = []string{"none", "max", "min", "count", "sum", "avg"}
	condOps        = []string{"and", "or"}
	sqlOps         = []string{"intersect", "union", "except"}
	orderOps       = []string{"desc", "asc"}
)

const (
	opBetween = 1
	opIn      = 8
	opLike    = 9
)

// Flag is a DISTINCT flag: false, true, or None once DISABLE_DISTINCT has
// cleared it (Python's None is not equal to False).
type Flag int8

// Flag values.
const (
	FlagFalse Flag = iota
	FlagTrue
	FlagNone
)

// ColUnit is (agg_id, col_id, isDistinct); Col is an id-map value such as
// "__singer.name__" or "__all__".
type ColUnit struct {
	Agg      int
	Col      string
	Distinct Flag
}

// ValUnit is (unit_op, col_unit1, col_unit2); C2 is nil without an operator.
type ValUnit struct {
	Op int
	C1 *ColUnit
	C2 *ColUnit
}

// ValueKind says which of process_sql's value forms a Value holds.
type ValueKind int8

// Value kinds: None (also what DISABLE_VALUE leaves), a number (Python
// float), a quoted string token (quotes included), a nested query, or a
// column unit (parse_value's fallback).
const (
	ValNone ValueKind = iota
	ValNum
	ValStr
	ValSQL
	ValCol
)

// Value is one val1/val2 of a condition.
type Value struct {
	Kind ValueKind
	Num  float64
	Str  string
	SQL  *SQL
	Col  ColUnit
}

// CondUnit is (not_op, op_id, val_unit, val1, val2).
type CondUnit struct {
	Not    bool
	Op     int
	VU     ValUnit
	V1, V2 Value
}

// CondElem is one element of a condition list: a CondUnit or a connector
// ("and"/"or"). Conditions keep process_sql's raw list, because the
// reference slices it by position ([::2], [1::2]) even when the parser
// produced two units in a row.
type CondElem struct {
	Unit *CondUnit
	Conn string
}

// Condition is [cond_unit1, 'and'/'or', cond_unit2, ...].
type Condition []CondElem

// TableUnit is ("table_unit", "__t__") or ("sql", nested query).
type TableUnit struct {
	Type  string
	Table string
	SQL   *SQL
}

// SelItem is one (agg_id, val_unit) of the SELECT list.
type SelItem struct {
	Agg int
	VU  ValUnit
}

// OrderBy is ('asc'/'desc', [val_unit, ...]); the direction is the last
// one written (process_sql overwrites it per column), 'asc' by default.
type OrderBy struct {
	Dir   string
	Units []ValUnit
}

// SQL is the dict of process_sql.get_sql. A nil OrderBy is Python's [],
// a nil Limit is None; Limit holds the decimal value of int(token).
type SQL struct {
	Distinct   Flag
	Select     []SelItem
	TableUnits []TableUnit
	FromConds  Condition
	Where      Condition
	GroupBy    []ColUnit
	Having     Condition
	OrderBy    *OrderBy
	Limit      *string
	Intersect  *SQL
	Except     *SQL
	Union      *SQL
}

// EmptySQL is the dict evaluation.py substitutes for a prediction that
// does not parse.
func EmptySQL() *SQL { return &SQL{} }

// parseError is raised (as a panic) where Python raises; Parse recovers it.
type parseError struct{ msg string }

func fail(format string, a ...any) { panic(parseError{fmt.Sprintf(format, a...)}) }

type parser struct {
	toks   []string
	alias  map[string]string
	schema *Schema
}

func (p *parser) tok(i int) string {
	if i < 0 || i >= len(p.toks) {
		fail("list index out of range")
	}
	return p.toks[i]
}

// Parse is process_sql.get_sql: it tokenises query and parses it against
// schema. It returns an error wherever the reference raises (unknown table
// or column, a token where a clause part is expected, running off the end,
// an odd number of quotes, an alias equal to a table name). Tokens left
// after a complete query are ignored, as in the reference.
func Parse(schema *Schema, query string) (sql *SQL, err error) {
	toks, err := Tokenize(query)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			sql, err = nil, fmt.Errorf("%s", pe.msg)
		}
	}()
	p := &parser{toks: toks, schema: schema}
	p.alias = p.tablesWithAlias()
	_, s := p.parseSQL(0)
	return s, nil
}

// tablesWithAlias is scan_alias + get_tables_with_alias.
func (p *parser) tablesWithAlias() map[string]string {
	alias := map[string]string{}
	for i, t := range p.toks {
		if t == "as" {
			alias[p.tok(i+1)] = p.toks[pyIndex(i-1, len(p.toks))]
		}
	}
	for _, t := range p.schema.Tables {
		if _, dup := alias[t]; dup {
			fail("Alias %s has the same name in table", t)
		}
		alias[t] = t
	}
	return alias
}

func (p *parser) idMap(key string) string {
	v, ok := p.schema.idMap[key]
	if !ok {
		fail("KeyError: %q", key)
	}
	return v
}

func (p *parser) table(alias string) string {
	v, ok := p.alias[alias]
	if !ok {
		fail("KeyError: %q", alias)
	}
	return v
}

func (p *parser) parseCol(toks []string, idx int, defaults []string) (int, string) {
	tok := at(toks, idx)
	if tok == "*" {
		return idx + 1, p.idMap(tok)
	}
	if strings.Contains(tok, ".") {
		parts := strings.Split(tok, ".")
		if len(parts) != 2 {
			fail("too many values to unpack: %q", tok)
		}
		return idx + 1, p.idMap(p.table(parts[0]) + "." + parts[1])
	}
	if len(defaults) == 0 {
		fail("Default tables should not be None or empty")
	}
	for _, a := range defaults {
		t := p.table(a)
		cols, ok := p.schema.Cols[t]
		if !ok {
			fail("KeyError: %q", t)
		}
		if slices.Contains(cols, tok) {
			return idx + 1, p.idMap(t + "." + tok)
		}
	}
	fail("Error col: %s", tok)
	return 0, ""
}

func at(toks []string, i int) string {
	if i < 0 || i >= len(toks) {
		fail("list index out of range")
	}
	return toks[i]
}

func (p *parser) parseColUnit(toks []string, idx int, defaults []string) (int, ColUnit) {
	isBlock, distinct := false, FlagFalse
	if at(toks, idx) == "(" {
		isBlock = true
		idx++
	}
	if a := slices.Index(aggOps, at(toks, idx)); a >= 0 {
		idx++
		if !(idx < len(toks) && toks[idx] == "(") {
			fail("assert (")
		}
		idx++
		if at(toks, idx) == "distinct" {
			idx++
			distinct = FlagTrue
		}
		var col string
		idx, col = p.parseCol(toks, idx, defaults)
		if !(idx < len(toks) && toks[idx] == ")") {
			fail("assert )")
		}
		idx++
		return idx, ColUnit{Agg: a, Col: col, Distinct: distinct}
	}
	if at(toks, idx) == "distinct" {
		idx++
		distinct = FlagTrue
	}
	var col string
	idx, col = p.parseCol(toks, idx, defaults)
	if isBlock {
		if at(toks, idx) != ")" {
			fail("assert )")
		}
		idx++
	}
	return idx, ColUnit{Col: col, Distinct: distinct}
}

func (p *parser) parseValUnit(idx int, defaults []string) (int, ValUnit) {
	isBlock := false
	if p.tok(idx) == "(" {
		isBlock = true
		idx++
	}
	var vu ValUnit
	var c1 ColUnit
	idx, c1 = p.parseColUnit(p.toks, idx, defaults)
	vu.C1 = &c1
	if idx < len(p.toks) {
		if op := slices.Index(unitOps, p.toks[idx]); op >= 0 {
			vu.Op = op
			idx++
			var c2 ColUnit
			idx, c2 = p.parseColUnit(p.toks, idx, defaults)
			vu.C2 = &c2
		}
	}
	if isBlock {
		if p.tok(idx) != ")" {
			fail("assert )")
		}
		idx++
	}
	return idx, vu
}

func (p *parser) parseTableUnit(idx int) (int, string, string) {
	key := p.table(p.tok(idx))
	if idx+1 < len(p.toks) && p.toks[idx+1] == "as" {
		idx += 3
	} else {
		idx++
	}
	return idx, p.idMap(key), key
}

// pyFloat matches the strings Python's float() accepts (after strip; a
// token never has surrounding whitespace).
var pyFloat = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?(?:(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*\.(?:[eE][+-]?\d(?:_?\d)*)?|(?i:inf|infinity|nan))$`)
})

func parsePyFloat(s string) (float64, bool) {
	if !pyFloat().MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		// Out of range: Python gives ±inf as ParseFloat does, with an error.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func (p *parser) parseValue(start int, defaults []string) (int, Value) {
	idx := start
	isBlock := false
	if p.tok(idx) == "(" {
		isBlock = true
		idx++
	}
	var v Value
	switch t := p.tok(idx); {
	case t == "select":
		var s *SQL
		idx, s = p.parseSQL(idx)
		v = Value{Kind: ValSQL, SQL: s}
	case strings.Contains(t, "\""):
		v = Value{Kind: ValStr, Str: t}
		idx++
	default:
		if f, ok := parsePyFloat(t); ok {
			v = Value{Kind: ValNum, Num: f}
			idx++
			break
		}
		end := idx
		for end < len(p.toks) {
			e := p.toks[end]
			if e == "," || e == ")" || e == "and" || slices.Contains(clauseKeywords, e) || slices.Contains(joinKeywords, e) {
				break
			}
			end++
		}
		_, cu := p.parseColUnit(p.toks[start:end], 0, defaults)
		v = Value{Kind: ValCol, Col: cu}
		idx = end
	}
	if isBlock {
		if p.tok(idx) != ")" {
			fail("assert )")
		}
		idx++
	}
	return idx, v
}

func (p *parser) parseCondition(idx int, defaults []string) (int, Condition) {
	var conds Condition
	for idx < len(p.toks) {
		var vu ValUnit
		idx, vu = p.parseValUnit(idx, defaults)
		not := false
		if p.tok(idx) == "not" {
			not = true
			idx++
		}
		if idx >= len(p.toks) {
			fail("Error condition")
		}
		op := slices.Index(whereOps, p.toks[idx])
		if op < 0 {
			fail("Error condition: idx: %d, tok: %s", idx, p.toks[idx])
		}
		idx++
		var v1, v2 Value
		if op == opBetween {
			idx, v1 = p.parseValue(idx, defaults)
			if p.tok(idx) != "and" {
				fail("assert and")
			}
			idx++
			idx, v2 = p.parseValue(idx, defaults)
		} else {
			idx, v1 = p.parseValue(idx, defaults)
		}
		conds = append(conds, CondElem{Unit: &CondUnit{Not: not, Op: op, VU: vu, V1: v1, V2: v2}})
		if idx < len(p.toks) {
			t := p.toks[idx]
			if slices.Contains(clauseKeywords, t) || t == ")" || t == ";" || slices.Contains(joinKeywords, t) {
				break
			}
			if slices.Contains(condOps, t) {
				conds = append(conds, CondElem{Conn: t})
				idx++
			}
		}
	}
	return idx, conds
}

func (p *parser) parseSelect(idx int, defaults []string) (int, Flag, []SelItem) {
	if p.tok(idx) != "select" {
		fail("'select' not found")
	}
	idx++
	distinct := FlagFalse
	if idx < len(p.toks) && p.toks[idx] == "distinct" {
		idx++
		distinct = FlagTrue
	}
	var items []SelItem
	for idx < len(p.toks) && !slices.Contains(clauseKeywords, p.toks[idx]) {
		agg := 0
		if a := slices.Index(aggOps, p.toks[idx]); a >= 0 {
			agg = a
			idx++
		}
		var vu ValUnit
		idx, vu = p.parseValUnit(idx, defaults)
		items = append(items, SelItem{Agg: agg, VU: vu})
		if idx < len(p.toks) && p.toks[idx] == "," {
			idx++
		}
	}
	return idx, distinct, items
}

func (p *parser) parseFrom(start int) (int, []TableUnit, Condition, []string) {
	rel := slices.Index(p.toks[min(start, len(p.toks)):], "from")
	if rel < 0 {
		fail("'from' not found")
	}
	idx := start + rel + 1
	var defaults []string
	var units []TableUnit
	var conds Condition
	for idx < len(p.toks) {
		isBlock := false
		if p.toks[idx] == "(" {
			isBlock = true
			idx++
		}
		if p.tok(idx) == "select" {
			var s *SQL
			idx, s = p.parseSQL(idx)
			units = append(units, TableUnit{Type: "sql", SQL: s})
		} else {
			if idx < len(p.toks) && p.toks[idx] == "join" {
				idx++
			}
			var id, name string
			idx, id, name = p.parseTableUnit(idx)
			units = append(units, TableUnit{Type: "table_unit", Table: id})
			defaults = append(defaults, name)
		}
		if idx < len(p.toks) && p.toks[idx] == "on" {
			idx++
			var c Condition
			idx, c = p.parseCondition(idx, defaults)
			if len(conds) > 0 {
				conds = append(conds, CondElem{Conn: "and"})
			}
			conds = append(conds, c...)
		}
		if isBlock {
			if p.tok(idx) != ")" {
				fail("assert )")
			}
			idx++
		}
		if idx < len(p.toks) {
			t := p.toks[idx]
			if slices.Contains(clauseKeywords, t) || t == ")" || t == ";" {
				break
			}
		}
	}
	return idx, units, conds, defaults
}

func (p *parser) clauseStart(idx int, kw string) bool {
	return idx < len(p.toks) && p.toks[idx] == kw
}

func (p *parser) parseGroupBy(idx int, defaults []string) (int, []ColUnit) {
	if !p.clauseStart(idx, "group") {
		return idx, nil
	}
	idx++
	if p.tok(idx) != "by" {
		fail("assert by")
	}
	idx++
	var cols []ColUnit
	for idx < len(p.toks) && !(slices.Contains(clauseKeywords, p.toks[idx]) || p.toks[idx] == ")" || p.toks[idx] == ";") {
		var cu ColUnit
		idx, cu = p.parseColUnit(p.toks, idx, defaults)
		cols = append(cols, cu)
		if idx < len(p.toks) && p.toks[idx] == "," {
			idx++
		} else {
			break
		}
	}
	return idx, cols
}

func (p *parser) parseOrderBy(idx int, defaults []string) (int, *OrderBy) {
	if !p.clauseStart(idx, "order") {
		return idx, nil
	}
	idx++
	if p.tok(idx) != "by" {
		fail("assert by")
	}
	idx++
	ob := &OrderBy{Dir: "asc"}
	for idx < len(p.toks) && !(slices.Contains(clauseKeywords, p.toks[idx]) || p.toks[idx] == ")" || p.toks[idx] == ";") {
		var vu ValUnit
		idx, vu = p.parseValUnit(idx, defaults)
		ob.Units = append(ob.Units, vu)
		if idx < len(p.toks) && slices.Contains(orderOps, p.toks[idx]) {
			ob.Dir = p.toks[idx]
			idx++
		}
		if idx < len(p.toks) && p.toks[idx] == "," {
			idx++
		} else {
			break
		}
	}
	return idx, ob
}

// pyInt matches what Python's int() accepts for a base-10 token.
var pyInt = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?\d(?:_?\d)*$`) })

func (p *parser) parseLimit(idx int) (int, *string) {
	if !p.clauseStart(idx, "limit") {
		return idx, nil
	}
	idx += 2
	t := p.tok(idx - 1)
	if !pyInt().MatchString(t) {
		fail("invalid literal for int(): %q", t)
	}
	n, ok := new(big.Int).SetString(strings.ReplaceAll(t, "_", ""), 10)
	if !ok {
		fail("invalid literal for int(): %q", t)
	}
	s := n.String()
	return idx, &s
}

func (p *parser) skipSemicolon(idx int) int {
	for idx < len(p.toks) && p.toks[idx] == ";" {
		idx++
	}
	return idx
}

func (p *parser) parseSQL(start int) (int, *SQL) {
	idx := start
	isBlock := false
	if p.tok(idx) == "(" {
		isBlock = true
		idx++
	}
	s := &SQL{}
	fromEnd, units, conds, defaults := p.parseFrom(start)
	s.TableUnits, s.FromConds = units, conds
	_, s.Distinct, s.Select = p.parseSelect(idx, defaults)
	idx = fromEnd
	if p.clauseStart(idx, "where") {
		idx, s.Where = p.parseCondition(idx+1, defaults)
	}
	idx, s.GroupBy = p.parseGroupBy(idx, defaults)
	if p.clauseStart(idx, "having") {
		idx, s.Having = p.parseCondition(idx+1, defaults)
	}
	idx, s.OrderBy = p.parseOrderBy(idx, defaults)
	idx, s.Limit = p.parseLimit(idx)
	idx = p.skipSemicolon(idx)
	if isBlock {
		if p.tok(idx) != ")" {
			fail("assert )")
		}
		idx++
	}
	idx = p.skipSemicolon(idx)
	if idx < len(p.toks) && slices.Contains(sqlOps, p.toks[idx]) {
		op := p.toks[idx]
		var sub *SQL
		idx, sub = p.parseSQL(idx + 1)
		switch op {
		case "intersect":
			s.Intersect = sub
		case "union":
			s.Union = sub
		case "except":
			s.Except = sub
		}
	}
	return idx, s
}
