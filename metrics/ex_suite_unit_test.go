package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// TestEXSuiteInput: only the suite verdict of the test-suite profiles
// reads Input.Suite, and ex stays the verdict on the item's own database;
// a suite that cannot be listed, or a gold that fails on one of its
// databases, is reported through Input.Harness and fails the suite
// verdict; the first database that separates the pair ends the loop, is
// named in the verdict's Separation (with both results there) and note,
// and the databases after it are not run.
func TestEXSuiteInput(t *testing.T) {
	rec := func(pred *table.Table) *item.Record {
		a := &item.Attempt{Query: "SELECT a FROM t", Executed: true, Result: pred}
		return &item.Record{Item: item.Item{ID: "1", Gold: "SELECT a FROM t", DB: "x"}, GoldDone: true,
			GoldResult: exT(r(int64(1))), Samples: []*item.Sample{{Attempts: []*item.Attempt{a}}}}
	}
	// db returns a test database whose n-th query gets results[n] (the
	// last one repeats; an error fails the query), or fails with err; ran
	// counts its executions.
	ran := map[string]int{}
	db := func(name string, err error, results ...any) TestDB {
		return TestDB{Name: name, Exec: func(context.Context, string) (*table.Table, error) {
			ran[name]++
			if err != nil {
				return nil, err
			}
			switch x := results[min(ran[name], len(results))-1].(type) {
			case error:
				return nil, x
			default:
				return x.(*table.Table), nil
			}
		}}
	}
	same, other := exT(r(int64(1))), exT(r(int64(2)))
	for _, tc := range []struct {
		name, compare string
		pred          *table.Table // the prediction's result on the item's own database (default same)
		suite         []TestDB
		listErr       error
		want          float64
		wantSuite     *float64 // nil: no suite verdict
		err, note     string   // substrings, of the suite verdict; "" wants none
		sepDB         string   // the separating database; "" wants none
		sepOwn        bool
		harness       bool
		ran           map[string]int
	}{
		{name: "evalflow never reads the suite", compare: "evalflow", listErr: errors.New("must not be listed"), want: 1},
		{name: "bird never reads the suite", compare: "bird", listErr: errors.New("must not be listed"), want: 1},
		{name: "empty suite", compare: "testsuite", want: 1},
		{name: "equal everywhere", compare: "testsuite", suite: []TestDB{db("a", nil, same), db("b", nil, same)}, want: 1, wantSuite: ptr(1.0),
			ran: map[string]int{"a": 2, "b": 2}},
		{name: "separated by the first", compare: "testsuite_keep_distinct", suite: []TestDB{db("a", nil, same, other), db("b", nil, same)},
			want: 1, wantSuite: ptr(0.0), note: "test database a separates", sepDB: "a", ran: map[string]int{"a": 2, "b": 1}},
		{name: "the prediction fails on the second", compare: "testsuite", suite: []TestDB{db("a", nil, same), db("b", nil, same, errors.New("no such column: a"))},
			want: 1, wantSuite: ptr(0.0), note: "the prediction fails on test database b", sepDB: "b", ran: map[string]int{"a": 2, "b": 2}},
		{name: "separated by its own database", compare: "testsuite", pred: other, suite: []TestDB{db("a", nil, same)},
			want: 0, wantSuite: ptr(0.0), sepDB: "own.sqlite", sepOwn: true, ran: map[string]int{"a": 1}},
		{name: "listing fails", compare: "testsuite", listErr: errors.New("permission denied"), want: 1, wantSuite: ptr(0.0),
			err: "listing the test databases: permission denied", harness: true},
		{name: "gold fails on one", compare: "testsuite", suite: []TestDB{db("a", nil, same), db("b", errors.New("no such table: t"))},
			want: 1, wantSuite: ptr(0.0), err: "gold query failed on test database b: no such table: t", harness: true, ran: map[string]int{"a": 1, "b": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(ran)
			var reported []error
			pred := tc.pred
			if pred == nil {
				pred = same
			}
			in := Input{Record: rec(pred),
				Suite: func(context.Context) (TestSuite, error) {
					return TestSuite{Own: "own.sqlite", Others: tc.suite}, tc.listErr
				},
				Harness: func(err error) { reported = append(reported, err) }}
			m := exNewMetric(t, "ex", Options{"compare": tc.compare}).(SuiteScorer)
			if m.SuiteVerdict() != (tc.compare == "testsuite" || tc.compare == "testsuite_keep_distinct") {
				t.Errorf("SuiteVerdict() = %v under %s", m.SuiteVerdict(), tc.compare)
			}
			got, suite := m.ScoreSuite(context.Background(), in)
			if got.Err != "" || got.Value != tc.want || got.Note != "" || got.Separation != nil {
				t.Errorf("ex %+v, want %v", got, tc.want)
			}
			if only := m.Score(context.Background(), Input{Record: rec(pred), Suite: in.Suite}); only.Value != tc.want {
				t.Errorf("Score %+v, want %v", only, tc.want)
			}
			switch {
			case tc.wantSuite == nil:
				if suite != nil {
					t.Errorf("suite verdict %+v, want none", suite)
				}
				return
			case suite == nil:
				t.Fatalf("no suite verdict, want %v", *tc.wantSuite)
			}
			if suite.Name != "ex_suite" || suite.Value != *tc.wantSuite || (tc.err == "") != (suite.Err == "") || !strings.Contains(suite.Err, tc.err) {
				t.Errorf("suite verdict %+v, want %v (error %q)", suite, *tc.wantSuite, tc.err)
			}
			if (tc.note == "") != (suite.Note == "") || !strings.Contains(suite.Note, tc.note) {
				t.Errorf("note %q, want %q", suite.Note, tc.note)
			}
			sep := suite.Separation
			switch {
			case tc.sepDB == "" && sep != nil:
				t.Errorf("separation %+v, want none", sep)
			case tc.sepDB != "" && (sep == nil || sep.DB != tc.sepDB || sep.Own != tc.sepOwn):
				t.Errorf("separation %+v, want %s (own %v)", sep, tc.sepDB, tc.sepOwn)
			case sep != nil && !sep.Own && sep.Gold != same:
				t.Errorf("separation %+v: want the gold's result on %s", sep, sep.DB)
			case sep != nil && sep.Own && (sep.Gold != nil || sep.Pred != nil):
				t.Errorf("separation %+v: the own database's results are the item's", sep)
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

// TestEXSuiteRunsRewrittenText: the suite loop runs the text test-suite's
// path prepared for the item's own database (exTSText: rewritten and
// checked once), here a raw syntax error that the rewrite repairs.
func TestEXSuiteRunsRewrittenText(t *testing.T) {
	var texts []string
	suite := []TestDB{{Name: "a", Exec: func(_ context.Context, q string) (*table.Table, error) {
		texts = append(texts, q)
		return exT(r(int64(1))), nil
	}}}
	rec := &item.Record{Item: item.Item{ID: "1", Gold: "SELECT a FROM t", DB: "x"}, GoldDone: true, GoldResult: exT(r(int64(1))),
		Samples: []*item.Sample{{Attempts: []*item.Attempt{{Query: "SELECT DISTINCT a FROM t WHERE a > = 1", ErrorClass: item.ClassSyntax, Executed: true}}}}}
	in := Input{Record: rec,
		Exec:  func(_ context.Context, q string) (*table.Table, error) { return exT(r(int64(1))), nil },
		Suite: func(context.Context) (TestSuite, error) { return TestSuite{Own: "x.sqlite", Others: suite}, nil }}
	own, s := exNewMetric(t, "ex", Options{"compare": "testsuite"}).(SuiteScorer).ScoreSuite(context.Background(), in)
	if own.Value != 1 || s == nil || s.Value != 1 {
		t.Fatalf("ex %+v, suite %+v; want both 1", own, s)
	}
	// The gold's text, then the prediction's as rewritten.
	if want := []string{"SELECT a FROM t", "SELECT  a FROM t WHERE a >= 1"}; strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("ran %q on the test database, want %q", texts, want)
	}
}

func ptr[T any](v T) *T { return &v }
