package metrics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// This file implements Understanding the SPARQL Evaluation Metrics (BuildingQA, Text2SPARQL over Brick graphs):
// arity matching F1, entity set F1, row-matching F1 and exact-match F1.
// The reference implementation is INFERLab/BuildingQA metrics.py; see
// docs/metrics.md for the definitions and every deviation.

// Profiles of the SPARQL result metrics.
const (
	// SPARQLProfileBuildingQA reproduces BuildingQA's metrics.py: a result's
	// columns are the variables bound in its first row, unbound variables
	// are absent from a row, column sets compare raw lexical values (an
	// absent value counts as ""), rows compare normalised values
	// (trimmed, lower-cased, quotes, ^^datatype and @lang removed).
	SPARQLProfileBuildingQA = "buildingqa"
	// SPARQLProfileStrict uses the result's declared columns, treats NULL as
	// a value equal only to NULL and compares lexical values exactly.
	SPARQLProfileStrict = "strict"
)

// DefaultSPARQLMappingLimit is how many complete column mappings the
// entity-set / row-matching search scores exactly before it stops and
// returns the best mapping found so far (option max_mappings).
const DefaultSPARQLMappingLimit = 20000

// sparqlNodeLimitFactor bounds the search tree's visited nodes at this many
// times the mapping limit, so a search whose bounds prune nothing still ends.
const sparqlNodeLimitFactor = 100

// errSPARQLSearchLimit is returned when the mapping search hit its bound and
// on_search_limit = "error".
var errSPARQLSearchLimit = errors.New("column-mapping search stopped at max_mappings; the score is the best mapping found so far")

// sparqlRows is one result prepared for column-mapping comparisons. Values
// are interned into small integers shared with the other side, so equality
// is integer equality.
type sparqlRows struct {
	cols []string
	n    int
	// norm[c][r] is the interned row-comparison value of column c in row r,
	// -1 when the value is absent (unbound) in that row.
	norm [][]int32
	// raw[c][r] is the interned column-set value of column c in row r.
	raw [][]int32
}

// sparqlInterner gives each distinct string a dense id.
type sparqlInterner struct {
	ids map[string]int32
	// normOf caches the normalised id of a lexical value.
	normOf map[string]int32
}

// normID interns the BuildingQA normalisation of lexical value s, computing
// it once per distinct value.
func (in *sparqlInterner) normID(s string) int32 {
	if v, ok := in.normOf[s]; ok {
		return v
	}
	if in.normOf == nil {
		in.normOf = map[string]int32{}
	}
	v := in.id(BuildingQANormalize(s))
	in.normOf[s] = v
	return v
}

func (in *sparqlInterner) id(s string) int32 {
	if in.ids == nil {
		in.ids = map[string]int32{}
	}
	if v, ok := in.ids[s]; ok {
		return v
	}
	v := int32(len(in.ids))
	in.ids[s] = v
	return v
}

// sparqlNullRaw is the column-set value of NULL under the strict profile;
// it cannot collide with a lexical value because engines never produce NUL.
const sparqlNullRaw = "\x00NULL"

// sparqlLexical renders a cell as the lexical form a SPARQL JSON result
// would carry in its "value" field. SPARQL engines should return RDF terms
// as strings; other normal forms are rendered with table.Format.
func sparqlLexical(v table.Value) string {
	if s, ok := v.(string); ok {
		return s
	}
	return table.Format(v)
}

var (
	bqaDatatypeRE = lazyRE(`\^\^.*$`)
	bqaLangRE     = lazyRE(`@[a-z]{2}(-[a-z]{2})?$`)
)

// BuildingQANormalize is BuildingQA's normalize_value: trim, lower-case,
// drop one pair of surrounding double quotes, then strip a trailing
// ^^datatype and a trailing @xx or @xx-yy language tag.
func BuildingQANormalize(s string) string {
	s = strings.ToLower(strings.TrimFunc(s, unicode.IsSpace))
	if len(s) > 1 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) {
		s = s[1 : len(s)-1]
	}
	if strings.ContainsRune(s, '\n') {
		// Python's '.' stops at newlines and '$' also matches before a
		// final newline; the regexps are kept for this rare case.
		s = bqaDatatypeRE.ReplaceAllString(s, "")
		return bqaLangRE.ReplaceAllString(s, "")
	}
	if i := strings.Index(s, "^^"); i >= 0 {
		s = s[:i]
	}
	return trimLangTag(s)
}

// trimLangTag removes a trailing @xx or @xx-yy (lower-case ASCII letters).
func trimLangTag(s string) string {
	lower := func(b byte) bool { return b >= 'a' && b <= 'z' }
	n := len(s)
	if n >= 6 && s[n-6] == '@' && lower(s[n-5]) && lower(s[n-4]) && s[n-3] == '-' && lower(s[n-2]) && lower(s[n-1]) {
		return s[:n-6]
	}
	if n >= 3 && s[n-3] == '@' && lower(s[n-2]) && lower(s[n-1]) {
		return s[:n-3]
	}
	return s
}

// newSPARQLRows prepares t under profile, interning into norm and raw.
func newSPARQLRows(t *table.Table, profile string, norm, raw *sparqlInterner) *sparqlRows {
	out := &sparqlRows{}
	if t == nil || len(t.Rows) == 0 {
		return out
	}
	out.n = len(t.Rows)
	cell := func(r, c int) table.Value {
		if c < len(t.Rows[r]) {
			return t.Rows[r][c]
		}
		return nil
	}
	var idx []int
	for c := range t.Columns {
		if profile == SPARQLProfileStrict || cell(0, c) != nil {
			idx = append(idx, c)
		}
	}
	for _, c := range idx {
		out.cols = append(out.cols, t.Columns[c].Name)
		nc := make([]int32, out.n)
		rc := make([]int32, out.n)
		for r := range t.Rows {
			v := cell(r, c)
			switch {
			case v == nil && profile == SPARQLProfileStrict:
				nc[r], rc[r] = -1, raw.id(sparqlNullRaw)
			case v == nil:
				nc[r], rc[r] = -1, raw.id("")
			case profile == SPARQLProfileStrict:
				s := sparqlLexical(v)
				nc[r], rc[r] = norm.id(s), raw.id(s)
			default:
				s := sparqlLexical(v)
				nc[r], rc[r] = norm.normID(s), raw.id(s)
			}
		}
		out.norm = append(out.norm, nc)
		out.raw = append(out.raw, rc)
	}
	return out
}

// prepareSPARQL prepares gold and pred with shared interners.
func prepareSPARQL(gold, pred *table.Table, profile string) (g, p *sparqlRows) {
	var norm, raw sparqlInterner
	return newSPARQLRows(gold, profile, &norm, &raw), newSPARQLRows(pred, profile, &norm, &raw)
}

// ArityF1 is the Dice coefficient of two column counts, 2·min(a,b)/(a+b),
// with 1 when both are 0.
func ArityF1(pred, gold int) float64 {
	if pred == 0 && gold == 0 {
		return 1
	}
	if pred+gold <= 0 {
		return 0
	}
	return float64(2*min(pred, gold)) / float64(pred+gold)
}

var sparqlProjectionRE = lazyRE(`(?is)SELECT[\s\v\p{Z}\x{1c}-\x{1f}\x{85}]+(.+?)[\s\v\p{Z}\x{1c}-\x{1f}\x{85}]+WHERE`)

// CountSPARQLProjections is BuildingQA's count_sparql_projections: the text
// between the first SELECT and WHERE, split on whitespace outside
// parentheses, without DISTINCT. Its known miscounts are kept on purpose:
// no WHERE keyword gives 0, SELECT * gives 1, REDUCED counts as a column.
func CountSPARQLProjections(q string) int {
	m := sparqlProjectionRE.FindStringSubmatch(q)
	if m == nil {
		return 0
	}
	clause := strings.TrimFunc(m[1], pyIsSpace)
	n, depth := 0, 0
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			if strings.ToUpper(cur.String()) != "DISTINCT" {
				n++
			}
			cur.Reset()
		}
	}
	for _, ch := range clause {
		switch ch {
		case '(':
			depth++
		case ')':
			depth--
		}
		if pyIsSpace(ch) && depth == 0 {
			flush()
		} else {
			cur.WriteRune(ch)
		}
	}
	flush()
	return n
}

// pyIsSpace is Python's str.isspace for one character: unicode.IsSpace
// plus the separators \x1c-\x1f, which Python counts as whitespace.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// sparqlArityOf is the arity of a result under profile: the first row's
// bound variables (BuildingQA) or the declared columns (strict).
func sparqlArityOf(t *table.Table, profile string) int {
	if profile == SPARQLProfileStrict {
		return t.NumCols()
	}
	if t == nil || len(t.Rows) == 0 {
		return 0
	}
	n := 0
	for _, v := range t.Rows[0] {
		if v != nil {
			n++
		}
	}
	return n
}

// sparqlRowF1 is BuildingQA's row-wise F1 from a matched count.
func sparqlRowF1(tp, nPred, nGold int) float64 {
	p, r := 1.0, 1.0
	if nPred > 0 {
		p = float64(tp) / float64(nPred)
	}
	if nGold > 0 {
		r = float64(tp) / float64(nGold)
	}
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// sparqlHarmonic returns 2pr/(p+r), 0 when both are 0.
func sparqlHarmonic(p, r float64) float64 {
	if p+r <= 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// SPARQLMatch holds the entity-set and row-matching F1 of the best column
// mapping and whether the search stopped at its bound.
type SPARQLMatch struct {
	EntitySetF1 float64
	RowMatchF1  float64
	// Truncated is true when the search stopped at the mapping limit; the
	// scores are then those of the best mapping found, a lower bound.
	Truncated bool
}

// sparqlPair caches column-pair statistics.
type sparqlPair struct {
	p, r float64 // set precision and recall of raw values
	ov   int     // multiset overlap of normalised values: a bound on row matches
}

// sparqlSearch is the branch-and-bound search for the mapping (gold column
// i → pred column assign[i]) that maximises (row F1, entity F1)
// lexicographically, BuildingQA's selection rule.
type sparqlSearch struct {
	g, p     *sparqlRows
	k, np    int
	pair     [][]sparqlPair
	order    []int   // gold columns, most constrained first
	cand     [][]int // per gold column, pred columns best first
	prevSame []int   // previous identical pred column, -1 if none
	used     []bool
	assign   []int

	goldKeyIdx map[string]int32
	goldCount  []int32
	remain     []int32
	buf        []byte

	bestTP  int
	bestCol float64
	found   bool

	leaves, nodes       int
	maxLeaves, maxNodes int
	truncated           bool
}

// sparqlSortedUnique returns the distinct values of v, sorted.
func sparqlSortedUnique(v []int32) []int32 {
	s := append([]int32(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sparqlSortedCopy(v []int32) []int32 {
	s := append([]int32(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// sparqlMergeCount counts common elements of two sorted slices, as multisets
// (equal to the set intersection when both are duplicate-free).
func sparqlMergeCount(a, b []int32) int {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

func sparqlEqualInt32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BestSPARQLMapping computes entity-set F1 and row-matching F1 of pred
// against gold after the best column mapping, prepared under profile.
// limit bounds the number of complete mappings scored (≤ 0: the default).
func BestSPARQLMapping(gold, pred *table.Table, profile string, limit int) SPARQLMatch {
	g, p := prepareSPARQL(gold, pred, profile)
	return bestSPARQLMapping(g, p, limit)
}

func bestSPARQLMapping(g, p *sparqlRows, limit int) SPARQLMatch {
	if g.n == 0 || p.n == 0 {
		if g.n == 0 && p.n == 0 {
			return SPARQLMatch{EntitySetF1: 1, RowMatchF1: 1}
		}
		return SPARQLMatch{}
	}
	k, np := len(g.cols), len(p.cols)
	if k == 0 || np < k {
		return SPARQLMatch{}
	}
	if limit <= 0 {
		limit = DefaultSPARQLMappingLimit
	}
	s := &sparqlSearch{g: g, p: p, k: k, np: np, maxLeaves: limit, maxNodes: limit * sparqlNodeLimitFactor}
	s.init()
	if k == np {
		// BuildingQA tries the identity mapping first; it is often right
		// and gives the search a strong incumbent.
		id := make([]int, k)
		for i := range id {
			id[i] = i
		}
		s.leaf(id)
	}
	s.dfs(0, int(^uint(0)>>1), 0, 0)
	return SPARQLMatch{
		EntitySetF1: s.bestCol,
		RowMatchF1:  sparqlRowF1(s.bestTP, p.n, g.n),
		Truncated:   s.truncated,
	}
}

func (s *sparqlSearch) init() {
	g, p := s.g, s.p
	gRaw := make([][]int32, s.k)
	gNorm := make([][]int32, s.k)
	for i := range s.k {
		gRaw[i] = sparqlSortedUnique(g.raw[i])
		gNorm[i] = sparqlSortedCopy(g.norm[i])
	}
	pRaw := make([][]int32, s.np)
	pNorm := make([][]int32, s.np)
	for j := range s.np {
		pRaw[j] = sparqlSortedUnique(p.raw[j])
		pNorm[j] = sparqlSortedCopy(p.norm[j])
	}
	s.pair = make([][]sparqlPair, s.k)
	for i := range s.k {
		s.pair[i] = make([]sparqlPair, s.np)
		for j := range s.np {
			tp := sparqlMergeCount(gRaw[i], pRaw[j])
			pr := sparqlPair{p: 1, r: 1, ov: sparqlMergeCount(gNorm[i], pNorm[j])}
			if len(pRaw[j]) > 0 {
				pr.p = float64(tp) / float64(len(pRaw[j]))
			}
			if len(gRaw[i]) > 0 {
				pr.r = float64(tp) / float64(len(gRaw[i]))
			}
			s.pair[i][j] = pr
		}
	}
	// Identical pred columns are interchangeable: use them in index order.
	s.prevSame = make([]int, s.np)
	for j := range s.np {
		s.prevSame[j] = -1
		for j2 := j - 1; j2 >= 0; j2-- {
			if sparqlEqualInt32(p.norm[j], p.norm[j2]) && sparqlEqualInt32(p.raw[j], p.raw[j2]) {
				s.prevSame[j] = j2
				break
			}
		}
	}
	s.cand = make([][]int, s.k)
	maxOv := make([]int, s.k)
	for i := range s.k {
		c := make([]int, s.np)
		for j := range c {
			c[j] = j
		}
		pi := s.pair[i]
		sort.SliceStable(c, func(a, b int) bool {
			x, y := pi[c[a]], pi[c[b]]
			if x.ov != y.ov {
				return x.ov > y.ov
			}
			return x.p+x.r > y.p+y.r
		})
		s.cand[i] = c
		maxOv[i] = pi[c[0]].ov
	}
	s.order = make([]int, s.k)
	for i := range s.order {
		s.order[i] = i
	}
	sort.SliceStable(s.order, func(a, b int) bool { return maxOv[s.order[a]] < maxOv[s.order[b]] })
	s.used = make([]bool, s.np)
	s.assign = make([]int, s.k)

	// Gold row keys do not depend on the mapping: count them once.
	s.goldKeyIdx = map[string]int32{}
	s.buf = make([]byte, 0, 4*s.k)
	for r := range g.n {
		key := s.key(func(i int) int32 { return g.norm[i][r] })
		idx, ok := s.goldKeyIdx[string(key)]
		if !ok {
			idx = int32(len(s.goldCount))
			s.goldKeyIdx[string(key)] = idx
			s.goldCount = append(s.goldCount, 0)
		}
		s.goldCount[idx]++
	}
	s.remain = make([]int32, len(s.goldCount))
}

// key encodes the k values of one row, in gold column order, into s.buf.
func (s *sparqlSearch) key(val func(i int) int32) []byte {
	b := s.buf[:0]
	for i := range s.k {
		v := uint32(val(i))
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	s.buf = b
	return b
}

// rowTP counts one-to-one row matches under mapping m: the multiset
// intersection of gold and mapped pred row keys (greedy first-match
// matching on an equivalence relation finds exactly this many).
func (s *sparqlSearch) rowTP(m []int) int {
	copy(s.remain, s.goldCount)
	tp := 0
	for r := range s.p.n {
		key := s.key(func(i int) int32 { return s.p.norm[m[i]][r] })
		if idx, ok := s.goldKeyIdx[string(key)]; ok && s.remain[idx] > 0 {
			s.remain[idx]--
			tp++
		}
	}
	return tp
}

func (s *sparqlSearch) colF1(m []int) float64 {
	var sp, sr float64
	for i, j := range m {
		sp += s.pair[i][j].p
		sr += s.pair[i][j].r
	}
	return sparqlHarmonic(sp/float64(s.k), sr/float64(s.k))
}

// better reports whether (tp, col) beats the incumbent.
func (s *sparqlSearch) better(tp int, col float64) bool {
	return !s.found || tp > s.bestTP || (tp == s.bestTP && col > s.bestCol)
}

// leaf scores one complete mapping.
func (s *sparqlSearch) leaf(m []int) {
	col := s.colF1(m)
	ub := s.g.n
	for i, j := range m {
		ub = min(ub, s.pair[i][j].ov)
	}
	if !s.better(ub, col) {
		return
	}
	s.leaves++
	tp := s.rowTP(m)
	if s.better(tp, col) {
		s.bestTP, s.bestCol, s.found = tp, col, true
	}
}

// done reports whether nothing can beat the incumbent: every row matched
// and every column set identical.
func (s *sparqlSearch) done() bool {
	return s.found && s.bestTP == s.g.n && s.bestTP == s.p.n && s.bestCol == 1
}

// dfs assigns gold column s.order[depth]; tpMin is the smallest pair
// overlap so far, sp and sr the precision and recall sums so far.
func (s *sparqlSearch) dfs(depth, tpMin int, sp, sr float64) {
	if s.truncated || s.done() {
		return
	}
	s.nodes++
	if s.leaves >= s.maxLeaves || s.nodes >= s.maxNodes {
		s.truncated = true
		return
	}
	if depth == s.k {
		s.leaf(s.assign)
		return
	}
	// Bound: unassigned gold columns take their best unused pred column.
	ub, bp, br := tpMin, sp, sr
	for d := depth; d < s.k; d++ {
		i := s.order[d]
		bo, mp, mr := -1, 0.0, 0.0
		for j := range s.np {
			if s.used[j] {
				continue
			}
			pr := s.pair[i][j]
			bo = max(bo, pr.ov)
			mp = max(mp, pr.p)
			mr = max(mr, pr.r)
		}
		ub = min(ub, bo)
		bp += mp
		br += mr
	}
	ub = min(ub, s.g.n, s.p.n)
	if !s.better(ub, sparqlHarmonic(bp/float64(s.k), br/float64(s.k))) {
		return
	}
	i := s.order[depth]
	for _, j := range s.cand[i] {
		if s.used[j] || (s.prevSame[j] >= 0 && !s.used[s.prevSame[j]]) {
			continue
		}
		pr := s.pair[i][j]
		s.used[j] = true
		s.assign[i] = j
		s.dfs(depth+1, min(tpMin, pr.ov), sp+pr.p, sr+pr.r)
		s.used[j] = false
		if s.truncated || s.done() {
			return
		}
	}
}

// ExactMatchF1 is BuildingQA's get_exact_match_f1: same column count
// required, columns mapped by position, then row F1. Both empty → 1.
func ExactMatchF1(gold, pred *table.Table, profile string) float64 {
	g, p := prepareSPARQL(gold, pred, profile)
	return exactMatchF1(g, p)
}

func exactMatchF1(g, p *sparqlRows) float64 {
	if g.n == 0 && p.n == 0 {
		return 1
	}
	if g.n == 0 || p.n == 0 || len(g.cols) != len(p.cols) || len(g.cols) == 0 {
		return 0
	}
	s := &sparqlSearch{g: g, p: p, k: len(g.cols), np: len(p.cols)}
	s.init()
	id := make([]int, s.k)
	for i := range id {
		id[i] = i
	}
	return sparqlRowF1(s.rowTP(id), p.n, g.n)
}

// sparqlOpts are the options shared by the SPARQL result metrics.
type sparqlOpts struct {
	name      string
	profile   string
	limit     int
	limitErr  bool
	fromQuery bool
}

func parseSPARQLOpts(name string, o Options) (sparqlOpts, error) {
	so := sparqlOpts{name: name}
	var err error
	if so.profile, err = o.String("profile", SPARQLProfileBuildingQA); err != nil {
		return so, err
	}
	if so.profile != SPARQLProfileBuildingQA && so.profile != SPARQLProfileStrict {
		return so, &ChoiceError{Option: "profile", Value: so.profile, What: "a SPARQL profile", Valid: []string{SPARQLProfileBuildingQA, SPARQLProfileStrict}}
	}
	if so.limit, err = o.Int("max_mappings", DefaultSPARQLMappingLimit); err != nil {
		return so, err
	}
	if so.limit <= 0 {
		return so, fmt.Errorf("option \"max_mappings\" must be positive, got %d", so.limit)
	}
	onLimit, err := o.String("on_search_limit", "best")
	if err != nil {
		return so, err
	}
	switch onLimit {
	case "best":
	case "error":
		so.limitErr = true
	default:
		return so, &ChoiceError{Option: "on_search_limit", Value: onLimit, What: "an on_search_limit", Valid: []string{"best", "error"}}
	}
	// BuildingQA's agent logs arity from the two query strings
	// (get_arity_matching_f1 on the SPARQL texts): the buildingqa profile
	// defaults to from = "query"; from = "result" stays available.
	defFrom := "result"
	if so.profile == SPARQLProfileBuildingQA {
		defFrom = "query"
	}
	from, err := o.String("from", defFrom)
	if err != nil {
		return so, err
	}
	switch from {
	case "result":
	case "query":
		so.fromQuery = true
	default:
		return so, &ChoiceError{Option: "from", Value: from, What: "a from", Valid: []string{"result", "query"}}
	}
	return so, nil
}

// sparqlResults returns the gold and predicted tables of a record. ok is
// false when the prediction did not run (BuildingQA scores that 0); err is
// set when the record cannot be scored at all.
func sparqlResults(rec *item.Record) (gold, pred *table.Table, ok bool, err error) {
	if rec == nil {
		return nil, nil, false, errors.New("no record")
	}
	if rec.GoldError != "" {
		return nil, nil, false, fmt.Errorf("gold query failed: %s", rec.GoldError)
	}
	if rec.GoldResult == nil {
		return nil, nil, false, errors.New("no gold result")
	}
	a := rec.Final()
	if a == nil {
		return nil, nil, false, errors.New("no attempt to score")
	}
	if a.Failed() || a.Result == nil {
		return rec.GoldResult, nil, false, nil
	}
	return rec.GoldResult, a.Result, true, nil
}

type sparqlMetric struct {
	info Info
	opts sparqlOpts
	kind string // arity, entity, row, exact
}

func (m *sparqlMetric) Info() Info { return m.info }

func (m *sparqlMetric) Score(_ context.Context, in Input) item.Score {
	name := m.info.Name
	if m.kind == "arity" && m.opts.fromQuery {
		// BuildingQA scores every metric 0 unless both queries ran; the
		// strict profile reads the query texts whatever happened.
		if m.opts.profile == SPARQLProfileBuildingQA {
			if _, _, ok, err := sparqlResults(in.Record); err != nil {
				return Failed(name, err)
			} else if !ok {
				return item.Score{Name: name, Value: 0}
			}
		}
		a := in.Record.Final()
		if a == nil {
			return Failed(name, errors.New("no attempt to score"))
		}
		return item.Score{Name: name, Value: ArityF1(CountSPARQLProjections(a.Query), CountSPARQLProjections(in.Record.Item.Gold))}
	}
	gold, pred, ok, err := sparqlResults(in.Record)
	if err != nil {
		return Failed(name, err)
	}
	if !ok {
		return item.Score{Name: name, Value: 0}
	}
	switch m.kind {
	case "arity":
		return item.Score{Name: name, Value: ArityF1(sparqlArityOf(pred, m.opts.profile), sparqlArityOf(gold, m.opts.profile))}
	case "exact":
		return item.Score{Name: name, Value: ExactMatchF1(gold, pred, m.opts.profile)}
	}
	r := BestSPARQLMapping(gold, pred, m.opts.profile, m.opts.limit)
	if r.Truncated && m.opts.limitErr {
		return Failed(name, errSPARQLSearchLimit)
	}
	v := r.RowMatchF1
	if m.kind == "entity" {
		v = r.EntitySetF1
	}
	return item.Score{Name: name, Value: v}
}

func registerSPARQL(info Info, kind string, opts []string) {
	Register(Def{
		Info:    info,
		Options: opts,
		NewItem: func(o Options) (ItemMetric, error) {
			so, err := parseSPARQLOpts(info.Name, o)
			if err != nil {
				return nil, err
			}
			return &sparqlMetric{info: info, opts: so, kind: kind}, nil
		},
	})
}

func init() {
	const doc = "*Understanding the SPARQL Evaluation Metrics*, "
	const code = "; INFERLab/BuildingQA metrics.py"
	const inputs = "Record.Final().Result vs Record.GoldResult"
	registerSPARQL(Info{
		Name:        "arity_f1",
		Description: "Dice F1 of the predicted and gold column counts (from results, or from the SELECT clauses with from = \"query\").",
		Reference:   doc + "“1. Arity Matching F1”" + code,
		Inputs:      inputs + " (from = \"query\": Record.Final().Query vs Record.Item.Gold)",
		Range:       "[0,1]",
	}, "arity", []string{"profile", "from"})
	registerSPARQL(Info{
		Name:        "entity_set_f1",
		Description: "F1 of per-column value sets after the best column mapping (mapping chosen by row F1, then by this F1).",
		Reference:   doc + "“2. Entity Set F1”" + code,
		Inputs:      inputs,
		Range:       "[0,1]",
	}, "entity", []string{"profile", "max_mappings", "on_search_limit"})
	registerSPARQL(Info{
		Name:        "row_match_f1",
		Description: "F1 of one-to-one row matches after the best column mapping.",
		Reference:   doc + "“3. Row-Matching F1”" + code,
		Inputs:      inputs,
		Range:       "[0,1]",
	}, "row", []string{"profile", "max_mappings", "on_search_limit"})
	registerSPARQL(Info{
		Name:        "exact_match_f1",
		Description: "F1 of one-to-one row matches with columns mapped by position (same width required).",
		Reference:   doc + "“4. Exact-Match F1”" + code,
		Inputs:      inputs,
		Range:       "[0,1]",
	}, "exact", []string{"profile"})
}
