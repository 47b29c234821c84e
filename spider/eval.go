package spider

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Rule selects the exact-match rule.
type Rule string

// The two exact-match rules. RuleCurrent is today's evaluation.py: after
// every partial component matches, the sorted FROM table units must be
// equal whenever the gold has at least one (`> 0`, since commit 8e1c95e,
// 2018-10-25). Rule2018 is the initial commit's `> 1`: a single-table gold
// skips the table check, so `SELECT count(*) FROM stadium` matches
// `SELECT count(*) FROM singer`. Rule2018 reproduces the published
// evaluation_examples/eval_result_example.txt; it also applies inside
// INTERSECT/UNION/EXCEPT sub-queries, which are compared by exact match.
const (
	RuleCurrent Rule = "current"
	Rule2018    Rule = "2018"
)

// ErrReference marks inputs on which evaluation.py itself raises (and the
// whole run stops): a gold query that does not parse, a condition list the
// rebuild step cannot unpack, or an unorderable pair of FROM sub-queries.
var ErrReference = errors.New("evaluation.py raises on this input")

func refErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrReference, fmt.Sprintf(format, a...))
}

// Normalize returns a copy of s rebuilt as evaluation.py does before
// comparing (rebuild_sql_val, then rebuild_sql_col with the columns of s's
// own FROM tables): with DISABLE_VALUE every WHERE/HAVING/ON value that is
// not a sub-query becomes None (recursively inside those sub-queries and
// the INTERSECT/UNION/EXCEPT parts); with DISABLE_DISTINCT the DISTINCT
// flags of SELECT and of every rebuilt column unit become None; and a
// column of a table in s's FROM that is in a foreign-key group is replaced
// by the group's representative. Like the reference, sub-queries used as
// values and FROM sub-queries are not column-rebuilt, and FROM sub-queries
// keep their values.
func Normalize(schema *Schema, s *SQL) (*SQL, error) {
	c := s.clone()
	if err := rebuildVal(c); err != nil {
		return nil, err
	}
	prefixes := map[string]bool{}
	for _, tu := range c.TableUnits {
		if tu.Type == "table_unit" && len(tu.Table) >= 2 {
			prefixes[tu.Table[:len(tu.Table)-2]] = true
		}
	}
	valid := func(col string) bool {
		i := strings.Index(col, ".")
		return i >= 0 && prefixes[col[:i]]
	}
	if err := rebuildCol(c, valid, schema.FK); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *SQL) clone() *SQL {
	if s == nil {
		return nil
	}
	c := *s
	c.Select = slices.Clone(s.Select)
	for i := range c.Select {
		c.Select[i].VU = s.Select[i].VU.clone()
	}
	c.TableUnits = slices.Clone(s.TableUnits)
	for i := range c.TableUnits {
		c.TableUnits[i].SQL = s.TableUnits[i].SQL.clone()
	}
	c.FromConds = s.FromConds.clone()
	c.Where = s.Where.clone()
	c.Having = s.Having.clone()
	c.GroupBy = slices.Clone(s.GroupBy)
	if s.OrderBy != nil {
		ob := OrderBy{Dir: s.OrderBy.Dir, Units: slices.Clone(s.OrderBy.Units)}
		for i := range ob.Units {
			ob.Units[i] = s.OrderBy.Units[i].clone()
		}
		c.OrderBy = &ob
	}
	c.Intersect, c.Except, c.Union = s.Intersect.clone(), s.Except.clone(), s.Union.clone()
	return &c
}

func (v ValUnit) clone() ValUnit {
	if v.C1 != nil {
		c := *v.C1
		v.C1 = &c
	}
	if v.C2 != nil {
		c := *v.C2
		v.C2 = &c
	}
	return v
}

func (v Value) clone() Value {
	v.SQL = v.SQL.clone()
	return v
}

func (c Condition) clone() Condition {
	if c == nil {
		return nil
	}
	out := make(Condition, len(c))
	for i, e := range c {
		if e.Unit != nil {
			u := *e.Unit
			u.VU = u.VU.clone()
			u.V1, u.V2 = u.V1.clone(), u.V2.clone()
			e.Unit = &u
		}
		out[i] = e
	}
	return out
}

func rebuildCondVal(c Condition) error {
	for i := 0; i < len(c); i += 2 {
		u := c[i].Unit
		if u == nil {
			return refErr("connector %q where a condition is expected", c[i].Conn)
		}
		for _, v := range []*Value{&u.V1, &u.V2} {
			if v.Kind == ValSQL {
				if err := rebuildVal(v.SQL); err != nil {
					return err
				}
			} else {
				*v = Value{}
			}
		}
	}
	return nil
}

func rebuildVal(s *SQL) error {
	if s == nil {
		return nil
	}
	for _, c := range []Condition{s.FromConds, s.Having, s.Where} {
		if err := rebuildCondVal(c); err != nil {
			return err
		}
	}
	for _, sub := range []*SQL{s.Intersect, s.Except, s.Union} {
		if err := rebuildVal(sub); err != nil {
			return err
		}
	}
	return nil
}

func rebuildColUnit(cu *ColUnit, valid func(string) bool, fk map[string]string) {
	if cu == nil {
		return
	}
	if m, ok := fk[cu.Col]; ok && valid(cu.Col) {
		cu.Col = m
	}
	cu.Distinct = FlagNone
}

func rebuildValUnit(vu *ValUnit, valid func(string) bool, fk map[string]string) {
	rebuildColUnit(vu.C1, valid, fk)
	rebuildColUnit(vu.C2, valid, fk)
}

func rebuildCondCol(c Condition, valid func(string) bool, fk map[string]string) error {
	for i := 0; i < len(c); i += 2 {
		if c[i].Unit == nil {
			return refErr("connector %q where a condition is expected", c[i].Conn)
		}
		rebuildValUnit(&c[i].Unit.VU, valid, fk)
	}
	return nil
}

func rebuildCol(s *SQL, valid func(string) bool, fk map[string]string) error {
	if s == nil {
		return nil
	}
	for i := range s.Select {
		rebuildValUnit(&s.Select[i].VU, valid, fk)
	}
	s.Distinct = FlagNone
	for _, c := range []Condition{s.FromConds, s.Where, s.Having} {
		if err := rebuildCondCol(c, valid, fk); err != nil {
			return err
		}
	}
	for i := range s.GroupBy {
		rebuildColUnit(&s.GroupBy[i], valid, fk)
	}
	if s.OrderBy != nil {
		for i := range s.OrderBy.Units {
			rebuildValUnit(&s.OrderBy.Units[i], valid, fk)
		}
	}
	for _, sub := range []*SQL{s.Intersect, s.Except, s.Union} {
		if err := rebuildCol(sub, valid, fk); err != nil {
			return err
		}
	}
	return nil
}

// Python == on the dict's parts.

func eqColPtr(a, b *ColUnit) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func eqValUnit(a, b ValUnit) bool {
	return a.Op == b.Op && eqColPtr(a.C1, b.C1) && eqColPtr(a.C2, b.C2)
}

func eqValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case ValNum:
		return a.Num == b.Num
	case ValStr:
		return a.Str == b.Str
	case ValSQL:
		return eqSQL(a.SQL, b.SQL)
	case ValCol:
		return a.Col == b.Col
	}
	return true
}

func eqCondUnit(a, b *CondUnit) bool {
	return a.Not == b.Not && a.Op == b.Op && eqValUnit(a.VU, b.VU) && eqValue(a.V1, b.V1) && eqValue(a.V2, b.V2)
}

func eqCondElem(a, b CondElem) bool {
	if (a.Unit == nil) != (b.Unit == nil) {
		return false
	}
	if a.Unit == nil {
		return a.Conn == b.Conn
	}
	return eqCondUnit(a.Unit, b.Unit)
}

func eqCondition(a, b Condition) bool { return slices.EqualFunc(a, b, eqCondElem) }

func eqTableUnit(a, b TableUnit) bool {
	if a.Type != b.Type {
		return false
	}
	if a.Type == "sql" {
		return eqSQL(a.SQL, b.SQL)
	}
	return a.Table == b.Table
}

func eqOrderBy(a, b *OrderBy) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Dir == b.Dir && slices.EqualFunc(a.Units, b.Units, eqValUnit)
}

func eqLimit(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func eqSQL(a, b *SQL) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Distinct == b.Distinct &&
		slices.EqualFunc(a.Select, b.Select, func(x, y SelItem) bool { return x.Agg == y.Agg && eqValUnit(x.VU, y.VU) }) &&
		slices.EqualFunc(a.TableUnits, b.TableUnits, eqTableUnit) &&
		eqCondition(a.FromConds, b.FromConds) && eqCondition(a.Where, b.Where) &&
		slices.Equal(a.GroupBy, b.GroupBy) && eqCondition(a.Having, b.Having) &&
		eqOrderBy(a.OrderBy, b.OrderBy) && eqLimit(a.Limit, b.Limit) &&
		eqSQL(a.Intersect, b.Intersect) && eqSQL(a.Except, b.Except) && eqSQL(a.Union, b.Union)
}

// Partial is one component's score for one item, as eval_partial_match
// reports it: acc, rec and f1 are all 1 or all 0.
type Partial struct {
	Acc, Rec, F1          float64
	LabelTotal, PredTotal int
}

// PartialTypes are the components of the partial-match table, in
// evaluation.py's print order.
var PartialTypes = []string{"select", "select(no AGG)", "where", "where(no OP)", "group(no Having)",
	"group", "order", "and/or", "IUEN", "keywords"}

func getScores(count, predTotal, labelTotal int) Partial {
	p := Partial{LabelTotal: labelTotal, PredTotal: predTotal}
	if predTotal == labelTotal && count == predTotal {
		p.Acc, p.Rec, p.F1 = 1, 1, 1
	}
	return p
}

// removeFirst deletes the first element of *list equal to x (Python
// list.remove) and reports whether there was one.
func removeFirst[T any](list *[]T, x T, eq func(a, b T) bool) bool {
	for i, y := range *list {
		if eq(x, y) {
			*list = slices.Delete(*list, i, i+1)
			return true
		}
	}
	return false
}

func units(c Condition, odd bool) []CondElem {
	var out []CondElem
	start := 0
	if odd {
		start = 1
	}
	for i := start; i < len(c); i += 2 {
		out = append(out, c[i])
	}
	return out
}

// condKey is a hashable rendering of an and/or list element (Python puts
// them in a set). A unit that carries a sub-query is a dict: unhashable.
func condKey(e CondElem) (string, error) {
	if e.Unit == nil {
		return "s:" + e.Conn, nil
	}
	u := e.Unit
	val := func(v Value) (string, error) {
		switch v.Kind {
		case ValNum:
			return "n" + strconv.FormatFloat(v.Num, 'g', -1, 64), nil
		case ValStr:
			return "s" + strconv.Quote(v.Str), nil
		case ValCol:
			return fmt.Sprintf("c%v", v.Col), nil
		case ValSQL:
			return "", refErr("unhashable type: 'dict' in and/or set")
		}
		return "-", nil
	}
	v1, err := val(u.V1)
	if err != nil {
		return "", err
	}
	v2, err := val(u.V2)
	if err != nil {
		return "", err
	}
	cu := func(c *ColUnit) string {
		if c == nil {
			return "-"
		}
		return fmt.Sprintf("%d|%q|%d", c.Agg, c.Col, c.Distinct)
	}
	return fmt.Sprintf("u:%v|%d|%d|%s|%s|%s|%s", u.Not, u.Op, u.VU.Op, cu(u.VU.C1), cu(u.VU.C2), v1, v2), nil
}

func aoSet(c Condition) (map[string]bool, error) {
	set := map[string]bool{}
	for _, e := range units(c, true) {
		k, err := condKey(e)
		if err != nil {
			return nil, err
		}
		set[k] = true
	}
	return set, nil
}

func keywords(s *SQL) map[string]bool {
	res := map[string]bool{}
	if len(s.Where) > 0 {
		res["where"] = true
	}
	if len(s.GroupBy) > 0 {
		res["group"] = true
	}
	if len(s.Having) > 0 {
		res["having"] = true
	}
	if s.OrderBy != nil {
		res[s.OrderBy.Dir] = true
		res["order"] = true
	}
	if s.Limit != nil {
		res["limit"] = true
	}
	if s.Except != nil {
		res["except"] = true
	}
	if s.Union != nil {
		res["union"] = true
	}
	if s.Intersect != nil {
		res["intersect"] = true
	}
	for _, c := range []Condition{s.FromConds, s.Where, s.Having} {
		for _, e := range units(c, true) {
			if e.Unit == nil && e.Conn == "or" {
				res["or"] = true
			}
		}
		for _, e := range units(c, false) {
			if e.Unit == nil {
				continue
			}
			if e.Unit.Not {
				res["not"] = true
			}
			if e.Unit.Op == opIn {
				res["in"] = true
			}
			if e.Unit.Op == opLike {
				res["like"] = true
			}
		}
	}
	return res
}

// PartialMatch is eval_partial_match on two normalised queries (pred
// first, as in the reference), keyed by PartialTypes.
func PartialMatch(pred, label *SQL, rule Rule) (map[string]Partial, error) {
	res := make(map[string]Partial, len(PartialTypes))

	// select
	labelSel := slices.Clone(label.Select)
	var labelWoAgg []ValUnit
	for _, u := range label.Select {
		labelWoAgg = append(labelWoAgg, u.VU)
	}
	cnt, cntWo := 0, 0
	for _, u := range pred.Select {
		if removeFirst(&labelSel, u, func(a, b SelItem) bool { return a.Agg == b.Agg && eqValUnit(a.VU, b.VU) }) {
			cnt++
		}
		if removeFirst(&labelWoAgg, u.VU, eqValUnit) {
			cntWo++
		}
	}
	res["select"] = getScores(cnt, len(pred.Select), len(label.Select))
	res["select(no AGG)"] = getScores(cntWo, len(pred.Select), len(label.Select))

	// where
	predConds, labelConds := units(pred.Where, false), units(label.Where, false)
	var labelVU []ValUnit
	for _, e := range labelConds {
		labelVU = append(labelVU, e.Unit.VU)
	}
	lt, pt := len(labelConds), len(predConds)
	cnt, cntWo = 0, 0
	for _, e := range predConds {
		if removeFirst(&labelConds, e, eqCondElem) {
			cnt++
		}
		if removeFirst(&labelVU, e.Unit.VU, eqValUnit) {
			cntWo++
		}
	}
	res["where"] = getScores(cnt, pt, lt)
	res["where(no OP)"] = getScores(cntWo, pt, lt)

	// group(no Having)
	strip := func(c string) string {
		if strings.Contains(c, ".") {
			return strings.Split(c, ".")[1]
		}
		return c
	}
	var labelCols []string
	for _, u := range label.GroupBy {
		labelCols = append(labelCols, strip(u.Col))
	}
	cnt = 0
	for _, u := range pred.GroupBy {
		if removeFirst(&labelCols, strip(u.Col), func(a, b string) bool { return a == b }) {
			cnt++
		}
	}
	res["group(no Having)"] = getScores(cnt, len(pred.GroupBy), len(label.GroupBy))

	// group (with HAVING)
	pt, lt, cnt = 0, 0, 0
	if len(pred.GroupBy) > 0 {
		pt = 1
	}
	if len(label.GroupBy) > 0 {
		lt = 1
	}
	if pt == 1 && lt == 1 && slices.EqualFunc(pred.GroupBy, label.GroupBy, func(a, b ColUnit) bool { return a.Col == b.Col }) &&
		eqCondition(pred.Having, label.Having) {
		cnt = 1
	}
	res["group"] = getScores(cnt, pt, lt)

	// order
	pt, lt, cnt = 0, 0, 0
	if pred.OrderBy != nil {
		pt = 1
	}
	if label.OrderBy != nil {
		lt = 1
	}
	if label.OrderBy != nil && eqOrderBy(pred.OrderBy, label.OrderBy) && (pred.Limit == nil) == (label.Limit == nil) {
		cnt = 1
	}
	res["order"] = getScores(cnt, pt, lt)

	// and/or: the reference returns (len(pred_ao), len(label_ao), 0) into
	// (label_total, pred_total, cnt) — the totals are swapped.
	pao, err := aoSet(pred.Where)
	if err != nil {
		return nil, err
	}
	lao, err := aoSet(label.Where)
	if err != nil {
		return nil, err
	}
	if mapsEqual(pao, lao) {
		res["and/or"] = getScores(1, 1, 1)
	} else {
		res["and/or"] = getScores(0, len(lao), len(pao))
	}

	// IUEN
	lt, pt, cnt = 0, 0, 0
	for _, pair := range [][2]*SQL{{pred.Intersect, label.Intersect}, {pred.Except, label.Except}, {pred.Union, label.Union}} {
		p, l := pair[0], pair[1]
		if p != nil {
			pt++
		}
		if l != nil {
			lt++
		}
		if p != nil && l != nil {
			ok, err := exactMatch(p, l, rule)
			if err != nil {
				return nil, err
			}
			if ok {
				cnt++
			}
		}
	}
	res["IUEN"] = getScores(cnt, pt, lt)

	// keywords
	pk, lk := keywords(pred), keywords(label)
	cnt = 0
	for k := range pk {
		if lk[k] {
			cnt++
		}
	}
	res["keywords"] = getScores(cnt, len(pk), len(lk))
	return res, nil
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// ExactMatch is Evaluator.eval_exact_match(pred, gold) on normalised
// queries (see Normalize) under rule.
func ExactMatch(gold, pred *SQL, rule Rule) (bool, error) {
	if rule != RuleCurrent && rule != Rule2018 {
		return false, fmt.Errorf("unknown exact-match rule %q (want %q or %q)", rule, RuleCurrent, Rule2018)
	}
	return exactMatch(pred, gold, rule)
}

func exactMatch(pred, label *SQL, rule Rule) (bool, error) {
	ok, _, err := exactMatchPartial(pred, label, rule)
	return ok, err
}

func exactMatchPartial(pred, label *SQL, rule Rule) (bool, map[string]Partial, error) {
	partial, err := PartialMatch(pred, label, rule)
	if err != nil {
		return false, nil, err
	}
	for _, t := range PartialTypes {
		if partial[t].F1 != 1 {
			return false, partial, nil
		}
	}
	threshold := 0
	if rule == Rule2018 {
		threshold = 1
	}
	if len(label.TableUnits) > threshold {
		lt, err := sortedTables(label.TableUnits)
		if err != nil {
			return false, partial, err
		}
		pt, err := sortedTables(pred.TableUnits)
		if err != nil {
			return false, partial, err
		}
		return slices.EqualFunc(lt, pt, eqTableUnit), partial, nil
	}
	return true, partial, nil
}

// sortedTables is Python's sorted() on table-unit tuples: ("sql", …) sorts
// before ("table_unit", …), names by code point, and two different
// sub-query dicts cannot be ordered (TypeError).
func sortedTables(tu []TableUnit) ([]TableUnit, error) {
	out := slices.Clone(tu)
	var first *SQL
	for _, u := range out {
		if u.Type != "sql" {
			continue
		}
		if first == nil {
			first = u.SQL
		} else if !eqSQL(first, u.SQL) {
			return nil, refErr("'<' not supported between instances of 'dict' and 'dict'")
		}
	}
	slices.SortStableFunc(out, func(a, b TableUnit) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out, nil
}
