package report

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evalflow/evalflow/rundir"
)

// writeRun writes a finished run directory of n items with DuckDB: a
// quarter wrong, every 50th in error, a hostile question on item 0.
func writeRun(t testing.TB, dir string, n int, status string) {
	t.Helper()
	m := rundir.Manifest{RunID: "big", Status: "complete", Pipeline: "p.hcl", PipelineHash: strings.Repeat("ab", 32),
		BinaryMetrics: []string{"ex"}, CISeed: 1,
		Variables: []rundir.ManifestVar{{Name: "note", Value: json.RawMessage(`"</script><b>x</b>"`), Source: "-var"}}}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := func(s string) {
		t.Helper()
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	q(`CREATE TABLE items AS SELECT i AS seq, 'q' || i AS id,
		CASE WHEN i = 0 THEN '<script>alert(1)</script> how many?' ELSE 'how many customers are there, item ' || i END AS question,
		'db' || (i % 7) AS db, 'SELECT COUNT(*) FROM customers' AS gold, ['easy', 'medium', 'hard'][i % 3 + 1] AS difficulty,
		'SELECT COUNT(*) FROM customer' || (i % 4) AS prediction,
		CASE WHEN '` + status + `' <> '' THEN '` + status + `' WHEN i % 50 = 49 THEN 'error' ELSE 'ok' END AS status,
		CASE WHEN i % 50 = 49 THEN 'stage.execute: boom' ELSE '' END AS error,
		CASE WHEN i % 4 = 1 THEN 'execution' ELSE '' END AS error_class,
		CASE WHEN i % 4 = 1 THEN 'no such table: customer1' ELSE '' END AS error_message,
		1::BIGINT AS samples, 1 + (i % 3)::BIGINT AS attempts, true AS valid, i % 4 <> 1 AS executed,
		7::BIGINT AS gold_rows, CASE WHEN i % 4 = 1 THEN NULL ELSE 1 END::BIGINT AS pred_rows, '' AS gold_error,
		'{"columns":["n","name"],"rows":[[0,"<script>alert(2)</script>"],[1,null],[2,"c"],[3,"d"],[4,"e"]],"rows_total":7,"columns_total":2,"truncated":true,"capped":false}' AS gold_preview,
		CASE WHEN i % 4 = 1 THEN NULL ELSE '{"columns":["count(*)"],"rows":[[' || (i * 10) || ']],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}' END AS pred_preview,
		(i % 100)::DOUBLE AS duration_ms,
		CASE WHEN i % 50 = 49 OR '` + status + `' <> '' THEN NULL WHEN i % 4 = 0 THEN 1.0 ELSE 0.0 END::DOUBLE AS ex,
		'' AS metric_errors, '' AS metric_notes
		FROM range(` + itoa(n) + `) t(i)`)
	q(`CREATE TABLE attempts AS SELECT seq, id, 0::BIGINT AS sample, a::BIGINT AS attempt, prediction AS query,
		a = attempts - 1 AND ex = 1 AS match, (a * 3)::DOUBLE AS validate_ms, (seq % 10)::DOUBLE AS execute_ms,
		0::BIGINT AS input_tokens, 0::BIGINT AS output_tokens, 0.0 AS cost, 0.0 AS latency_ms, false AS cache_hit
		FROM items, range(attempts) r(a) WHERE status NOT IN ('error', 'cancelled')`)
	q(`COPY items TO '` + filepath.Join(dir, rundir.ItemsFile) + `' (FORMAT parquet)`)
	q(`COPY attempts TO '` + filepath.Join(dir, rundir.AttemptsFile) + `' (FORMAT parquet)`)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// built builds dir's report and writes it: the report and its page.
func built(t testing.TB, dir string) (*Report, []byte) {
	t.Helper()
	rep, err := Build(context.Background(), []string{dir}, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return rep, buf.Bytes()
}

func TestLargeRunBoundedAndEscaped(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 5_000
	}
	dir := t.TempDir()
	writeRun(t, dir, n, "")
	start := time.Now()
	rep, raw := built(t, dir)
	t.Logf("%d items: report in %v, %d bytes", n, time.Since(start), len(raw))
	page := string(raw)
	r := rep.Runs[0]
	if r.ItemsTotal != n || r.ItemsShown != DefaultMaxItems {
		t.Errorf("items %d shown %d, want %d and %d", r.ItemsTotal, r.ItemsShown, n, DefaultMaxItems)
	}
	// Wrong: ex < 1 or in error: 3 in 4, plus the errored ones with i%4 == 0.
	want := 0
	for i := range n {
		if i%50 == 49 || i%4 != 0 {
			want++
		}
	}
	if r.WrongTotal != want {
		t.Errorf("wrong or errored %d, want %d", r.WrongTotal, want)
	}
	for _, it := range r.Items {
		if !it.Wrong {
			t.Fatalf("item %d is right, yet %d wrong ones were left out", it.Seq, r.WrongTotal-DefaultMaxItems)
		}
	}
	if it := r.Items[0]; it.Seq != 1 || it.ErrorClass != "execution" {
		t.Errorf("first item %d (status %s, class %q); errored ones come first, in run order", it.Seq, it.Status, it.ErrorClass)
	}
	if len(raw) > 4<<20 {
		t.Errorf("the page is %d bytes for %d items", len(raw), n)
	}
	if !strings.Contains(page, "the other items are left out of this page") {
		t.Error("the page does not say items were left out")
	}
	for _, bad := range []string{"<script>", "</script><b>", "<b>x</b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("user text %q reached the page unescaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;") {
		t.Error("the variable's value is not on the page")
	}
	// No aggregates.parquet: the overall mean is computed from the items.
	found := false
	for _, s := range r.MetricRows {
		if s.Metric == "ex" && s.Source == "items" {
			found = true
			wantMean := float64(n/4) / float64(n-n/50)
			if !s.Mean.Valid || s.Mean.Float64 < wantMean-1e-3 || s.Mean.Float64 > wantMean+1e-3 || !(s.CILow.Float64 < s.Mean.Float64 && s.Mean.Float64 < s.CIHigh.Float64) {
				t.Errorf("ex mean %v [%v, %v], want about %v inside its interval", s.Mean, s.CILow, s.CIHigh, wantMean)
			}
		}
	}
	if !found {
		t.Error("no ex row in the metric table")
	}
}

func TestNumHooks(t *testing.T) {
	for _, tc := range []struct {
		v      any
		digits int
		want   string
	}{
		{0.6, 3, `data-value="0.6">0.600<`},
		{sql.NullFloat64{}, 3, `data-value="null">–<`},
		{int64(42), 0, `data-value="42">42<`},
		{sql.NullInt64{Int64: 7, Valid: true}, 0, `data-value="7">7<`},
	} {
		got := string(num(key("k", `"<x>"`), tc.v, tc.digits))
		if !strings.Contains(got, tc.want) || !strings.Contains(got, `data-key="[&#34;k&#34;,&#34;\&#34;\u003cx\u003e\&#34;&#34;]"`) {
			t.Errorf("num(%v) = %s", tc.v, got)
		}
	}
}

// TestNothingFinished: a run stopped before any item finished still gets
// a page (a panic here once killed evalflow run on an early Ctrl-C).
func TestNothingFinished(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 10, "cancelled")
	rep, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if r.ItemsTotal != 10 || len(r.Refine) != 0 || strings.Contains(buf.String(), "<svg") {
		t.Errorf("items %d, refine %v, svg %v", r.ItemsTotal, r.Refine, strings.Contains(buf.String(), "<svg"))
	}
	if !strings.Contains(buf.String(), `data-key="[&#34;status&#34;,0,&#34;&#34;,&#34;cancelled&#34;]" data-value="10"`) {
		t.Error("the page does not count the 10 cancelled items")
	}
}

// TestResultPreviews: the item table shows both results' previews side by
// side, each cell as items.parquet holds it, escaped, with "first 5 of 7
// rows" when rows are cut, and no table for a query that did not run.
func TestResultPreviews(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 20, "")
	rep, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// itemHTML returns the item's block, its gold result and its
	// prediction result.
	itemHTML := func(seq int) (string, string) {
		t.Helper()
		_, rest, ok := strings.Cut(page, `data-seq="`+itoa(seq)+`"`)
		if !ok {
			t.Fatalf("item %d is not on the page", seq)
		}
		rest, _, _ = strings.Cut(rest, `<div class="item `)
		_, gold, _ := strings.Cut(rest, `class="result gold"`)
		gold, pred, _ := strings.Cut(gold, `class="result pred"`)
		return gold, pred
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	items := filepath.Join(dir, rundir.ItemsFile)
	for _, seq := range []int{2, 6} {
		gold, pred := itemHTML(seq)
		var predCell, goldCell string
		var goldNull bool
		err := db.QueryRow(`SELECT pred_preview->'rows'->0->>0, gold_preview->'rows'->0->>1, (gold_preview->'rows'->1->1) = 'null'::JSON
			FROM read_parquet('`+items+`') WHERE seq = ?`, seq).Scan(&predCell, &goldCell, &goldNull)
		if err != nil {
			t.Fatal(err)
		}
		if predCell != itoa(seq*10) || goldCell != "<script>alert(2)</script>" || !goldNull {
			t.Fatalf("the Parquet holds %q, %q, null %v: the test's data changed", predCell, goldCell, goldNull)
		}
		if !strings.Contains(pred, "<td>"+template.HTMLEscapeString(predCell)+"</td>") {
			t.Errorf("item %d: the prediction's first cell %q is not on the page:\n%s", seq, predCell, pred)
		}
		if !strings.Contains(gold, "<td>"+template.HTMLEscapeString(goldCell)+"</td>") || !strings.Contains(gold, `<td class="null">NULL</td>`) {
			t.Errorf("item %d: the gold's cells are not on the page, escaped:\n%s", seq, gold)
		}
		if !strings.Contains(gold, "first 5 of <span") || !strings.Contains(gold, "truncated preview") || strings.Contains(pred, "first ") || strings.Contains(pred, "truncated") {
			t.Errorf("item %d: the cut gold preview is not marked, or the whole prediction is:\n%s\n%s", seq, gold, pred)
		}
	}
	if _, pred := itemHTML(1); !strings.Contains(pred, "did not run") || strings.Contains(pred, "<table") {
		t.Errorf("item 1's prediction did not run, yet:\n%s", pred)
	}
	if strings.Contains(page, "<script>alert(2)") {
		t.Error("a result cell reached the page unescaped")
	}
}

// countedRun writes a run of n items (writeRun) whose manifest counts
// them, as a finished run's does: the report reads it with as many DuckDB
// threads as a run of that size gets (threadsFor).
func countedRun(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	writeRun(b, dir, n, "")
	m, err := rundir.Previous(dir)
	if err != nil {
		b.Fatal(err)
	}
	m.Counts.Items = n
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkThreads builds and writes the report of runs around
// singleThreadItems with one DuckDB thread a lane and with as many as the
// machine has cores (DuckDB's default; docs/benchmarks-baseline.md, "The
// same page every time" and "The report rendered in Go"): ns/op is the
// wall time, cpu-ms/op the process's CPU time (DuckDB's threads included).
func BenchmarkThreads(b *testing.B) {
	defer func(f func(int) int) { threadsFor = f }(threadsFor)
	for _, n := range []int{10_000, 25_000, 50_000} {
		dir := countedRun(b, n)
		for _, threads := range []int{runtime.NumCPU(), 1} {
			b.Run(fmt.Sprintf("items=%d/threads=%d", n, threads), func(b *testing.B) {
				threadsFor = func(int) int { return threads }
				start := cpuTime()
				for b.Loop() {
					built(b, dir)
				}
				b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkSections builds and writes the report of runs of 10,000 and
// 100,000 items, the page's sections in their two lanes as a run's report
// has them: ns/op is the whole, each <section>-ms/op one section's time
// (the two lanes' sections overlap), render-ms/op the page's rendering
// (docs/benchmarks-baseline.md, "The report rendered in Go").
func BenchmarkSections(b *testing.B) {
	defer func() { sectionTook = nil }()
	for _, n := range []int{10_000, 100_000} {
		dir := countedRun(b, n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			var mu sync.Mutex
			took := map[string]time.Duration{}
			sectionTook = func(s string, d time.Duration) {
				mu.Lock()
				took[s] += d
				mu.Unlock()
			}
			for b.Loop() {
				rep, err := Build(context.Background(), []string{dir}, Options{Version: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := Write(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
				took["render"] += time.Since(start)
			}
			for s, d := range took {
				b.ReportMetric(float64(d.Microseconds())/1000/float64(b.N), s+"-ms/op")
			}
		})
	}
}

// cpuTime is the process's user + system time so far (DuckDB's threads
// included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLargeRun builds and writes the report of a 100,000-item run
// (docs/report.md, "Size and speed"): ns/op is the time, page-bytes the
// size of the page.
func BenchmarkLargeRun(b *testing.B) {
	dir := b.TempDir()
	writeRun(b, dir, 100_000, "")
	var size int
	b.ResetTimer()
	for b.Loop() {
		_, page := built(b, dir)
		size = len(page)
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// TestSameEveryTime: the report of one run directory is the same page every
// time it is built. Fractional latencies and costs in many row groups are
// what DuckDB's parallel sums added in a different order from one query to
// the next (the means' last digits changed between two reports).
func TestSameEveryTime(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 20_000, "")
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, f := range []struct{ file, replace string }{
		{rundir.ItemsFile, "(seq * 0.7318 + 0.013) / 3.7 AS duration_ms"},
		{rundir.AttemptsFile, "(seq * 0.1234 + attempt) / 7.1 AS execute_ms, (seq % 97) * 0.000137 AS cost"},
	} {
		path := filepath.Join(dir, f.file)
		if _, err := db.Exec(`COPY (SELECT * REPLACE (` + f.replace + `) FROM read_parquet('` + path + `')) TO '` + path + `.new' (FORMAT parquet, ROW_GROUP_SIZE 1024)`); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	_, first := built(t, dir)
	if !bytes.Contains(first, []byte("execute per attempt")) {
		t.Fatal("no latency table on the page")
	}
	for i := 1; i < 6; i++ {
		if _, got := built(t, dir); !bytes.Equal(got, first) {
			t.Fatalf("build %d differs from the first (%d and %d bytes)", i+1, len(got), len(first))
		}
	}
	// The manifest's count makes a run this small read with one thread:
	// the same page.
	m, err := rundir.Previous(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Counts.Items = 20_000
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, got := built(t, dir); !bytes.Equal(got, first) {
		t.Fatalf("read with one thread, the page differs (%d and %d bytes)", len(got), len(first))
	}
}

// BenchmarkWrite renders the page of a 10,000-item run (500 items shown,
// each with two result previews) from a built report: the template's
// share of `evalflow report` (docs/benchmarks-baseline.md).
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	writeRun(b, dir, 10_000, "")
	rep, err := Build(context.Background(), []string{dir}, Options{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Write(&buf, rep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "page-bytes")
}
