package metrics

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/evalflow/evalflow/table"
)

// unorderedRowsReference is unorderedRows as it was written first, after
// test-suite's quick_rej: the reference the faster one must agree with.
func unorderedRowsReference(rows [][]table.Value) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		type cell struct {
			sortKey string
			v       table.Value
		}
		cells := make([]cell, len(row))
		for j, v := range row {
			cells[j] = cell{pyStr(v) + pyTypeStr(v), v}
		}
		sort.SliceStable(cells, func(a, b int) bool { return cells[a].sortKey < cells[b].sortKey })
		var buf []byte
		for _, c := range cells {
			buf = exValueKey(buf, c.v)
		}
		out[i] = string(buf)
	}
	return out
}

// values are cells whose Python str and type order them in every way
// quick_rej can: equal strs of different types, ints against floats,
// NULLs, bytes.
var quickValues = []table.Value{nil, int64(1), int64(10), int64(-2), 1.0, 1.5, "1", "1.0", "a", "A", "", []byte("a"), true, false, "None", 0.1 + 0.2}

// keyedValues are cells none of which shares its key with a value of
// another type or representation (no bool, no whole float): the values
// exQuickRejectKeyed decides by keys alone. Their strs still order them
// in every way ("1" the text and 1 the int, "1.5" and 1.5, None and
// "None").
var keyedValues = []table.Value{nil, int64(1), int64(10), int64(-2), 1.5, -0.25, "1", "1.5", "a", "A", "", "None", []byte("a"), []byte("1"), 0.1 + 0.2}

func randomRows(rng *rand.Rand, rows, cols int) [][]table.Value {
	return randomRowsOf(rng, quickValues, rows, cols)
}

func randomRowsOf(rng *rand.Rand, values []table.Value, rows, cols int) [][]table.Value {
	out := make([][]table.Value, rows)
	for i := range out {
		out[i] = make([]table.Value, cols)
		for j := range out[i] {
			out[i][j] = values[rng.IntN(len(values))]
		}
	}
	return out
}

// TestQuickRejectMatchesReference: the same rows' keys and the same verdict
// as the reference on random results, half of them the gold's rows with their cells shuffled
// (and, unordered, the rows too), where quick_rej must let them through.
func TestQuickRejectMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	passed := 0
	for round := range 20_000 {
		rows, cols := rng.IntN(5), 1+rng.IntN(4)
		// Every other pair of rounds draws from the values decided by
		// keys alone (exQuickRejectKeyed's fast path).
		values := [][]table.Value{quickValues, keyedValues}[round/2%2]
		gold := randomRowsOf(rng, values, rows, cols)
		pred := randomRowsOf(rng, values, rows+rng.IntN(2), cols)
		if round%2 == 0 {
			pred = make([][]table.Value, len(gold))
			for i, r := range gold {
				p := append([]table.Value(nil), r...)
				rng.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
				pred[i] = p
			}
			if round%4 == 0 {
				rng.Shuffle(len(pred), func(a, b int) { pred[a], pred[b] = pred[b], pred[a] })
			}
		}
		for _, rows := range [][][]table.Value{gold, pred} {
			if got, want := unorderedRows(rows), unorderedRowsReference(rows); !slices.Equal(got, want) {
				t.Fatalf("round %d: keys %q, reference %q (rows %v)", round, got, want, rows)
			}
		}
		for _, ordered := range []bool{false, true} {
			want := sameRowKeys(unorderedRowsReference(gold), unorderedRowsReference(pred), ordered)
			if got := exQuickReject(gold, pred, ordered); got != want {
				t.Fatalf("round %d, ordered %v: exQuickReject = %v, reference %v\ngold %v\npred %v", round, ordered, got, want, gold, pred)
			}
			if want {
				passed++
			}
		}
	}
	if passed < 5_000 {
		t.Fatalf("only %d comparisons passed quick_rej: the test does not reach the true branch enough", passed)
	}
}

// BenchmarkQuickReject: one-column results of 8 rows, the common case of
// GeoQuery and Spider, and three-column ones.
func BenchmarkQuickReject(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, cols := range []int{1, 3} {
		gold := randomRows(rng, 8, cols)
		b.Run(map[int]string{1: "cols=1", 3: "cols=3"}[cols], func(b *testing.B) {
			for b.Loop() {
				exQuickReject(gold, gold, false)
			}
		})
	}
}
