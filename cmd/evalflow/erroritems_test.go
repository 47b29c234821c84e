package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evalflow/evalflow/item"
)

// errorItemsRun runs the quickstart replay with the first three questions
// pointing at a database that does not exist: q01..q03 are harness errors
// (their gold cannot run), the other 27 items are scored.
func errorItemsRun(t *testing.T, bin, out string, extra ...string) cmdResult {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(repo, "examples", "quickstart", "data", "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// sed '1,3s/"db": *"shop"/"db": "nosuch"/'
	lines := strings.SplitAfter(string(src), "\n")
	re := regexp.MustCompile(`"db": *"shop"`)
	for i := 0; i < 3 && i < len(lines); i++ {
		if !re.MatchString(lines[i]) {
			t.Fatalf("questions.jsonl line %d has no \"db\": \"shop\": %s", i+1, lines[i])
		}
		lines[i] = re.ReplaceAllString(lines[i], `"db": "nosuch"`)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "q3err.jsonl"), []byte(strings.Join(lines, "")))
	args := []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=q3err.jsonl",
		"-var", "predictions=" + filepath.Join(repo, "examples", "quickstart", "data", "predictions.jsonl"),
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"),
		"-var", "max_iterations=2", "-var", "timeout=5s",
		"-no-cache", "-quiet", "-out", out}
	return runBin(t, bin, dir, append(args, extra...)...)
}

// TestErrorItemsHaveNoScore: an item the harness could not evaluate has no
// metric value in items.parquet (NULL, not 0) unless the metric follows an
// official profile, so avg(ex) over items.parquet is the run's mean; and
// the run names each such item with its error on stderr, whether or not
// -max-errors lets the run pass.
func TestErrorItemsHaveNoScore(t *testing.T) {
	bin := evalflowBinary(t)
	run := filepath.Join(t.TempDir(), "R")
	r := errorItemsRun(t, bin, run, "-max-errors", "5")
	if r.code != exitOK {
		t.Fatalf("run with -max-errors 5: exit %d, want %d\nstderr:\n%s", r.code, exitOK, r.stderr)
	}

	rows := itemRows(t, filepath.Join(run, "items.parquet"))
	if len(rows) != 30 {
		t.Fatalf("items.parquet: %d rows, want 30", len(rows))
	}
	var sum float64
	var n int
	errored := map[string]string{}
	for _, row := range rows {
		id, _ := row["id"].(string)
		if row["status"] == "error" {
			errored[id], _ = row["error_message"].(string)
			if row["ex"] != nil {
				t.Errorf("item %s is in error but its ex is %v, want NULL", id, row["ex"])
			}
			if row["pass_at_k"] != nil {
				t.Errorf("item %s is in error but its pass_at_k is %v, want NULL", id, row["pass_at_k"])
			}
			// bird_soft_f1 is BIRD's own scorer: it counts such an item as
			// 0, and the run's mean counts it.
			if v, ok := row["bird_soft_f1"].(float64); !ok || v != 0 {
				t.Errorf("item %s is in error: bird_soft_f1 = %v, want 0 (official profile)", id, row["bird_soft_f1"])
			}
			continue
		}
		if v, ok := row["ex"].(float64); ok {
			sum += v
			n++
		}
	}
	want := []string{"q01", "q02", "q03"}
	if len(errored) != len(want) {
		t.Fatalf("items in error: %v, want %v", errored, want)
	}
	for _, id := range want {
		if !strings.Contains(errored[id], "database file not found") {
			t.Errorf("item %s: error_message %q, want database file not found", id, errored[id])
		}
	}

	m := readManifest(t, run)
	mean := m.Metrics["ex"]
	if mean == nil || n != 27 {
		t.Fatalf("manifest ex mean %v over %d scored items, want a mean over 27", mean, n)
	}
	if got := sum / float64(n); math.Abs(got-*mean) > 1e-12 {
		t.Errorf("mean of items.parquet ex %v != manifest ex %v", got, *mean)
	}
	// What the user ran: avg(ex) over the items view, and the aggregates'
	// own row, both through evalflow query (DuckDB).
	q := runBin(t, bin, ".", "query", "-format", "json", run,
		"SELECT (SELECT avg(ex) FROM items) AS items_avg, (SELECT count(ex) FROM items) AS items_n, "+
			"(SELECT mean FROM aggregates WHERE group_by = 'all' AND metric = 'ex') AS agg_mean, "+
			"(SELECT n FROM aggregates WHERE group_by = 'all' AND metric = 'ex') AS agg_n, "+
			"(SELECT avg(bird_soft_f1) FROM items) AS f1_items, "+
			"(SELECT mean FROM aggregates WHERE group_by = 'all' AND metric = 'bird_soft_f1') AS f1_agg")
	if q.code != 0 {
		t.Fatalf("evalflow query: exit %d\n%s", q.code, q.stderr)
	}
	var res []map[string]any
	if err := json.Unmarshal([]byte(q.stdout), &res); err != nil || len(res) != 1 {
		t.Fatalf("evalflow query output %q: %v", q.stdout, err)
	}
	num := func(k string) float64 {
		switch v := res[0][k].(type) {
		case float64:
			return v
		case string:
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
		t.Fatalf("evalflow query: %s = %#v, want a number", k, res[0][k])
		return 0
	}
	if a, g := num("items_avg"), num("agg_mean"); math.Abs(a-g) > 1e-12 || math.Abs(a-*mean) > 1e-12 {
		t.Errorf("avg(ex) over items = %v, aggregates mean = %v, manifest = %v: want all equal", a, g, *mean)
	}
	if a, g := num("items_n"), num("agg_n"); a != 27 || g != 27 {
		t.Errorf("count(ex) over items = %v, aggregates n = %v, want 27", a, g)
	}
	if a, g := num("f1_items"), num("f1_agg"); math.Abs(a-g) > 1e-12 {
		t.Errorf("avg(bird_soft_f1) over items = %v, aggregates mean = %v (official profile: error items count as 0 in both)", a, g)
	}

	checkNamed := func(stderr string) {
		t.Helper()
		for _, id := range want {
			line := fmt.Sprintf("\n  %s: database file not found: ", id)
			if !strings.Contains(stderr, line) {
				t.Errorf("stderr does not name %s with its error (want a line %q):\n%s", id, strings.TrimSpace(line), stderr)
			}
		}
		if i, j, k := strings.Index(stderr, "  q01: "), strings.Index(stderr, "  q02: "), strings.Index(stderr, "  q03: "); !(i < j && j < k) {
			t.Errorf("stderr names the error items out of dataset order:\n%s", stderr)
		}
		if strings.Contains(stderr, "… and") {
			t.Errorf("stderr says there are more error items than the three:\n%s", stderr)
		}
	}
	checkNamed(r.stderr)

	// Without -max-errors the run fails, and still names them.
	r = errorItemsRun(t, bin, filepath.Join(t.TempDir(), "R0"))
	if r.code != exitRun {
		t.Fatalf("run without -max-errors: exit %d, want %d\nstderr:\n%s", r.code, exitRun, r.stderr)
	}
	checkNamed(r.stderr)
	if !strings.Contains(r.stderr, "3 of 30 items are in error") {
		t.Errorf("stderr lacks the -max-errors failure:\n%s", r.stderr)
	}
}

// TestErrorItemsListing: the first ten items in error by seq, whatever
// order they finish in, one line each with the message folded and cut,
// then how many more and how to list them.
func TestErrorItemsListing(t *testing.T) {
	var e errorItems
	long := strings.Repeat("é", 150) + "\nsecond line"
	for seq := 14; seq >= 0; seq-- {
		rec := &item.Record{Seq: seq, Item: item.Item{ID: fmt.Sprintf("x%02d", seq)}, Status: "error"}
		switch {
		case seq == 0:
			rec.Error = "stage.generate on item \"x00\": boom\n  at line 2"
		case seq == 1:
			rec.Error = "whole-item error"
			rec.Samples = []*item.Sample{{Attempts: []*item.Attempt{{ErrorMessage: long}}}}
		default:
			rec.Error = fmt.Sprintf("error %d", seq)
		}
		e.add("", rec)
		// Items not in error are not listed.
		e.add("", &item.Record{Seq: 100 + seq, Item: item.Item{ID: "ok"}, Status: "ok"})
	}
	var b bytes.Buffer
	e.print(&b, "/tmp/my run")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines, want a heading, 10 items and a tail:\n%s", len(lines), b.String())
	}
	if !strings.Contains(lines[0], "15 items are in error") {
		t.Errorf("heading %q, want the count 15", lines[0])
	}
	if lines[1] != `  x00: stage.generate on item "x00": boom at line 2` {
		t.Errorf("line for x00: %q", lines[1])
	}
	l := lines[2]
	if !strings.HasPrefix(l, "  x01: éé") || !strings.HasSuffix(l, "…") || strings.Contains(l, "whole-item") {
		t.Errorf("line for x01 (final attempt's message, cut): %q", l)
	}
	msg := strings.TrimPrefix(l, "  x01: ")
	if len(msg) > maxErrorMessage+len("…") || len(msg) < maxErrorMessage-4 || !utf8.ValidString(msg) {
		t.Errorf("x01's message is %d bytes (want cut near %d at a rune boundary): %q", len(msg), maxErrorMessage, msg)
	}
	for i := 2; i < 10; i++ {
		if want := fmt.Sprintf("  x%02d: error %d", i, i); lines[i+1] != want {
			t.Errorf("line %d = %q, want %q", i+1, lines[i+1], want)
		}
	}
	wantTail := `  … and 5 more (evalflow query '/tmp/my run' "SELECT id, error_message FROM items WHERE status = 'error'")`
	if lines[11] != wantTail {
		t.Errorf("tail %q, want %q", lines[11], wantTail)
	}

	var none errorItems
	none.add("", &item.Record{Item: item.Item{ID: "a"}, Status: "ok"})
	b.Reset()
	none.print(&b, "R")
	if b.Len() != 0 {
		t.Errorf("no items in error, yet printed %q", b.String())
	}
}
