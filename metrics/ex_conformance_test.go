package metrics

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"github.com/evalflow/evalflow/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"

	_ "modernc.org/sqlite"
)

// exSharedData returns ../shared/data (shareddata.Dir).
func exSharedData(t testing.TB) string { return shareddata.Dir(t) }

// exOpenSQLite opens a SQLite file read-only.
func exOpenSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// exQuery runs q and builds a table the way Python's sqlite3 with
// test-suite's text_factory (bytes.decode(errors='ignore')) sees it.
func exQuery(ctx context.Context, db *sql.DB, q string) (*table.Table, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	t := &table.Table{}
	for _, c := range cols {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]table.Value, len(cols))
		for i, v := range vals {
			v = table.Normalize(v)
			if s, ok := v.(string); ok {
				v = strings.ToValidUTF8(s, "")
			}
			row[i] = v
		}
		t.Rows = append(t.Rows, row)
	}
	return t, rows.Err()
}

type exConfItem struct {
	ID, Gold, Pred, Kind, DB string
}

type exConfVerdict struct {
	ID                 string  `json:"id"`
	TSExec             int     `json:"ts_exec"`
	TSExecKeepDistinct int     `json:"ts_exec_keep_distinct"`
	BirdEX             int     `json:"bird_ex"`
	BirdSoftF1         float64 `json:"bird_soft_f1"`
	SpiderExec         int     `json:"spider_exec"`
}

func exReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// exConfCache memoises query results: the conformance sets repeat golds
// (restaurants has 23 distinct ones) and every check re-reads them, and
// SQLite under -race is slow.
type exConfCache struct {
	db   *sql.DB
	memo map[string]exConfResult
}

type exConfResult struct {
	t   *table.Table
	err error
}

func (c *exConfCache) exec(ctx context.Context, q string) (*table.Table, error) {
	if r, ok := c.memo[q]; ok {
		return r.t, r.err
	}
	t, err := exQuery(ctx, c.db, q)
	c.memo[q] = exConfResult{t, err}
	return t, err
}

// exConfRecord executes gold and pred as the execute stage would and returns
// the record the score stage sees, plus an Exec bound to the database.
func exConfRecord(ctx context.Context, c *exConfCache, it exConfItem) (*item.Record, Exec) {
	rec := &item.Record{Item: item.Item{ID: it.ID, Gold: it.Gold, DB: it.DB}, GoldDone: true}
	g, err := c.exec(ctx, it.Gold)
	if err != nil {
		rec.GoldError = err.Error()
	}
	rec.GoldResult = g
	a := &item.Attempt{Query: it.Pred, Raw: it.Pred, Validated: true, Valid: true, Executed: true}
	p, err := c.exec(ctx, it.Pred)
	if err != nil {
		a.SetError(item.ClassExecution, err.Error())
	} else {
		a.Result = p
	}
	rec.Samples = []*item.Sample{{Attempts: []*item.Attempt{a}}}
	return rec, c.exec
}

func exNewMetric(t testing.TB, name string, o Options) ItemMetric {
	t.Helper()
	d, ok := Default.Lookup(name)
	if !ok {
		t.Fatalf("metric %s not registered", name)
	}
	m, err := d.NewItem(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEXConformance checks per-item agreement with the verdicts of the
// unmodified official scorers (../shared/data/*/conformance).
func TestEXConformance(t *testing.T) {
	data := exSharedData(t)
	for _, ds := range []struct{ dir, db string }{
		{"geoquery", "geography.sqlite"},
		{"restaurants", "restaurants.sqlite"},
	} {
		t.Run(ds.dir, func(t *testing.T) {
			ctx := context.Background()
			conf := filepath.Join(data, ds.dir, "conformance")
			items := exReadJSONL[exConfItem](t, filepath.Join(conf, "items.jsonl"))
			verdicts := exReadJSONL[exConfVerdict](t, filepath.Join(conf, "verdicts.jsonl"))
			if len(items) != len(verdicts) || len(items) == 0 {
				t.Fatalf("%d items, %d verdicts", len(items), len(verdicts))
			}
			db := exOpenSQLite(t, filepath.Join(data, ds.dir, ds.db))
			cache := &exConfCache{db: db, memo: map[string]exConfResult{}}
			checks := []struct {
				key    string
				metric ItemMetric
				want   func(v exConfVerdict) float64
				tol    float64
			}{
				{"ts_exec", exNewMetric(t, "ex", Options{"compare": "testsuite"}), func(v exConfVerdict) float64 { return float64(v.TSExec) }, 0},
				{"ts_exec_keep_distinct", exNewMetric(t, "ex", Options{"compare": "testsuite_keep_distinct"}), func(v exConfVerdict) float64 { return float64(v.TSExecKeepDistinct) }, 0},
				{"bird_ex", exNewMetric(t, "ex", Options{"compare": "bird"}), func(v exConfVerdict) float64 { return float64(v.BirdEX) }, 0},
				{"bird_soft_f1", exNewMetric(t, "bird_soft_f1", nil), func(v exConfVerdict) float64 { return v.BirdSoftF1 }, 0},
			}
			agree := make([]int, len(checks))
			sums := make([]float64, len(checks))
			for i, it := range items {
				v := verdicts[i]
				if v.ID != it.ID {
					t.Fatalf("line %d: item %s, verdict %s", i+1, it.ID, v.ID)
				}
				for ci, c := range checks {
					rec, exec := exConfRecord(ctx, cache, it)
					got := c.metric.Score(ctx, Input{Record: rec, Exec: exec})
					if got.Err != "" {
						t.Errorf("%s %s (%s): error %s", c.key, it.ID, it.Kind, got.Err)
						continue
					}
					want := c.want(v)
					sums[ci] += got.Value
					if math.Abs(got.Value-want) <= c.tol {
						agree[ci]++
						continue
					}
					t.Errorf("%s %s (%s): got %v, official %v\n gold: %s\n pred: %s", c.key, it.ID, it.Kind, got.Value, want, it.Gold, it.Pred)
				}
			}
			for ci, c := range checks {
				t.Logf("%s/%s: agreement %d/%d, sum %.3f", ds.dir, c.key, agree[ci], len(items), sums[ci])
			}
		})
	}
}
