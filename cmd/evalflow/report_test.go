package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/evalflow/evalflow/rundir"
)

var screenshotDir = flag.String("report-screenshots", "", "write screenshots of the example reports into this directory (docs/img)")

// chromiumPath finds Debian's chromium (scripts/install-test-deps.sh). A
// missing browser fails the test under CI=true and skips it elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: run scripts/install-test-deps.sh")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// exampleRuns runs examples/quickstart and examples/ablation through the
// CLI once per test process.
var exampleRuns = struct {
	once       sync.Once
	quick, abl string
	err        error
}{}

func runExamples(t *testing.T) (quick, abl string) {
	t.Helper()
	bin := evalflowBinary(t)
	exampleRuns.once.Do(func() {
		dir, err := processTempDir("evalflow-report-")
		if err != nil {
			exampleRuns.err = err
			return
		}
		repo, _ := filepath.Abs(filepath.Join("..", ".."))
		for _, x := range []struct {
			name string
			dst  *string
		}{{"quickstart", &exampleRuns.quick}, {"ablation", &exampleRuns.abl}} {
			out := filepath.Join(dir, x.name)
			r := runBin(t, bin, repo, "run", filepath.Join("examples", x.name), "-out", out)
			if r.code != 0 {
				exampleRuns.err = fmt.Errorf("run %s: exit %d\n%s%s", x.name, r.code, r.stdout, r.stderr)
				return
			}
			*x.dst = out
		}
	})
	if exampleRuns.err != nil {
		t.Fatal(exampleRuns.err)
	}
	return exampleRuns.quick, exampleRuns.abl
}

// pageNumber is one number the page shows.
type pageNumber struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Text  string `json:"text"`
}

// pageData is what a test reads from a rendered report.
type pageData struct {
	Runs    []string     `json:"runs"`
	Numbers []pageNumber `json:"numbers"`
	Items   [][]bool     `json:"items"` // per run, per item shown: marked wrong or errored
	Plots   int          `json:"plots"`
	// PlotOverlaps are the texts of a chart (tick and row labels, titles,
	// legend entries) that overlap one another or leave the chart, as
	// Chromium lays them out.
	PlotOverlaps []string `json:"plotOverlaps"`
}

// renderInChromium loads file in headless Chromium and returns the page's
// numbers, failing on any console error, uncaught exception or request
// that leaves the file.
func renderInChromium(t *testing.T, file, screenshot string) pageData {
	t.Helper()
	chrome := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1600))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, fmt.Sprintf("exception: %s at %d:%d", e.ExceptionDetails.Text, e.ExceptionDetails.LineNumber, e.ExceptionDetails.ColumnNumber))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				problems = append(problems, "network request: "+u)
			}
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+e.ErrorText)
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	abs, _ := filepath.Abs(file)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
			runs: Array.from(document.querySelectorAll("section.run")).map(s => s.dataset.dir),
			numbers: Array.from(document.querySelectorAll("[data-key]")).map(e => ({key: e.dataset.key, value: e.dataset.value, text: e.textContent})),
			items: Array.from(document.querySelectorAll("section.run")).map(s => Array.from(s.querySelectorAll(".item")).map(i => i.classList.contains("bad"))),
			plots: document.querySelectorAll("figure.plot svg").length,
			plotOverlaps: Array.from(document.querySelectorAll("figure.plot svg")).flatMap(svg => {
				const name = svg.closest("figure").dataset.plot, box = svg.getBoundingClientRect();
				const texts = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim() !== "")
					.map(t => ({s: t.textContent.trim(), r: t.getBoundingClientRect()}));
				const out = [];
				texts.forEach((a, i) => {
					if (a.r.left < box.left - 1 || a.r.right > box.right + 1 || a.r.top < box.top - 1 || a.r.bottom > box.bottom + 1) {
						out.push(name + ": " + JSON.stringify(a.s) + " outside the chart");
					}
					texts.slice(i + 1).forEach(b => {
						const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
						const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
						if (w > 1 && h > 1) out.push(name + ": " + JSON.stringify(a.s) + " overlaps " + JSON.stringify(b.s));
					});
				});
				return out;
			}),
		})`))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	shots := map[string][]byte{}
	if screenshot != "" {
		var err error
		if strings.Contains(screenshot, "ablation") {
			// The sweep's interesting parts: its group charts and its
			// paired differences.
			if shots[screenshot], err = chromedp.Run(ctx, chromedp.Screenshot("#groups-0")); err == nil {
				shots[strings.TrimSuffix(screenshot, ".png")+"-diffs.png"], err = chromedp.Run(ctx, chromedp.Screenshot("#diffs"))
			}
		} else {
			shots[screenshot], err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		}
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
	}
	// Late console messages of the load.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("%s: %s", file, p)
	}
	for name, shot := range shots {
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var d pageData
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// selfContained fails when the page could load anything: a script or
// stylesheet file, an image, a font, an import.
func selfContained(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\s(src|href|srcset|action|poster)\s*=`),
		regexp.MustCompile(`(?i)url\(`), regexp.MustCompile(`(?i)@import`),
		regexp.MustCompile(`(?i)<(script|link|iframe|img|object|embed)\b`),
	} {
		if m := re.Find(b); m != nil {
			t.Errorf("%s references something outside itself: %q", file, m)
		}
	}
}

// checker recomputes every number of a page from the run directories with
// DuckDB over the Parquet files.
type checker struct {
	t    *testing.T
	db   *sql.DB
	runs []string
	bin  string
}

func (c *checker) one(q string, args ...any) sql.NullFloat64 {
	c.t.Helper()
	var v sql.NullFloat64
	if err := c.db.QueryRow(q, args...).Scan(&v); err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	return v
}

func (c *checker) parquet(run int, table string) string {
	return "read_parquet('" + filepath.Join(c.runs[run], table+".parquet") + "')"
}

func (c *checker) hasCell(run int) bool {
	m := readManifest(c.t, c.runs[run])
	return len(m.Cells) > 0
}

// cellCond restricts to a cell when the run is a sweep.
func (c *checker) cellCond(run int, cell string) string {
	if !c.hasCell(run) {
		return "true"
	}
	return "cell = '" + strings.ReplaceAll(cell, "'", "''") + "'"
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// expected is the value the key names, recomputed.
func (c *checker) expected(k []any, compares map[string][]map[string]any) (sql.NullFloat64, bool) {
	t := c.t
	str := func(i int) string { return k[i].(string) }
	run := func() int { return int(k[1].(float64)) }
	switch k[0] {
	case "aggregates":
		r, cell, by, group, metric, field := run(), str(2), str(3), str(4), str(5), str(6)
		return c.one(fmt.Sprintf(`SELECT %s FROM %s WHERE %s AND group_by = ? AND coalesce("group", '') = ? AND metric = ?`,
			ident(field), c.parquet(r, "aggregates"), c.cellCond(r, cell)), by, group, metric), true
	case "items":
		r, cell, by, group, metric, field := run(), str(2), str(3), str(4), str(5), str(6)
		where := fmt.Sprintf("status <> 'cancelled' AND %s", c.cellCond(r, cell))
		if by != "all" {
			where += fmt.Sprintf(" AND coalesce(CAST(%s AS VARCHAR), '') = '%s'", ident(by), strings.ReplaceAll(group, "'", "''"))
		}
		m := ident(metric)
		ok := fmt.Sprintf("status <> 'error' AND %s IS NOT NULL AND NOT isnan(%s)", m, m)
		switch field {
		case "items":
			return c.one(fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", c.parquet(r, "items"), where)), true
		case "n":
			return c.one(fmt.Sprintf("SELECT count(*) FILTER (WHERE %s) FROM %s WHERE %s", ok, c.parquet(r, "items"), where)), true
		case "mean":
			return c.one(fmt.Sprintf("SELECT avg(%s) FILTER (WHERE %s) FROM %s WHERE %s", m, ok, c.parquet(r, "items"), where)), true
		}
		return sql.NullFloat64{}, false // an interval computed here: checked for bracketing the mean
	case "status", "error_class":
		r, cell, val := run(), str(2), str(3)
		return c.one(fmt.Sprintf("SELECT count(*) FROM %s WHERE %s AND coalesce(%s, '') = ?", c.parquet(r, "items"), c.cellCond(r, cell), k[0]), val), true
	case "latency":
		r, cell, table, col, stat := run(), str(2), str(3), str(4), str(5)
		agg := map[string]string{"n": "count(%s)", "mean": "avg(%s)", "p50": "quantile_cont(%s, 0.5)", "p90": "quantile_cont(%s, 0.9)",
			"p99": "quantile_cont(%s, 0.99)", "max": "max(%s)"}[stat]
		return c.one(fmt.Sprintf("SELECT "+agg+" FROM %s WHERE %s", col, c.parquet(r, table), c.cellCond(r, cell))), true
	case "cost":
		r, cell, field := run(), str(2), str(3)
		e := map[string]string{"attempts": "count(*)", "cache_hits": "count(*) FILTER (WHERE cache_hit)", "input_tokens": "sum(input_tokens)",
			"output_tokens": "sum(output_tokens)", "cost": "sum(cost)"}[field]
		return c.one(fmt.Sprintf("SELECT %s FROM %s WHERE %s", e, c.parquet(r, "attempts"), c.cellCond(r, cell))), true
	case "refine":
		r, cell, attempt, field := run(), str(2), int(k[3].(float64)), str(4)
		// Items (seq) of the cell with a sample-0 attempt; passed: one of
		// attempt <= k matched.
		base := fmt.Sprintf("FROM %s WHERE sample = 0 AND %s", c.parquet(r, "attempts"), c.cellCond(r, cell))
		items := c.one("SELECT count(DISTINCT seq) " + base)
		passed := c.one(fmt.Sprintf("SELECT count(DISTINCT seq) %s AND match AND attempt <= %d", base, attempt))
		switch field {
		case "items":
			return items, true
		case "passed":
			return passed, true
		case "rate":
			return sql.NullFloat64{Float64: passed.Float64 / items.Float64, Valid: true}, true
		}
	case "item":
		r, seq, field := run(), int(k[2].(float64)), str(3)
		return c.one(fmt.Sprintf("SELECT %s FROM %s WHERE seq = ?", ident(field), c.parquet(r, "items")), seq), true
	case "items_total":
		return c.one(fmt.Sprintf("SELECT count(*) FROM %s", c.parquet(run(), "items"))), true
	case "items_wrong":
		return c.one(fmt.Sprintf("SELECT count(*) FILTER (WHERE status <> 'ok' OR coalesce(error_class, '') <> '' OR ex IS NULL OR ex < 1) FROM %s", c.parquet(run(), "items"))), true
	case "items_shown":
		return sql.NullFloat64{}, false // checked against the items on the page
	case "manifest":
		m := readManifest(t, c.runs[run()])
		return sql.NullFloat64{Float64: m.Seconds, Valid: true}, true
	case "diff":
		a, b, metric, field := str(1), str(2), str(3), str(4)
		rows, ok := compares[a+" "+b]
		if !ok {
			res := runBin(t, c.bin, ".", "compare", a, b, "-format", "json", "-resamples", "2000")
			if res.code != 0 {
				t.Fatalf("compare %s %s: exit %d\n%s", a, b, res.code, res.stderr)
			}
			if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
				t.Fatal(err)
			}
			compares[a+" "+b] = rows
		}
		for _, row := range rows {
			if row["metric"] == metric && row["group_by"] == nil {
				if row[field] == nil {
					return sql.NullFloat64{}, true
				}
				return sql.NullFloat64{Float64: row[field].(float64), Valid: true}, true
			}
		}
		t.Errorf("compare %s %s has no row for %s", a, b, metric)
		return sql.NullFloat64{}, false
	}
	t.Errorf("unknown data-key %v", k)
	return sql.NullFloat64{}, false
}

// checkNumbers compares every number on the page with the Parquet files.
func checkNumbers(t *testing.T, bin string, d pageData, dirs []string, kinds ...string) {
	t.Helper()
	if !slices.Equal(d.Runs, dirs) {
		t.Fatalf("page shows runs %v, want %v", d.Runs, dirs)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := &checker{t: t, db: db, runs: dirs, bin: bin}
	compares := map[string][]map[string]any{}
	seen := map[string]bool{}
	checked := 0
	for _, n := range d.Numbers {
		var k []any
		if err := json.Unmarshal([]byte(n.Key), &k); err != nil {
			t.Fatalf("data-key %q: %v", n.Key, err)
		}
		seen[k[0].(string)] = true
		// The text shows the value rounded.
		if n.Value == "null" {
			if n.Text != "–" {
				t.Errorf("%s: null value shown as %q", n.Key, n.Text)
			}
		} else {
			v, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				t.Fatalf("%s: data-value %q", n.Key, n.Value)
			}
			shown, err := strconv.ParseFloat(n.Text, 64)
			digits := 0
			if i := strings.IndexByte(n.Text, '.'); i >= 0 {
				digits = len(n.Text) - i - 1
			}
			if err != nil || math.Abs(shown-v) > 0.5*math.Pow10(-digits)+1e-12 {
				t.Errorf("%s: shows %q for %v", n.Key, n.Text, v)
			}
		}
		want, ok := c.expected(k, compares)
		if !ok {
			continue
		}
		checked++
		got, gotOK := strconv.ParseFloat(n.Value, 64)
		switch {
		case !want.Valid && n.Value != "null":
			t.Errorf("%s: page %s, Parquet null", n.Key, n.Value)
		case want.Valid && (gotOK != nil || math.Abs(got-want.Float64) > 1e-9*math.Max(1, math.Abs(want.Float64))):
			t.Errorf("%s: page %s, Parquet %v", n.Key, n.Value, want.Float64)
		}
	}
	// An interval computed by the report brackets its mean.
	intervals := map[string]map[string]float64{}
	for _, n := range d.Numbers {
		var k []any
		json.Unmarshal([]byte(n.Key), &k)
		if k[0] != "items" || n.Value == "null" {
			continue
		}
		field := k[len(k)-1].(string)
		b, _ := json.Marshal(k[:len(k)-1])
		if intervals[string(b)] == nil {
			intervals[string(b)] = map[string]float64{}
		}
		intervals[string(b)][field], _ = strconv.ParseFloat(n.Value, 64)
	}
	for k, f := range intervals {
		if lo, ok := f["ci_low"]; ok && !(lo <= f["mean"] && f["mean"] <= f["ci_high"]) {
			t.Errorf("%s: interval [%v, %v] does not hold the mean %v", k, lo, f["ci_high"], f["mean"])
		}
	}
	t.Logf("%d numbers on the page, %d recomputed from the Parquet files", len(d.Numbers), checked)
	for _, kind := range kinds {
		if !seen[kind] {
			t.Errorf("the page shows no %s numbers", kind)
		}
	}
}

func TestReportExamplesInChromium(t *testing.T) {
	chromiumPath(t)
	bin := evalflowBinary(t)
	quick, abl := runExamples(t)
	for _, dir := range []string{quick, abl} {
		// evalflow run wrote one already.
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Errorf("evalflow run wrote no report.html: %v", err)
		}
	}
	out := filepath.Join(t.TempDir(), "both.html")
	r := runBin(t, bin, ".", "report", quick, abl, "-out", out)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	for _, x := range []struct {
		name, file string
		dirs       []string
	}{
		{"quickstart", filepath.Join(quick, "report.html"), []string{quick}},
		{"ablation", filepath.Join(abl, "report.html"), []string{abl}},
		{"both", out, []string{quick, abl}},
	} {
		t.Run(x.name, func(t *testing.T) {
			selfContained(t, x.file)
			shot := ""
			if *screenshotDir != "" && x.name != "both" {
				shot = filepath.Join(*screenshotDir, "report-"+x.name+".png")
			}
			d := renderInChromium(t, x.file, shot)
			checkNumbers(t, bin, d, x.dirs, "aggregates", "status", "error_class", "latency", "cost", "refine", "item", "items_total", "items_wrong")
			if d.Plots < 2 {
				t.Errorf("%d plots, want the group charts and the refinement curve", d.Plots)
			}
			for _, o := range d.PlotOverlaps {
				t.Errorf("plot text: %s", o)
			}
			// Wrong and errored items come first.
			for run, items := range d.Items {
				for i := 1; i < len(items); i++ {
					if items[i] && !items[i-1] {
						t.Errorf("run %d: item %d is wrong, after a right one", run, i)
					}
				}
			}
		})
	}
	// The ablation sweep has paired differences of its cells.
	b, _ := os.ReadFile(filepath.Join(abl, "report.html"))
	if !strings.Contains(string(b), `data-key="[&#34;diff&#34;`) {
		t.Error("the sweep's report has no paired differences")
	}
}

// TestReportUnfinishedRun reads a run whose process died: its items are
// only in parts/ and its manifest still says running.
func TestReportUnfinishedRun(t *testing.T) {
	bin := evalflowBinary(t)
	quick, _ := runExamples(t)
	dir := filepath.Join(t.TempDir(), "crashed")
	if err := os.MkdirAll(filepath.Join(dir, rundir.PartsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, quick)
	m.Status = "running"
	mb, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, rundir.ManifestName), mb, 0o644)
	// The first 20 items as a finished part, as a killed run leaves them.
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tb := range []string{"items", "attempts"} {
		q := fmt.Sprintf("COPY (SELECT * FROM read_parquet('%s') WHERE seq < 20) TO '%s' (FORMAT parquet)",
			filepath.Join(quick, tb+".parquet"), filepath.Join(dir, rundir.PartsDir, tb+"-G000-P000000.parquet"))
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	r := runBin(t, bin, ".", "report", dir, "-out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "has not finished") {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	page, _ := os.ReadFile(out)
	for _, want := range []string{"This run has not finished", `data-key="[&#34;items_total&#34;,0]" data-value="20"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(string(page), `[&#34;aggregates&#34;`) {
		t.Error("an unfinished run has no aggregates.parquet, yet the page cites it")
	}
	if _, err := exec.LookPath("chromium"); err == nil || os.Getenv("CI") == "true" {
		// Its numbers, from the parts, render and match.
		d := renderInChromium(t, out, "")
		os.MkdirAll(filepath.Join(dir, "x"), 0o755)
		// The checker reads items.parquet: give it the same rows.
		for _, tb := range []string{"items", "attempts"} {
			os.Link(filepath.Join(dir, rundir.PartsDir, tb+"-G000-P000000.parquet"), filepath.Join(dir, tb+".parquet"))
		}
		checkNumbers(t, bin, d, []string{dir}, "items", "status", "latency", "refine", "item", "items_total")
	}
}

func TestReportArgs(t *testing.T) {
	bin := evalflowBinary(t)
	quick, _ := runExamples(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, 1, "want one or more run directories"},
		{[]string{"report", quick, quick}, 1, "several runs need -out"},
		{[]string{"report", quick, "-items", "-1"}, 1, "-items must be 0 or more"},
		{[]string{"report", t.TempDir(), "-out", "-"}, 2, "not a run directory"},
		{[]string{"reprot"}, 1, `Did you mean "report"?`},
	} {
		r := runBin(t, bin, ".", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, r.code, tc.code, tc.want, r.stderr)
		}
	}
	r := runBin(t, bin, ".", "report", quick, "-out", "-", "-items", "0")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || strings.Contains(r.stdout, `class="item `) {
		t.Errorf("-out - -items 0: exit %d, %d bytes\n%s", r.code, len(r.stdout), r.stderr)
	}
}
