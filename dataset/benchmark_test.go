package dataset

import (
	"context"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// sharedData returns ../shared/data (shareddata.Dir).
func sharedData(t *testing.T) string { return shareddata.Dir(t) }

// defaults is a dataset block that sets only its source, as dsl decodes it.
func defaults(path string) *dsl.Dataset {
	return &dsl.Dataset{Name: "q", Source: path, Format: dsl.FormatOf(path), ID: "id", Question: "question", Gold: "gold", DB: "db"}
}

func open(t *testing.T, ds *dsl.Dataset) (*Reader, []item.Item) {
	t.Helper()
	r, err := Open(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var out []item.Item
	if err := r.Items(context.Background(), func(it item.Item) error { out = append(out, it); return nil }); err != nil {
		t.Fatal(err)
	}
	return r, out
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestSpiderDev: Spider's dev.json as it is — ids are the row indexes,
// gold is query, db is db_id; item i lines up with line i of Spider's
// gold_example.txt (QUERY\tDB).
func TestSpiderDev(t *testing.T) {
	spider := filepath.Join(sharedData(t), "spider")
	r, got := open(t, defaults(filepath.Join(spider, "dev.json")))
	want := Mapping{Format: "json", RowIndex: true, Question: "question", Gold: "query", DB: "db_id", Inferred: []string{"id", "gold", "db"}}
	if diff := cmp.Diff(want, r.Mapping); diff != "" {
		t.Errorf("mapping (-want +got):\n%s", diff)
	}
	var cols []string
	for _, c := range r.Columns {
		cols = append(cols, c.Name)
	}
	// Spider's token lists and parsed sql pass through as JSON text.
	if diff := cmp.Diff([]string{"query_toks", "query_toks_no_value", "question_toks", "sql"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	gold := lines(t, filepath.Join(spider, "evaluation_examples", "gold_example.txt"))
	if len(got) != 1034 || len(gold) != 1034 {
		t.Fatalf("%d items, %d gold lines; want 1034", len(got), len(gold))
	}
	for i, it := range got {
		_, db, _ := strings.Cut(gold[i], "\t")
		if it.Invalid != "" || it.ID != strconv.Itoa(i) || it.DB != db || it.Question == "" || it.Gold == "" {
			t.Fatalf("item %d = %+v; want id %d, db %q (gold_example.txt line %d)", i, it, i, db, i+1)
		}
	}
	first := item.Item{ID: "0", Question: "How many singers do we have?", Gold: "SELECT count(*) FROM singer", DB: "concert_singer"}
	if diff := cmp.Diff(first, got[0], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Fields" }, cmp.Ignore())); diff != "" {
		t.Errorf("item 0 (-want +got):\n%s", diff)
	}
	if v, _ := got[0].Field("query_toks"); v != `["SELECT","count","(","*",")","FROM","singer"]` {
		t.Errorf("query_toks = %v", v)
	}
}

// TestSpiderPredictions: a pred.txt is one prediction per line, id = the
// row index, so pred_example.txt lines up with dev.json's row-index ids.
func TestSpiderPredictions(t *testing.T) {
	path := filepath.Join(sharedData(t), "spider", "evaluation_examples", "pred_example.txt")
	format, err := PredictionFormat(path)
	if err != nil || format != Spider {
		t.Fatalf("PredictionFormat = %q, %v; want spider", format, err)
	}
	src := lines(t, path)
	n := 0
	err = ReadRows(path, format, func(row Row) error {
		id, _ := row.Get("id")
		pred, _ := row.Get("pred")
		if row.Err != "" || id != strconv.Itoa(n) || pred != strings.TrimSpace(src[n]) {
			t.Fatalf("row %d = %+v; want id %d, pred %q", n, row, n, src[n])
		}
		n++
		return nil
	})
	if err != nil || n != 1034 {
		t.Fatalf("%d rows, %v; want 1034", n, err)
	}
}

// TestBird: BIRD's dev.json (question_id, db_id, question, evidence, SQL,
// difficulty) and predict_dev.json, written in BIRD's shapes.
func TestBird(t *testing.T) {
	r, got := open(t, defaults(filepath.Join("testdata", "bird", "dev.json")))
	want := Mapping{Format: "json", ID: "question_id", Question: "question", Gold: "SQL", DB: "db_id", Inferred: []string{"id", "gold", "db"}}
	if diff := cmp.Diff(want, r.Mapping); diff != "" {
		t.Errorf("mapping (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Column{{Name: "evidence", Type: table.TypeString}, {Name: "difficulty", Type: table.TypeString}}, r.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(got) != 3 {
		t.Fatalf("%d items, want 3", len(got))
	}
	it := got[2]
	if it.ID != "2" || it.DB != "financial" || !strings.HasPrefix(it.Gold, "SELECT COUNT(T2.account_id)") || it.Fields[1].Value != "moderate" ||
		!strings.HasPrefix(it.Fields[0].Value.(string), "A3 contains") {
		t.Errorf("item 2 = %+v", it)
	}

	path := filepath.Join("testdata", "bird", "predict_dev.json")
	format, err := PredictionFormat(path)
	if err != nil || format != Bird {
		t.Fatalf("PredictionFormat = %q, %v; want bird", format, err)
	}
	var rows [][]any
	err = ReadRows(path, format, func(row Row) error {
		rows = append(rows, append([]any{row.Line}, row.Values...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]any{
		{2, "0", "SELECT MAX(`Free Meal Count (K-12)` / `Enrollment (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'", "california_schools"},
		{3, "1", "SELECT T2.Zip FROM frpm AS T1 INNER JOIN schools AS T2 ON T1.CDSCode = T2.CDSCode WHERE T1.`Charter School (Y/N)` = 1", "california_schools"},
		{4, "2", "SELECT COUNT(*) FROM account WHERE frequency = 'POPLATEK PO OBRATU'", "financial"},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("predictions (line, id, pred, db) (-want +got):\n%s", diff)
	}
}

// TestExplicitMappingIsStrict: a field the block names is used as it is,
// with no fallback; the fields it maps are not pass-through columns.
func TestExplicitMappingIsStrict(t *testing.T) {
	bird := filepath.Join("testdata", "bird", "dev.json")
	ds := defaults(bird)
	ds.ID, ds.Explicit = "question_id", map[string]bool{"id": true}
	r, got := open(t, ds)
	if len(got) != 3 || got[1].ID != "1" || got[1].Invalid != "" || got[1].Gold == "" {
		t.Errorf("id = \"question_id\": items %+v", got)
	}
	if diff := cmp.Diff([]string{"gold", "db"}, r.Mapping.Inferred); diff != "" {
		t.Errorf("inferred (-want +got):\n%s", diff)
	}

	ds = defaults(bird)
	ds.ID, ds.Explicit = "qid", map[string]bool{"id": true}
	_, got = open(t, ds)
	for _, it := range got {
		if !strings.Contains(it.Invalid, `row has no "qid" value`) {
			t.Errorf("id = \"qid\" on a file without it: %+v, want an invalid item", it)
		}
	}

	ds = defaults(filepath.Join(sharedData(t), "spider", "dev.json"))
	ds.Explicit = map[string]bool{"id": true, "gold": true}
	r, got = open(t, ds)
	if r.Mapping.RowIndex || r.Mapping.Gold != "gold" || r.Mapping.DB != "db_id" {
		t.Errorf("explicit id and gold: mapping %+v", r.Mapping)
	}
	if !strings.Contains(got[0].Invalid, `row has no "id" value`) || got[0].Gold != "" {
		t.Errorf("explicit id = \"id\" on Spider: item 0 = %+v, want invalid", got[0])
	}
	if len(r.Columns) == 0 || r.Columns[0].Name != "query" {
		t.Errorf("query is not mapped, so it passes through: %+v", r.Columns)
	}
}

// TestFallbackRules: the default field wins when some row has it; ids from
// row indexes only for a JSON array; the format from the content.
func TestFallbackRules(t *testing.T) {
	for _, tt := range []struct {
		name, file, content string
		ids                 []string
		mapping             Mapping
	}{
		{"default field first", "q.json", `[{"id":"a","question_id":7,"query":"SELECT 1","gold":"SELECT 2"}]`,
			[]string{"a"}, Mapping{Format: "json", ID: "id", Question: "question", Gold: "gold", DB: "db"}},
		{"a row with the default is enough", "q.jsonl", `{"question_id":1}` + "\n" + `{"id":"b","question_id":2}` + "\n",
			[]string{"q.jsonl:1", "b"}, Mapping{Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"}},
		{"no row index for jsonl", "q.jsonl", `{"query":"SELECT 1","db_id":"x"}` + "\n",
			[]string{"q.jsonl:1"}, Mapping{Format: "jsonl", ID: "id", Question: "question", Gold: "query", DB: "db_id", Inferred: []string{"gold", "db"}}},
		{"JSONL named .json", "q.json", `{"question_id":5,"SQL":"SELECT 1"}` + "\n" + `{"question_id":6}` + "\n",
			[]string{"5", "6"}, Mapping{Format: "jsonl", ID: "question_id", Question: "question", Gold: "SQL", DB: "db", Inferred: []string{"format", "id", "gold"}}},
		{"array named .jsonl", "q.jsonl", `[{"x":1},{"x":2}]`,
			[]string{"0", "1"}, Mapping{Format: "json", RowIndex: true, Question: "question", Gold: "gold", DB: "db", Inferred: []string{"format", "id"}}},
		{"default_db stops the db fallback", "q.jsonl", `{"id":"a","db_id":"x"}` + "\n",
			[]string{"a"}, Mapping{Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"}},
		{"a bad element keeps its index", "q.json", `[{"x":1},3,{"x":2}]`,
			[]string{"0", "q.json:2", "2"}, Mapping{Format: "json", RowIndex: true, Question: "question", Gold: "gold", DB: "db", Inferred: []string{"id"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ds := defaults(write(t, tt.file, tt.content))
			if strings.HasPrefix(tt.name, "default_db") {
				ds.DefaultDB = "main"
			}
			r, got := open(t, ds)
			var ids []string
			for _, it := range got {
				ids = append(ids, it.ID)
			}
			if diff := cmp.Diff(tt.ids, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.mapping, r.Mapping); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJSONObjectDataset: one JSON object is not a dataset; the error says
// what is, and recognises BIRD's predictions.
func TestJSONObjectDataset(t *testing.T) {
	for _, tt := range []struct{ content, want, notWant string }{
		{`{"questions": [{"id": 1}]}`, "q.json holds one JSON object, not rows: a JSON dataset is an array of objects (as Spider's and BIRD's dev.json), or one object per line (JSONL)", "BIRD's predictions"},
		{`{"0": "SELECT 1\t----- bird -----\tdb"}`, "an object of SQL strings is BIRD's predictions format (predict_dev.json): pass it as the predictions", ""},
	} {
		p := write(t, "q.json", tt.content)
		_, err := Open(context.Background(), defaults(p))
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.notWant != "" && strings.Contains(err.Error(), tt.notWant)) {
			t.Errorf("%s: err = %v, want %q", tt.content, err, tt.want)
		}
	}
}

func TestPredictionFormat(t *testing.T) {
	for _, tt := range []struct{ name, content, want string }{
		{"pred.txt", "SELECT 1\n", Spider},
		{"pred.sql", "SELECT 1\n", Spider},
		{"p.json", `[{"id":"a","pred":"SELECT 1"}]`, "json"},
		{"p.json", `{"0": "SELECT 1\t----- bird -----\tdb", "1": "SELECT 2"}`, Bird},
		{"p.json", `{"id": "a", "pred": "SELECT 1"}`, "jsonl"},
		{"p.json", `{"id":"a","pred":"SELECT 1"}` + "\n" + `{"id":"b","pred":"SELECT 2"}`, "jsonl"},
		{"p.jsonl", `{"0": "SELECT 1"}`, "jsonl"},
		{"p.csv", "id,pred\n", "csv"},
		{"p.out", "SELECT 1\n", ""},
	} {
		got, err := PredictionFormat(write(t, tt.name, tt.content))
		if err != nil || got != tt.want {
			t.Errorf("%s %q: %q, %v; want %q", tt.name, tt.content, got, err, tt.want)
		}
	}
}

// TestSpiderLines: every line is a row (an empty one an empty
// prediction); a tab ends the query; CRLF and a byte-order mark are not
// data; the export placeholder reads as no prediction.
func TestSpiderLines(t *testing.T) {
	p := write(t, "pred.txt", "\ufeffSELECT 1 \r\n\r\n  SELECT 2\tconcert_singer\r\n"+NoPrediction+"\r\nSELECT 4")
	var got [][]any
	err := ReadRows(p, Spider, func(row Row) error {
		got = append(got, append([]any{row.Line}, row.Values...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{1, "0", "SELECT 1"}, {2, "1", ""}, {3, "2", "SELECT 2", "concert_singer"}, {4, "3", ""}, {5, "4", "SELECT 4"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBirdErrors: a value that is not a string is a bad row at its line;
// a file that is not one object is an error at its line.
func TestBirdErrors(t *testing.T) {
	p := write(t, "predict_dev.json", "{\n  \"0\": \"SELECT 1\",\n  \"1\": 7,\n  \"2\": \""+NoPrediction+"\\t----- bird -----\\tdb\"\n}\n")
	var got []string
	err := ReadRows(p, Bird, func(row Row) error {
		pred, _ := row.Get("pred")
		got = append(got, strconv.Itoa(row.Line)+" "+row.Err+Text(pred))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2 SELECT 1", `3 the value of "1" is a number, not a string "SQL\t----- bird -----\tdb_id"`, "4 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ content, want string }{
		{`["SELECT 1"]`, "predict_dev.json:1: not a BIRD predictions object: expected a JSON object"},
		{"{\n\"0\": \"SELECT 1\",\n\"1\" \"x\"}", "predict_dev.json:3: not a BIRD predictions object"},
		{`{"0": "SELECT 1"} {}`, "predict_dev.json:1: not a BIRD predictions object: more after the object"},
	} {
		err := ReadRows(write(t, "predict_dev.json", tt.content), Bird, func(Row) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.content, err, tt.want)
		}
	}
}

func TestMappingString(t *testing.T) {
	m := Mapping{Format: "json", RowIndex: true, Question: "question", Gold: "query", DB: "db_id", Inferred: []string{"id", "gold", "db"}}
	want := `format json; id = row index (0..N-1), question = "question", gold = "query", db = "db_id" (inferred: id, gold, db; set them in the dataset block to choose)`
	if got := m.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
