package report

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/rundir"
)

// TestSuiteItems: in a run scored on test suites, the items the suite
// flipped (ex 1, ex_suite 0) follow the wrong ones and are marked; an item
// a generated database separated shows its name and both results there
// side by side, with the verdict's note; one its own database separated
// says so; the others show nothing of the suite.
func TestSuiteItems(t *testing.T) {
	dir := t.TempDir()
	m := rundir.Manifest{RunID: "suite", Status: "complete", Pipeline: "p.hcl", BinaryMetrics: []string{"ex", "ex_suite"}, CISeed: 1}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pv := func(v string) string {
		return `{"columns":["b"],"rows":[["` + v + `"]],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}`
	}
	q := `CREATE TABLE items AS SELECT * FROM (VALUES
		(0, 'right', 'ok', 1.0, 1.0, NULL, NULL, NULL, NULL),
		(1, 'flipped', 'ok', 1.0, 0.0, 'shop_001.sqlite', '` + pv("<y>") + `', '` + pv("w") + `', '{"ex_suite":"test database shop_001.sqlite separates the prediction from the gold: rows differ"}'),
		(2, 'wrong', 'ok', 0.0, 0.0, 'shop.sqlite', NULL, NULL, NULL),
		(3, 'pred_fails', 'ok', 1.0, 0.0, 'shop_002.sqlite', '` + pv("y") + `', NULL, '{"ex_suite":"the prediction fails on test database shop_002.sqlite: no such table: u"}'),
		(4, 'no_suite', 'ok', 1.0, NULL, NULL, NULL, NULL, NULL)
		) v(seq, id, status, ex, ex_suite, ex_suite_db, suite_gold_preview, suite_pred_preview, metric_notes)`
	for _, s := range []string{q,
		`CREATE TABLE out AS SELECT seq::BIGINT AS seq, id, 'q' AS question, 'shop' AS db, 'SELECT b FROM t' AS gold, 'SELECT b FROM t' AS prediction,
			status, '' AS error, '' AS error_class, '' AS error_message, 1::BIGINT AS samples, 1::BIGINT AS attempts, true AS valid, true AS executed,
			1::BIGINT AS gold_rows, 1::BIGINT AS pred_rows, '' AS gold_error, NULL::VARCHAR AS gold_preview, NULL::VARCHAR AS pred_preview,
			1.0::DOUBLE AS duration_ms, ex::DOUBLE AS ex, ex_suite::DOUBLE AS ex_suite, NULL::VARCHAR AS metric_errors, metric_notes::VARCHAR AS metric_notes,
			ex_suite_db::VARCHAR AS ex_suite_db, suite_gold_preview::VARCHAR AS suite_gold_preview, suite_pred_preview::VARCHAR AS suite_pred_preview
			FROM items`,
		`COPY out TO '` + filepath.Join(dir, rundir.ItemsFile) + `' (FORMAT parquet)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rep, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	var order []string
	for _, it := range r.Items {
		order = append(order, it.ID)
	}
	if got, want := strings.Join(order, " "), "wrong flipped pred_fails right no_suite"; got != want {
		t.Errorf("item order %q, want %q (wrong, then flipped by the suite, then right)", got, want)
	}
	if strings.Join(r.SuiteVerdicts, ",") != "ex_suite" || r.WrongTotal != 1 {
		t.Errorf("suite verdicts %v, wrong %d", r.SuiteVerdicts, r.WrongTotal)
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	block := func(seq string) string {
		t.Helper()
		_, rest, ok := strings.Cut(page, `data-seq="`+seq+`"`)
		if !ok {
			t.Fatalf("item %s is not on the page", seq)
		}
		rest, _, _ = strings.Cut(rest, `<div class="item `)
		return rest
	}
	if !strings.Contains(page, `<div class="item bad" data-seq="1">`) || !strings.Contains(page, `<div class="item ok" data-seq="0">`) {
		t.Error("the flipped item is not marked, or the right one is")
	}
	flipped := block("1")
	for _, s := range []string{`class="result suite-gold" data-suite-db="shop_001.sqlite"`, "<td>&lt;y&gt;</td>", `class="result suite-pred" data-suite-db="shop_001.sqlite"`, "<td>w</td>",
		"test database shop_001.sqlite separates the prediction from the gold: rows differ"} {
		if !strings.Contains(flipped, s) {
			t.Errorf("flipped item lacks %q:\n%s", s, flipped)
		}
	}
	if fails := block("3"); !strings.Contains(fails, "did not run") || !strings.Contains(fails, "no such table: u") || !strings.Contains(fails, "<td>y</td>") {
		t.Errorf("the prediction failing on the suite database:\n%s", fails)
	}
	if wrong := block("2"); !strings.Contains(wrong, "the item's own database <code>shop.sqlite</code> separates") || strings.Contains(wrong, "suite-gold") {
		t.Errorf("the item its own database separated:\n%s", wrong)
	}
	for _, seq := range []string{"0", "4"} {
		if b := block(seq); strings.Contains(b, "data-suite-db") {
			t.Errorf("item %s shows a suite database:\n%s", seq, b)
		}
	}
	// The item's ex_suite is a hooked number like every metric value.
	if !strings.Contains(flipped, `data-key="[&#34;item&#34;,0,1,&#34;ex_suite&#34;]" data-value="0"`) {
		t.Errorf("ex_suite of the flipped item is not hooked:\n%s", flipped)
	}
}
