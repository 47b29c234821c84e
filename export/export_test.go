package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

var preds = []Pred{
	{ID: "0", Query: "SELECT name\nFROM singer -- the singers\nWHERE country = 'a\tb'\n\tAND age < 30", DB: "concert_singer"},
	{ID: "1", Query: "", DB: "concert_singer"},
	{ID: "2", Query: "SELECT \"x\" /* a\nb */ FROM t;", DB: "pets_1"},
	{ID: "3", Query: " -- nothing\n;", DB: "pets_1"},
}

func TestWrite(t *testing.T) {
	for _, tt := range []struct{ format, want string }{
		{"bird", "{\n" +
			`    "0": "SELECT name\nFROM singer -- the singers\nWHERE country = 'a\tb'\n\tAND age < 30\t----- bird -----\tconcert_singer",` + "\n" +
			`    "1": "EVALFLOW_NO_PREDICTION\t----- bird -----\tconcert_singer",` + "\n" +
			`    "2": "SELECT \"x\" /* a\nb */ FROM t;\t----- bird -----\tpets_1",` + "\n" +
			`    "3": "EVALFLOW_NO_PREDICTION\t----- bird -----\tpets_1"` + "\n}\n"},
		{"spider", "SELECT name FROM singer WHERE country = 'a b' AND age < 30\n" +
			"EVALFLOW_NO_PREDICTION\n" +
			"SELECT \"x\"  FROM t;\n" +
			"EVALFLOW_NO_PREDICTION\n"},
		{"jsonl", `{"id":"0","pred":"SELECT name\nFROM singer -- the singers\nWHERE country = 'a\tb'\n\tAND age < 30"}` + "\n" +
			`{"id":"1","pred":""}` + "\n" +
			`{"id":"2","pred":"SELECT \"x\" /* a\nb */ FROM t;"}` + "\n" +
			`{"id":"3","pred":" -- nothing\n;"}` + "\n"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, preds); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, "bird", []Pred{{ID: "a"}, {ID: "a"}}); err == nil || !strings.Contains(err.Error(), `id "a" appears twice`) {
		t.Errorf("a repeated id: %v", err)
	}
	if err := Write(&bytes.Buffer{}, "csv", preds); err == nil || !strings.Contains(err.Error(), "use one of bird, spider, jsonl") {
		t.Errorf("unknown format: %v", err)
	}
	var b bytes.Buffer
	if err := Write(&b, "bird", nil); err != nil || b.String() != "{}\n" {
		t.Errorf("no predictions: %q, %v", b.String(), err)
	}
}

// readBack reads an exported file as replay predictions: (id, pred) pairs.
func readBack(t *testing.T, path string) []Pred {
	t.Helper()
	format, err := dataset.PredictionFormat(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Pred
	err = dataset.ReadRows(path, format, func(r dataset.Row) error {
		if r.Err != "" {
			t.Fatalf("%s:%d: %s", path, r.Line, r.Err)
		}
		id, _ := r.Get("id")
		q, _ := r.Get("pred")
		out = append(out, Pred{ID: dataset.Text(id), Query: dataset.Text(q)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip: an exported file read back as predictions gives the same
// (id, query) pairs — for Spider's pred_example.txt and for queries with
// line breaks, tabs, comments and none. A Spider line is the one-line form
// of the query (OneLine); an item without a query reads back empty.
func TestRoundTrip(t *testing.T) {
	in := append([]Pred(nil), preds...)
	spider := filepath.Join("..", "..", "shared", "data", "spider", "evaluation_examples", "pred_example.txt")
	if _, err := os.Stat(spider); err == nil {
		for _, p := range readBack(t, spider) {
			in = append(in, Pred{ID: "s" + p.ID, Query: p.Query, DB: "db"})
		}
	} else if os.Getenv("CI") != "" {
		t.Fatalf("shared data missing: %v", err)
	}
	for _, tt := range []struct{ format, file string }{{"bird", "predict_dev.json"}, {"spider", "pred.txt"}, {"jsonl", "preds.jsonl"}} {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, in); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var want []Pred
			for i, p := range in {
				switch tt.format {
				case "spider":
					p.ID = dataset.Text(int64(i)) // rows, by position
					if p.Query = OneLine(p.Query); p.Query == dataset.NoPrediction {
						p.Query = ""
					}
				case "bird":
					if p.Query == " -- nothing\n;" {
						p.Query = ""
					}
				}
				want = append(want, Pred{ID: p.ID, Query: p.Query})
			}
			if diff := cmp.Diff(want, readBack(t, path)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFromRunDir: a run directory's final predictions, in the run's order,
// whatever order the items finished in.
func TestFromRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	run, err := rundir.Create(dir, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(seq int, id, db string, queries ...string) *item.Record {
		s := &item.Sample{}
		for i, q := range queries {
			s.Attempts = append(s.Attempts, &item.Attempt{Index: i, Query: q})
		}
		r := &item.Record{Seq: seq, Item: item.Item{ID: id, DB: db}, Status: "ok"}
		if len(queries) > 0 {
			r.Samples = []*item.Sample{s}
		}
		return r
	}
	for _, r := range []*item.Record{
		rec(2, "c", "pets_1", "SELECT 3"),
		rec(0, "a", "concert_singer", "SELECT wrong", "SELECT 1"),
		rec(1, "b", "concert_singer"),
	} {
		if err := run.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := FromRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pred{{ID: "a", Query: "SELECT 1", DB: "concert_singer"}, {ID: "b", DB: "concert_singer"}, {ID: "c", Query: "SELECT 3", DB: "pets_1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := FromRunDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a run directory") {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestFromCell: a sweep run's items.parquet holds one row per item and
// cell; export takes one cell, and asks for one when there are several.
func TestFromCell(t *testing.T) {
	dir := t.TempDir()
	w, err := sinks.NewParquet(filepath.Join(dir, rundir.ItemsFile), sinks.Schema{{Name: "seq", Type: table.TypeInt}, {Name: "id", Type: table.TypeString},
		{Name: "db", Type: table.TypeString}, {Name: "prediction", Type: table.TypeString}, {Name: "cell", Type: table.TypeString}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][]any{
		{int64(1), "b", "d", "SELECT 2", "k=1"}, {int64(0), "a", "d", "SELECT 1", "k=1"},
		{int64(0), "a", "d", "SELECT 10", "k=2"}, {int64(1), "b", "d", nil, "k=2"},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := FromCell(dir, "k=2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Pred{{ID: "a", Query: "SELECT 10", DB: "d"}, {ID: "b", DB: "d"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := FromRunDir(dir); err == nil || !strings.Contains(err.Error(), `holds 2 sweep cells; choose one of "k=1", "k=2"`) {
		t.Errorf("FromRunDir on a sweep: %v", err)
	}
	if _, err := FromCell(dir, "k=3"); err == nil || !strings.Contains(err.Error(), `no sweep cell "k=3"`) {
		t.Errorf("an unknown cell: %v", err)
	}
}
