package suite

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// printFlags print an AST as SQL that SQLite and DuckDB both read:
// double-quoted names, single-quoted strings without MySQL charset
// introducers.
const printFlags = format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase |
	format.RestoreNameDoubleQuotes | format.RestoreStringWithoutCharset

// Parse parses one SQL query. The parser reads MySQL's dialect, so a
// double-quoted "text" is a string literal, as SQLite reads it in the
// GeoQuery and Spider golds.
func Parse(q string) (ast.StmtNode, error) {
	return parser.New().ParseOneStmt(q, "", "")
}

// Print writes n back as SQL (see printFlags).
func Print(n ast.Node) (string, error) {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(printFlags, &b)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Candidate is one neighbour of a gold query before it is tried on the
// schema: its SQL text and the mutation that made it.
type Candidate struct {
	Text     string
	Mutation string
}

// site is one mutation of the node numbered index in visit order: apply
// returns the node that replaces it (the same node, modified, or another).
type site struct {
	index int
	desc  string
	apply func(ast.Node) ast.Node
}

// walker numbers nodes in Enter order and replaces the target in Leave.
type walker struct {
	n      int
	target int
	node   ast.Node
	apply  func(ast.Node) ast.Node
	enter  func(i int, n ast.Node)
}

func (w *walker) Enter(n ast.Node) (ast.Node, bool) {
	if w.enter != nil {
		w.enter(w.n, n)
	}
	if w.n == w.target {
		w.node = n
	}
	w.n++
	return n, false
}

func (w *walker) Leave(n ast.Node) (ast.Node, bool) {
	if w.node != nil && n == w.node && w.apply != nil {
		r := w.apply(n)
		w.apply = nil
		return r, true
	}
	return n, true
}

// scope resolves table aliases and unqualified columns of one query
// (all of its SELECTs together: aliases in GeoQuery and Spider golds are
// unique across sub-queries).
type scope struct {
	alias  map[string]*Table // lower-case alias or name → table
	tables []*Table
}

func newScope(stmt ast.Node, s *Schema) *scope {
	sc := &scope{alias: map[string]*Table{}}
	w := &walker{target: -1, enter: func(_ int, n ast.Node) {
		ts, ok := n.(*ast.TableSource)
		if !ok {
			return
		}
		tn, ok := ts.Source.(*ast.TableName)
		if !ok {
			return
		}
		t := s.Table(tn.Name.O)
		if t == nil {
			return
		}
		sc.alias[strings.ToLower(t.Name)] = t
		if ts.AsName.O != "" {
			sc.alias[ts.AsName.L] = t
		}
		sc.tables = append(sc.tables, t)
	}}
	stmt.Accept(w)
	return sc
}

// column resolves a column reference to its table and column, or nils.
func (sc *scope) column(cn *ast.ColumnName) (*Table, *Column) {
	if cn.Table.O != "" {
		t := sc.alias[cn.Table.L]
		if t == nil {
			return nil, nil
		}
		return t, t.Column(cn.Name.O)
	}
	for _, t := range sc.tables {
		if c := t.Column(cn.Name.O); c != nil {
			return t, c
		}
	}
	return nil, nil
}

var (
	compareOps = []opcode.Op{opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE}
	arithOps   = []opcode.Op{opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div}
	aggregates = []string{"count", "sum", "avg", "min", "max"}
)

// maxColumnSwaps bounds the replacement columns tried per column reference.
const maxColumnSwaps = 4

// epsilon is the step of float constants: neighbours use c±epsilon and the
// value pools hold the same values, so both sides of a boundary are hit.
func epsilon(v float64) float64 {
	if v < 0 {
		v = -v
	}
	if v > 1000 {
		return v * 1e-6
	}
	return 1e-3
}

// Neighbours returns the mutations of gold, in a fixed order for a given
// rng state: each is one change to the parsed query (an operator, an
// aggregate, a sort direction, a column, a constant) or one dropped subtree
// (a WHERE conjunct, a DISTINCT, a LIMIT, a JOIN condition, a HAVING).
// Texts equal to the printed gold or to an earlier candidate are left out.
func Neighbours(gold string, s *Schema, rng *rand.Rand) ([]Candidate, error) {
	stmt, err := Parse(gold)
	if err != nil {
		return nil, err
	}
	goldText, err := Print(stmt)
	if err != nil {
		return nil, err
	}
	sc := newScope(stmt, s)
	var sites []site
	star := map[ast.Node]bool{} // COUNT(*)'s argument: not a constant to mutate
	add := func(i int, desc string, f func(ast.Node) ast.Node) {
		sites = append(sites, site{index: i, desc: desc, apply: f})
	}
	w := &walker{target: -1, enter: func(i int, n ast.Node) {
		switch n := n.(type) {
		case *ast.SelectStmt:
			add(i, "toggle DISTINCT", func(x ast.Node) ast.Node { x.(*ast.SelectStmt).Distinct = !n.Distinct; return x })
			if n.Limit != nil {
				add(i, "drop LIMIT", func(x ast.Node) ast.Node { x.(*ast.SelectStmt).Limit = nil; return x })
			}
			if n.Where != nil {
				add(i, "drop WHERE", func(x ast.Node) ast.Node { x.(*ast.SelectStmt).Where = nil; return x })
			}
			if n.Having != nil {
				add(i, "drop HAVING", func(x ast.Node) ast.Node { x.(*ast.SelectStmt).Having = nil; return x })
			}
		case *ast.Join:
			if n.On != nil {
				add(i, "drop JOIN condition", func(x ast.Node) ast.Node { x.(*ast.Join).On = nil; return x })
			}
		case *ast.ByItem:
			add(i, "swap ASC/DESC", func(x ast.Node) ast.Node { x.(*ast.ByItem).Desc = !n.Desc; return x })
		case *ast.PatternLikeOrIlikeExpr:
			add(i, "swap LIKE/NOT LIKE", func(x ast.Node) ast.Node {
				x.(*ast.PatternLikeOrIlikeExpr).Not = !n.Not
				return x
			})
		case *ast.PatternInExpr:
			add(i, "swap IN/NOT IN", func(x ast.Node) ast.Node { x.(*ast.PatternInExpr).Not = !n.Not; return x })
		case *ast.AggregateFuncExpr:
			f := strings.ToLower(n.F)
			isCountStar := len(n.Args) == 1 && isStar(n.Args[0])
			if isCountStar && f == "count" {
				star[n.Args[0]] = true
			}
			if indexOf(aggregates, f) >= 0 && !isCountStar {
				for _, g := range aggregates {
					if g != f {
						add(i, fmt.Sprintf("aggregate %s → %s", strings.ToUpper(f), strings.ToUpper(g)),
							func(x ast.Node) ast.Node { x.(*ast.AggregateFuncExpr).F = g; return x })
					}
				}
				add(i, "toggle aggregate DISTINCT", func(x ast.Node) ast.Node {
					x.(*ast.AggregateFuncExpr).Distinct = !n.Distinct
					return x
				})
			}
		case *ast.BinaryOperationExpr:
			switch {
			case indexOfOp(compareOps, n.Op) >= 0:
				for _, op := range compareOps {
					if op != n.Op {
						add(i, fmt.Sprintf("compare %s → %s", opText(n.Op), opText(op)), setOp(op))
					}
				}
			case indexOfOp(arithOps, n.Op) >= 0:
				for _, op := range arithOps {
					if op != n.Op {
						add(i, fmt.Sprintf("arithmetic %s → %s", opText(n.Op), opText(op)), setOp(op))
					}
				}
			case n.Op == opcode.LogicAnd:
				add(i, "AND → OR", setOp(opcode.LogicOr))
				add(i, "drop conjunct (right)", func(x ast.Node) ast.Node { return x.(*ast.BinaryOperationExpr).L })
				add(i, "drop conjunct (left)", func(x ast.Node) ast.Node { return x.(*ast.BinaryOperationExpr).R })
			case n.Op == opcode.LogicOr:
				add(i, "OR → AND", setOp(opcode.LogicAnd))
			}
		case *ast.ColumnNameExpr:
			t, c := sc.column(n.Name)
			if t == nil || c == nil {
				return
			}
			var alts []string
			for _, o := range t.Columns {
				if o != c && o.Kind == c.Kind {
					alts = append(alts, o.Name)
				}
			}
			rng.Shuffle(len(alts), func(a, b int) { alts[a], alts[b] = alts[b], alts[a] })
			if len(alts) > maxColumnSwaps {
				alts = alts[:maxColumnSwaps]
			}
			sort.Strings(alts)
			for _, a := range alts {
				add(i, fmt.Sprintf("column %s → %s", c.Name, a), func(x ast.Node) ast.Node {
					e := x.(*ast.ColumnNameExpr)
					nn := *e.Name
					nn.Name = ast.NewCIStr(a)
					return &ast.ColumnNameExpr{Name: &nn}
				})
			}
		case *driver.ValueExpr:
			if star[n] {
				return
			}
			for _, v := range constantVariants(n, rng) {
				add(i, fmt.Sprintf("constant %s → %s", v.from, v.to), func(ast.Node) ast.Node {
					return ast.NewValueExpr(v.value, "", "")
				})
			}
		}
	}}
	stmt.Accept(w)

	seen := map[string]bool{goldText: true}
	var out []Candidate
	for _, st := range sites {
		fresh, err := Parse(gold)
		if err != nil {
			return nil, err
		}
		fresh.Accept(&walker{target: st.index, apply: st.apply})
		text, err := Print(fresh)
		if err != nil || seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, Candidate{Text: text, Mutation: st.desc})
	}
	return out, nil
}

func setOp(op opcode.Op) func(ast.Node) ast.Node {
	return func(x ast.Node) ast.Node { x.(*ast.BinaryOperationExpr).Op = op; return x }
}

func opText(op opcode.Op) string {
	var b strings.Builder
	if err := op.Restore(format.NewRestoreCtx(printFlags, &b)); err != nil {
		return op.String()
	}
	return strings.TrimSpace(b.String())
}

func isStar(e ast.ExprNode) bool {
	v, ok := e.(*driver.ValueExpr)
	return ok && v.Kind() == driver.KindInt64 && v.GetInt64() == 1 // COUNT(*) parses as COUNT(1)
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func indexOfOp(ops []opcode.Op, op opcode.Op) int {
	for i, x := range ops {
		if x == op {
			return i
		}
	}
	return -1
}

type variant struct {
	from, to string
	value    any
}

// constValue returns the Go value of a literal (int64, float64 or string)
// and whether it is one of those.
func constValue(v *driver.ValueExpr) (any, bool) {
	switch v.Kind() {
	case driver.KindInt64:
		return v.GetInt64(), true
	case driver.KindUint64:
		return int64(v.GetUint64()), true
	case driver.KindFloat32, driver.KindFloat64:
		return v.GetFloat64(), true
	case driver.KindMysqlDecimal:
		f, err := strconv.ParseFloat(v.GetMysqlDecimal().String(), 64)
		return f, err == nil
	case driver.KindString, driver.KindBytes:
		return v.GetString(), true
	}
	return nil, false
}

// constantVariants: integers ±1 and one random value, floats ±epsilon,
// strings cut to substrings and turned into LIKE patterns.
func constantVariants(v *driver.ValueExpr, rng *rand.Rand) []variant {
	val, ok := constValue(v)
	if !ok {
		return nil
	}
	var out []variant
	switch x := val.(type) {
	case int64:
		r := x + int64(rng.IntN(201)) - 100
		for _, y := range []int64{x - 1, x + 1, r} {
			if y != x {
				out = append(out, variant{strconv.FormatInt(x, 10), strconv.FormatInt(y, 10), y})
			}
		}
	case float64:
		e := epsilon(x)
		for _, y := range []float64{x - e, x + e} {
			out = append(out, variant{fmtFloat(x), fmtFloat(y), y})
		}
	case string:
		var alts []string
		if strings.ContainsAny(x, "%_") {
			alts = append(alts, strings.Trim(x, "%"))
		} else {
			alts = append(alts, "%"+x+"%", x+"%", "%"+x)
		}
		if r := []rune(x); len(r) >= 2 {
			alts = append(alts, string(r[:len(r)/2]), string(r[1:]))
		}
		for _, a := range alts {
			if a != x {
				out = append(out, variant{strconv.Quote(x), strconv.Quote(a), a})
			}
		}
	}
	return out
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// colRef names one column of one table.
type colRef struct{ table, column string }

// queryFacts are what the generator learns from one gold query: the
// constants each column is compared with, and the columns compared with
// each other (which then share one value pool, so joins find partners).
type queryFacts struct {
	constants map[colRef][]any
	loose     []any // constants compared with something that is not a known column
	equal     [][2]colRef
}

// factsOf reads the comparisons of gold.
func factsOf(gold string, s *Schema) (*queryFacts, error) {
	stmt, err := Parse(gold)
	if err != nil {
		return nil, err
	}
	sc := newScope(stmt, s)
	f := &queryFacts{constants: map[colRef][]any{}}
	col := func(e ast.ExprNode) (colRef, bool) {
		c, ok := e.(*ast.ColumnNameExpr)
		if !ok {
			return colRef{}, false
		}
		t, cc := sc.column(c.Name)
		if t == nil || cc == nil {
			return colRef{}, false
		}
		return colRef{t.Name, cc.Name}, true
	}
	constOf := func(e ast.ExprNode) (any, bool) {
		v, ok := e.(*driver.ValueExpr)
		if !ok {
			return nil, false
		}
		return constValue(v)
	}
	pair := func(a, b ast.ExprNode, like bool) {
		c, ok := col(a)
		v, okv := constOf(b)
		if !okv {
			if c2, ok2 := col(b); ok && ok2 && !like {
				f.equal = append(f.equal, [2]colRef{c, c2})
			}
			return
		}
		vals := []any{v}
		if s, isStr := v.(string); isStr && like {
			vals = append(vals, strings.ReplaceAll(strings.ReplaceAll(s, "%", ""), "_", ""))
		}
		if ok {
			f.constants[c] = append(f.constants[c], vals...)
		} else {
			f.loose = append(f.loose, vals...)
		}
	}
	stmt.Accept(&walker{target: -1, enter: func(_ int, n ast.Node) {
		switch n := n.(type) {
		case *ast.BinaryOperationExpr:
			if indexOfOp(compareOps, n.Op) >= 0 {
				pair(n.L, n.R, false)
				pair(n.R, n.L, false)
			}
		case *ast.PatternLikeOrIlikeExpr:
			pair(n.Expr, n.Pattern, true)
		case *ast.PatternInExpr:
			for _, e := range n.List {
				pair(n.Expr, e, false)
			}
			if sub, ok := n.Sel.(*ast.SubqueryExpr); ok {
				if sel, ok := sub.Query.(*ast.SelectStmt); ok && sel.Fields != nil && len(sel.Fields.Fields) == 1 && sel.Fields.Fields[0].Expr != nil {
					pair(n.Expr, sel.Fields.Fields[0].Expr, false)
				}
			}
		case *ast.BetweenExpr:
			pair(n.Expr, n.Left, false)
			pair(n.Expr, n.Right, false)
		}
	}})
	return f, nil
}
