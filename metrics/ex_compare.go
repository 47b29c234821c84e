package metrics

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/evalflow/evalflow/table"
)

// Semantics says whether duplicate rows count when two results are compared.
type Semantics uint8

const (
	// Bag compares rows as multisets: duplicates must match in number.
	Bag Semantics = iota
	// Set compares rows as sets: duplicates are dropped first (the first
	// occurrence keeps its place).
	Set
)

// String returns "bag" or "set".
func (s Semantics) String() string {
	if s == Set {
		return "set"
	}
	return "bag"
}

// Tolerance is how far apart two numbers may be and still compare equal when
// at least one of them is a float: |a−b| ≤ Abs or |a−b| ≤ Rel·max(|a|,|b|).
// The zero value compares exactly (Python ==: 1 == 1.0, 0.1+0.2 != 0.3).
// Two integers always compare exactly.
type Tolerance struct {
	Abs, Rel float64
}

// Exact reports whether t is the zero tolerance.
func (t Tolerance) Exact() bool { return t.Abs == 0 && t.Rel == 0 }

// DefaultMaxPermutations bounds the column-permutation search of
// CompareTables: at most this many candidate column mappings are checked
// row by row. Candidates are first pruned by column signatures (the
// multiset, set or sequence of a column's values must be equal for a gold
// column and the prediction column mapped to it) and identical prediction
// columns are treated as one, so real results almost always have one or two
// candidates; the bound only stops adversarial tables (many distinct columns
// with identical value multisets) from taking factorial time.
const DefaultMaxPermutations = 1000

// CompareOptions selects how CompareTables compares two results. The zero
// value is bag semantics, order-insensitive, column order significant, exact
// numbers.
type CompareOptions struct {
	Semantics Semantics
	// Ordered makes row order significant.
	Ordered bool
	// Permute accepts any one-to-one mapping of prediction columns to gold
	// columns (column names are never compared).
	Permute bool
	Tolerance
	// PythonQuickReject first applies test-suite's quick_rej, which sorts
	// each row's values by str(x)+str(type(x)) before comparing: rows that
	// hold 1 on one side and 1.0 on the other can then sort differently and
	// be rejected although == holds. Only the testsuite profiles set it.
	PythonQuickReject bool
	// MaxPermutations bounds the permutation search; 0 means
	// DefaultMaxPermutations.
	MaxPermutations int
}

// Verdict is the outcome of CompareTables: whether the results match, and
// when they do not, a short reason (for reports and debugging).
type Verdict struct {
	Match  bool
	Reason string
}

// CompareTables reports whether pred is an acceptable result for gold under
// o. Rules, in order:
//
//  1. Both results without rows match, whatever their columns.
//  2. With Set semantics, duplicate rows are dropped from both sides.
//  3. Row counts must be equal, then column counts.
//  4. With PythonQuickReject, test-suite's quick_rej must pass.
//  5. Some column mapping (the identity unless Permute) must make the rows
//     equal: as lists when Ordered, as multisets otherwise.
//
// Values compare as in Python: NULL equals NULL, 1 equals 1.0, '1' differs
// from 1, text differs from bytes, and booleans are the integers 0 and 1.
// NaN equals NaN (Python would compare NaN objects by identity). Neither
// table is modified. Nil tables have no rows.
func CompareTables(gold, pred *table.Table, o CompareOptions) Verdict {
	return compareTables(nil, gold, pred, o)
}

// compareTables is CompareTables with the results' keys from rk.
func compareTables(rk *ResultKeys, gold, pred *table.Table, o CompareOptions) Verdict {
	if gold.NumRows() == 0 && pred.NumRows() == 0 {
		return Verdict{Match: true, Reason: "both results are empty"}
	}
	// A result whose rows differ in length is not a table (no engine
	// gives one, and the stage cache's decoder refuses one); the
	// comparison below reads a row's cells by the first row's width.
	for _, t := range []struct {
		name string
		t    *table.Table
	}{{"gold", gold}, {"prediction", pred}} {
		if r := raggedRow(t.t); r > 0 {
			return Verdict{Reason: fmt.Sprintf("the %s result's row %d has %d values, its first row %d", t.name, r+1, len(t.t.Rows[r]), len(t.t.Rows[0]))}
		}
	}
	if o.Semantics == Bag {
		// Rows are kept as they are: their counts decide before any key
		// is built (most mismatches of real predictions).
		if v, ok := exShape(rowsOf(gold), rowsOf(pred)); !ok {
			return v
		}
	}
	c := newExComparison(rk, gold, pred, o)
	return c.run()
}

// rowsOf is t's rows, none for a nil table.
func rowsOf(t *table.Table) [][]table.Value {
	if t == nil {
		return nil
	}
	return t.Rows
}

// raggedRow is the index of t's first row whose length differs from its
// first row's, 0 when every row has that length.
func raggedRow(t *table.Table) int {
	if t == nil {
		return 0
	}
	for r, row := range t.Rows {
		if len(row) != len(t.Rows[0]) {
			return r
		}
	}
	return 0
}

// exComparison holds the pre-computed keys of one comparison.
type exComparison struct {
	o    CompareOptions
	g, p exKeyed
	ncol int
	// The unordered exact check's gold rows: each distinct row key
	// (identity column order) and how many rows have it, goldCount[goldRow[key]].
	goldRow   map[string]int
	goldCount []int
}

func newExComparison(rk *ResultKeys, gold, pred *table.Table, o CompareOptions) *exComparison {
	c := &exComparison{o: o, ncol: gold.NumCols()}
	if o.MaxPermutations <= 0 {
		c.o.MaxPermutations = DefaultMaxPermutations
	}
	if o.Semantics == Set {
		c.g, c.p = rk.distinct(gold), rk.distinct(pred)
	} else {
		c.g, c.p = rk.keyed(gold), rk.keyed(pred)
	}
	return c
}

// ResultKeys holds the keys of the results one record's metrics compare
// (Input.Keys), each result keyed once, and de-duplicated once, however
// many comparisons read it. A result is known by its address: results are
// not changed once read. A nil *ResultKeys keys every time. Safe for
// concurrent use.
type ResultKeys struct {
	mu sync.Mutex
	m  map[*table.Table]*keyedResult
}

type keyedResult struct {
	all      exKeyed
	distinct *exKeyed // nil until asked for
}

func (rk *ResultKeys) entry(t *table.Table) *keyedResult {
	if rk.m == nil {
		rk.m = map[*table.Table]*keyedResult{}
	}
	e := rk.m[t]
	if e == nil {
		e = &keyedResult{all: exKeyRows(t)}
		rk.m[t] = e
	}
	return e
}

// keyed is exKeyRows(t), remembered.
func (rk *ResultKeys) keyed(t *table.Table) exKeyed {
	if rk == nil || t == nil {
		return exKeyRows(t)
	}
	rk.mu.Lock()
	defer rk.mu.Unlock()
	return rk.entry(t).all
}

// distinct is exKeyRows(t).dedupe(), remembered.
func (rk *ResultKeys) distinct(t *table.Table) exKeyed {
	if rk == nil || t == nil {
		return exKeyRows(t).dedupe()
	}
	rk.mu.Lock()
	defer rk.mu.Unlock()
	e := rk.entry(t)
	if e.distinct == nil {
		d := e.all.dedupe()
		e.distinct = &d
	}
	return *e.distinct
}

// exShape is the verdict the row and column counts of two results alone
// give (rule 3 of CompareTables): ok is false when they differ.
func exShape(g, p [][]table.Value) (v Verdict, ok bool) {
	ng, np := len(g), len(p)
	gc, pc := 0, 0
	if ng > 0 && np > 0 {
		gc, pc = len(g[0]), len(p[0])
	}
	if ng != np {
		return Verdict{Reason: fmt.Sprintf("row counts differ: gold %d, prediction %d", ng, np)}, false
	}
	if gc != pc {
		return Verdict{Reason: fmt.Sprintf("column counts differ: gold %d, prediction %d", gc, pc)}, false
	}
	return Verdict{}, true
}

// exKeyed is a table's rows with every cell's exact key (exValueKey), all
// in one string: building them costs one allocation a table instead of
// one a cell (most of a comparison's time when results have hundreds of
// rows), and a row's key — its cells' keys one after the other, which
// identify the row because every key is self-delimiting — is a substring
// of it too, so counting or de-duplicating rows allocates no key.
type exKeyed struct {
	rows  [][]table.Value
	s     string
	cells []int // cell c's key is s[cells[c]:cells[c+1]]
	first []int // row r's cells are first[r] … first[r]+len(rows[r])-1
}

// exKeyRows keys t's rows (none for a nil table).
func exKeyRows(t *table.Table) exKeyed {
	if t == nil || len(t.Rows) == 0 {
		return exKeyed{}
	}
	n := 0
	for _, row := range t.Rows {
		n += len(row)
	}
	k := exKeyed{rows: t.Rows, cells: make([]int, 0, n+1), first: make([]int, len(t.Rows))}
	buf := make([]byte, 0, 10*n)
	for r, row := range t.Rows {
		k.first[r] = len(k.cells)
		for _, v := range row {
			k.cells = append(k.cells, len(buf))
			buf = exValueKey(buf, v)
		}
	}
	k.cells = append(k.cells, len(buf))
	k.s = string(buf)
	return k
}

// cell is the key of row r's j-th cell.
func (k *exKeyed) cell(r, j int) string {
	c := k.first[r] + j
	return k.s[k.cells[c]:k.cells[c+1]]
}

// row is the key of row r: its cells' keys in order.
func (k *exKeyed) row(r int) string {
	c := k.first[r]
	return k.s[k.cells[c]:k.cells[c+len(k.rows[r])]]
}

// dedupe drops repeated rows (equal keys), keeping first occurrences. A
// table without repeated rows comes back as it is.
func (k exKeyed) dedupe() exKeyed {
	n := len(k.rows)
	var seen map[string]struct{}
	if n > dedupeScan {
		seen = make(map[string]struct{}, n)
	}
	// repeated reports whether row r's key is one of an earlier row's:
	// compared with each of them in a small table, looked up otherwise.
	repeated := func(r int, rk string) bool {
		if seen == nil {
			for q := range r {
				if k.row(q) == rk {
					return true
				}
			}
			return false
		}
		before := len(seen)
		seen[rk] = struct{}{} // one lookup: the map grows unless rk was in it
		return len(seen) == before
	}
	var out *exKeyed // nil until the first repeated row
	for r := range n {
		if !repeated(r, k.row(r)) {
			if out != nil {
				out.rows = append(out.rows, k.rows[r])
				out.first = append(out.first, k.first[r])
			}
			continue
		}
		if out == nil {
			out = &exKeyed{s: k.s, cells: k.cells, rows: make([][]table.Value, r, n-1), first: make([]int, r, n-1)}
			copy(out.rows, k.rows[:r])
			copy(out.first, k.first[:r])
		}
	}
	if out == nil {
		return k
	}
	return *out
}

// dedupeScan is the most rows dedupe compares pairwise instead of with a
// map.
const dedupeScan = 16

func (c *exComparison) run() Verdict {
	if v, ok := exShape(c.g.rows, c.p.rows); !ok {
		return v
	}
	ng := len(c.g.rows)
	c.ncol = len(c.g.rows[0])
	if c.o.PythonQuickReject && !exQuickRejectKeyed(&c.g, &c.p, c.o.Ordered) {
		return Verdict{Reason: "rows differ (test-suite quick_rej)"}
	}
	cands := c.candidates()
	for i, cs := range cands {
		if len(cs) == 0 {
			return Verdict{Reason: fmt.Sprintf("no prediction column has the values of gold column %d", i+1)}
		}
	}
	if !c.o.Exact() {
		// no precomputed exact multiset
	} else if !c.o.Ordered {
		c.goldRow = make(map[string]int, ng)
		for r := range ng {
			i, seen := c.goldRow[c.g.row(r)]
			if !seen {
				i = len(c.goldCount)
				c.goldRow[c.g.row(r)] = i
				c.goldCount = append(c.goldCount, 0)
			}
			c.goldCount[i]++
		}
	}
	// Pred columns that are identical value sequences are interchangeable:
	// only the first unused one of each class is tried.
	class := make([]int, c.ncol)
	for j := range class {
		class[j] = j
		for j2 := 0; j2 < j; j2++ {
			if class[j2] == j2 && c.sameColumn(j, j2) {
				class[j] = j2
				break
			}
		}
	}
	// Most constrained gold columns first.
	order := make([]int, c.ncol)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(cands[order[a]]) < len(cands[order[b]]) })

	perm := make([]int, c.ncol)
	used := make([]bool, c.ncol)
	tried := 0
	stopped := false
	var search func(d int) bool
	search = func(d int) bool {
		if d == c.ncol {
			if tried >= c.o.MaxPermutations {
				stopped = true
				return false
			}
			tried++
			return c.check(perm)
		}
		gi := order[d]
		for _, j := range cands[gi] {
			if used[j] {
				continue
			}
			// Skip j if an earlier member of its class is still unused.
			skip := false
			for j2 := 0; j2 < j; j2++ {
				if class[j2] == class[j] && !used[j2] {
					skip = true
					break
				}
			}
			if skip {
				continue
			}
			used[j], perm[gi] = true, j
			if search(d + 1) {
				return true
			}
			used[j] = false
			if stopped {
				return false
			}
		}
		return false
	}
	if search(0) {
		return Verdict{Match: true}
	}
	if stopped {
		return Verdict{Reason: fmt.Sprintf("column permutation search stopped after %d candidate mappings", c.o.MaxPermutations)}
	}
	if c.o.Ordered {
		return Verdict{Reason: "rows differ (row order matters)"}
	}
	return Verdict{Reason: "rows differ"}
}

func (c *exComparison) sameColumn(a, b int) bool {
	for r := range c.p.rows {
		if c.p.cell(r, a) != c.p.cell(r, b) {
			return false
		}
	}
	return true
}

// candidates returns, for each gold column, the prediction columns whose
// signature is compatible: the identity only without Permute.
func (c *exComparison) candidates() [][]int {
	gs := make([]exSig, c.ncol)
	ps := make([]exSig, c.ncol)
	for j := 0; j < c.ncol; j++ {
		gs[j] = c.signature(&c.g, j)
		ps[j] = c.signature(&c.p, j)
	}
	out := make([][]int, c.ncol)
	for i := range out {
		if !c.o.Permute {
			if c.sigMatch(gs[i], ps[i], i, i) {
				out[i] = []int{i}
			}
			continue
		}
		for j := 0; j < c.ncol; j++ {
			if c.sigMatch(gs[i], ps[j], i, j) {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// signature of column j: a hash of its value keys in row order (Ordered)
// or of their multiset (unordered: sums of the keys' hashes, which no
// order changes; rows are already de-duplicated for Set), in two lanes of
// 64 bits hashed with independent seeds. Equal columns have equal
// signatures, so comparing signatures never prunes a valid mapping. Two
// different columns collide with a chance of about 2^-(128-2k) when their
// multiplicities differ by multiples of 2^k (a sum of hashes modulo 2^64
// loses k bits then): the extra candidate is refused by check, which
// compares every row, but it can take places of the search's bound
// (MaxPermutations) and change which reason a mismatch gets. With a
// tolerance, numbers are masked and compared separately by sigMatch.
func (c *exComparison) signature(k *exKeyed, j int) exSig {
	var sig exSig
	for r := range k.rows {
		key := k.cell(r, j)
		if !c.o.Exact() && exIsNumber(k.rows[r][j]) {
			key = "#"
		}
		h0, h1 := maphash.String(exSigSeeds[0], key), maphash.String(exSigSeeds[1], key)
		if c.o.Ordered {
			sig[0] = sig[0]*0x9E3779B97F4A7C15 + h0
			sig[1] = sig[1]*0xC2B2AE3D27D4EB4F + h1
		} else {
			sig[0] += h0
			sig[1] += h1
		}
	}
	return sig
}

// exSig is a column signature (signature).
type exSig [2]uint64

// exSigSeeds seed the two lanes of the column signatures of one process.
var exSigSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// sigMatch reports whether gold column gi may map to prediction column pj,
// given their signatures.
func (c *exComparison) sigMatch(gs, ps exSig, gi, pj int) bool {
	gRows, pRows := c.g.rows, c.p.rows
	if gs != ps {
		return false
	}
	if c.o.Exact() {
		return true
	}
	// Numbers of the two columns, in order or sorted, must pair up within
	// tolerance. For sorted one-dimensional values pairing in sorted order
	// is optimal, so this never prunes a valid mapping.
	var g, p []float64
	for r := range gRows {
		if exIsNumber(gRows[r][gi]) {
			g = append(g, exFloat(gRows[r][gi]))
		}
		if exIsNumber(pRows[r][pj]) {
			p = append(p, exFloat(pRows[r][pj]))
		}
	}
	if len(g) != len(p) {
		return false
	}
	if !c.o.Ordered {
		slices.Sort(g)
		slices.Sort(p)
	}
	for k := range g {
		if !c.o.Tolerance.floatsEqual(g[k], p[k]) {
			return false
		}
	}
	return true
}

// check verifies one column mapping: gold column i ↔ prediction column perm[i].
func (c *exComparison) check(perm []int) bool {
	if !c.o.Exact() {
		return c.checkTolerant(perm)
	}
	n := len(c.g.rows)
	if c.o.Ordered {
		for r := 0; r < n; r++ {
			for i, j := range perm {
				if c.g.cell(r, i) != c.p.cell(r, j) {
					return false
				}
			}
		}
		return true
	}
	identity := true
	for i, j := range perm {
		identity = identity && i == j
	}
	// Each prediction row takes one of the gold rows with its key: the
	// key is looked up, never stored, so a permuted row's key built in b
	// is not copied into a string.
	left := slices.Clone(c.goldCount)
	var b []byte
	for r := 0; r < n; r++ {
		var i int
		var ok bool
		if identity {
			i, ok = c.goldRow[c.p.row(r)]
		} else {
			b = b[:0]
			for _, j := range perm {
				b = append(b, c.p.cell(r, j)...)
			}
			i, ok = c.goldRow[string(b)]
		}
		if !ok || left[i] == 0 {
			return false
		}
		left[i]--
	}
	return true
}

// checkTolerant is check with a float tolerance. Ordered: row by row.
// Unordered: rows are bucketed by their non-numeric cells; within a bucket
// rows are paired in sorted order, and when that fails a maximum bipartite
// matching decides (buckets of at most exMatchingLimit rows; larger ones are
// judged by the sorted pairing alone).
func (c *exComparison) checkTolerant(perm []int) bool {
	n := len(c.g.rows)
	pRow := func(r int) []table.Value {
		out := make([]table.Value, len(perm))
		for i, j := range perm {
			out[i] = c.p.rows[r][j]
		}
		return out
	}
	if c.o.Ordered {
		for r := 0; r < n; r++ {
			if !c.rowsEqual(c.g.rows[r], pRow(r)) {
				return false
			}
		}
		return true
	}
	type bucket struct{ g, p [][]table.Value }
	buckets := map[string]*bucket{}
	coarse := func(row []table.Value) string {
		var buf []byte
		for _, v := range row {
			if exIsNumber(v) {
				buf = append(buf, '#')
			} else {
				buf = exValueKey(buf, v)
			}
		}
		return string(buf)
	}
	for r := 0; r < n; r++ {
		k := coarse(c.g.rows[r])
		if buckets[k] == nil {
			buckets[k] = &bucket{}
		}
		buckets[k].g = append(buckets[k].g, c.g.rows[r])
		pr := pRow(r)
		k = coarse(pr)
		if buckets[k] == nil {
			buckets[k] = &bucket{}
		}
		buckets[k].p = append(buckets[k].p, pr)
	}
	for _, bk := range buckets {
		if len(bk.g) != len(bk.p) {
			return false
		}
		sortRows := func(rows [][]table.Value) {
			sort.SliceStable(rows, func(a, b int) bool { return exRowLess(rows[a], rows[b]) })
		}
		sortRows(bk.g)
		sortRows(bk.p)
		ok := true
		for k := range bk.g {
			if !c.rowsEqual(bk.g[k], bk.p[k]) {
				ok = false
				break
			}
		}
		if ok {
			continue
		}
		if len(bk.g) > exMatchingLimit || !exPerfectMatching(len(bk.g), func(a, b int) bool { return c.rowsEqual(bk.g[a], bk.p[b]) }) {
			return false
		}
	}
	return true
}

// exMatchingLimit bounds the bipartite matching of checkTolerant (O(n³)).
const exMatchingLimit = 256

// exPerfectMatching reports whether a perfect matching exists in the n×n
// bipartite graph given by edge (Kuhn's augmenting paths).
func exPerfectMatching(n int, edge func(a, b int) bool) bool {
	match := make([]int, n) // pred index → gold index
	for i := range match {
		match[i] = -1
	}
	var try func(a int, seen []bool) bool
	try = func(a int, seen []bool) bool {
		for b := 0; b < n; b++ {
			if seen[b] || !edge(a, b) {
				continue
			}
			seen[b] = true
			if match[b] < 0 || try(match[b], seen) {
				match[b] = a
				return true
			}
		}
		return false
	}
	for a := 0; a < n; a++ {
		if !try(a, make([]bool, n)) {
			return false
		}
	}
	return true
}

func (c *exComparison) rowsEqual(a, b []table.Value) bool {
	for i := range a {
		if !ValuesEqual(a[i], b[i], c.o.Tolerance) {
			return false
		}
	}
	return true
}

// exRowLess orders rows for tolerant pairing: numbers numerically, other
// values by their exact keys.
func exRowLess(a, b []table.Value) bool {
	for i := range a {
		an, bn := exIsNumber(a[i]), exIsNumber(b[i])
		switch {
		case an && bn:
			x, y := exFloat(a[i]), exFloat(b[i])
			if x != y {
				return x < y
			}
		case an != bn:
			return an
		default:
			x, y := string(exValueKey(nil, a[i])), string(exValueKey(nil, b[i]))
			if x != y {
				return x < y
			}
		}
	}
	return false
}

// ValuesEqual compares two cells with Python's == (see CompareTables) and,
// when at least one is a float, within t.
func ValuesEqual(a, b table.Value, t Tolerance) bool {
	if !t.Exact() && exIsNumber(a) && exIsNumber(b) {
		_, af := a.(float64)
		_, bf := b.(float64)
		if af || bf {
			return t.floatsEqual(exFloat(a), exFloat(b))
		}
	}
	return string(exValueKey(nil, a)) == string(exValueKey(nil, b))
}

func (t Tolerance) floatsEqual(x, y float64) bool {
	if x == y || math.IsNaN(x) && math.IsNaN(y) {
		return true
	}
	d := math.Abs(x - y)
	return d <= t.Abs || d <= t.Rel*math.Max(math.Abs(x), math.Abs(y))
}

func exIsNumber(v table.Value) bool {
	switch v.(type) {
	case int64, float64, bool:
		return true
	}
	return false
}

func exFloat(v table.Value) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

// exValueKey appends an encoding of v such that two values have equal keys
// exactly when Python's == holds (with NaN equal to NaN): numbers that are
// whole and fit an int64 encode as that integer, so 1, 1.0, -0.0/0 and True/1
// share keys. Every encoding is self-delimiting, so concatenated keys
// identify rows.
func exValueKey(buf []byte, v table.Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, 'n')
	case bool:
		if x {
			return exIntKey(buf, 1)
		}
		return exIntKey(buf, 0)
	case int64:
		return exIntKey(buf, x)
	case float64:
		if math.IsNaN(x) {
			return append(buf, 'N')
		}
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return exIntKey(buf, int64(x))
		}
		buf = append(buf, 'f')
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(x))
	case string:
		buf = append(buf, 's')
		buf = binary.AppendUvarint(buf, uint64(len(x)))
		return append(buf, x...)
	case []byte:
		buf = append(buf, 'b')
		buf = binary.AppendUvarint(buf, uint64(len(x)))
		return append(buf, x...)
	default:
		s := fmt.Sprint(x)
		buf = append(buf, 'o')
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		return append(buf, s...)
	}
}

func exIntKey(buf []byte, i int64) []byte {
	buf = append(buf, 'i')
	return binary.BigEndian.AppendUint64(buf, uint64(i))
}
