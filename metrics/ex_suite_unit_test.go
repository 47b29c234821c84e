package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// TestEXSuiteInput: only the test-suite profiles read Input.Suite; a
// suite that cannot be listed, or a gold that fails on one of its
// databases, is reported through Input.Harness and fails the score; the
// first database that separates the pair ends the loop and is named in the
// note, and the databases after it are not run.
func TestEXSuiteInput(t *testing.T) {
	rec := func() *item.Record {
		a := &item.Attempt{Query: "SELECT a FROM t", Executed: true, Result: exT(r(int64(1)))}
		return &item.Record{Item: item.Item{ID: "1", Gold: "SELECT a FROM t", DB: "x"}, GoldDone: true,
			GoldResult: exT(r(int64(1))), Samples: []*item.Sample{{Attempts: []*item.Attempt{a}}}}
	}
	// db returns a test database whose n-th query gets results[n] (the
	// last one repeats), or fails with err; ran counts its executions.
	ran := map[string]int{}
	db := func(name string, err error, results ...*table.Table) TestDB {
		return TestDB{Name: name, Exec: func(context.Context, string) (*table.Table, error) {
			ran[name]++
			if err != nil {
				return nil, err
			}
			return results[min(ran[name], len(results))-1], nil
		}}
	}
	same, other := exT(r(int64(1))), exT(r(int64(2)))
	for _, tc := range []struct {
		name, compare string
		suite         []TestDB
		listErr       error
		want          float64
		err, note     string // substrings; "" wants none
		harness       bool
		ran           map[string]int
	}{
		{name: "evalflow never reads the suite", compare: "evalflow", listErr: errors.New("must not be listed"), want: 1},
		{name: "bird never reads the suite", compare: "bird", listErr: errors.New("must not be listed"), want: 1},
		{name: "empty suite", compare: "testsuite", want: 1},
		{name: "equal everywhere", compare: "testsuite", suite: []TestDB{db("a", nil, same), db("b", nil, same)}, want: 1,
			ran: map[string]int{"a": 2, "b": 2}},
		{name: "separated by the first", compare: "testsuite_keep_distinct", suite: []TestDB{db("a", nil, same, other), db("b", nil, same)},
			want: 0, note: "test database a separates", ran: map[string]int{"a": 2, "b": 1}},
		{name: "listing fails", compare: "testsuite", listErr: errors.New("permission denied"),
			err: "listing the test databases: permission denied", harness: true},
		{name: "gold fails on one", compare: "testsuite", suite: []TestDB{db("a", nil, same), db("b", errors.New("no such table: t"))},
			err: "gold query failed on test database b: no such table: t", harness: true, ran: map[string]int{"a": 1, "b": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(ran)
			var reported []error
			in := Input{Record: rec(),
				Suite:   func(context.Context) ([]TestDB, error) { return tc.suite, tc.listErr },
				Harness: func(err error) { reported = append(reported, err) }}
			got := exNewMetric(t, "ex", Options{"compare": tc.compare}).Score(context.Background(), in)
			if tc.err != "" {
				if !strings.Contains(got.Err, tc.err) || got.Value != 0 {
					t.Errorf("score %+v, want error %q", got, tc.err)
				}
			} else if got.Err != "" || got.Value != tc.want {
				t.Errorf("score %+v, want %v", got, tc.want)
			}
			if (tc.note == "") != (got.Note == "") || !strings.Contains(got.Note, tc.note) {
				t.Errorf("note %q, want %q", got.Note, tc.note)
			}
			if tc.harness != (len(reported) == 1) || tc.harness && !strings.Contains(reported[0].Error(), tc.err) {
				t.Errorf("harness reports %v, want one: %v", reported, tc.harness)
			}
			for name, n := range tc.ran {
				if ran[name] != n {
					t.Errorf("database %s ran %d queries, want %d", name, ran[name], n)
				}
			}
		})
	}
}
