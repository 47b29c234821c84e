package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func items(t *testing.T, ds *dsl.Dataset) []item.Item {
	t.Helper()
	var out []item.Item
	if err := Items(ds, func(it item.Item) error { out = append(out, it); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func want() []item.Item {
	return []item.Item{
		{ID: "1", Question: "how many", Gold: "SELECT 1", DB: "shop", Fields: []item.Field{{Name: "level", Value: "easy"}}},
		{ID: "b", Question: "which", Gold: "SELECT 2", DB: "shop", Fields: []item.Field{{Name: "level", Value: "hard"}}},
	}
}

func TestFormats(t *testing.T) {
	jsonl := write(t, "q.jsonl", `{"id": 1, "question": "how many", "gold": "SELECT 1", "db": "shop", "level": "easy"}`+"\n\n"+
		`{"id": "b", "question": "which", "gold": "SELECT 2", "db": "shop", "level": "hard"}`+"\n")
	jsonArr := write(t, "q.json", `[{"id": 1, "question": "how many", "gold": "SELECT 1", "db": "shop", "level": "easy"},
		{"id": "b", "question": "which", "gold": "SELECT 2", "db": "shop", "level": "hard"}]`)
	csvf := write(t, "q.csv", "\ufeffid,question,gold,db,level\n1,how many,SELECT 1,shop,easy\nb,which,SELECT 2,shop,hard\n")
	pq := filepath.Join(t.TempDir(), "q.parquet")
	w, err := sinks.NewParquet(pq, sinks.Schema{{Name: "id", Type: table.TypeString}, {Name: "question", Type: table.TypeString},
		{Name: "gold", Type: table.TypeString}, {Name: "db", Type: table.TypeString}, {Name: "level", Type: table.TypeString}})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]any{"1", "how many", "SELECT 1", "shop", "easy"})
	w.Write([]any{"b", "which", "SELECT 2", "shop", "hard"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, format string }{{jsonl, "jsonl"}, {jsonArr, "json"}, {csvf, "csv"}, {pq, "parquet"}} {
		t.Run(tt.format, func(t *testing.T) {
			ds := &dsl.Dataset{Name: "q", Source: tt.path, Format: tt.format, ID: "id", Question: "question", Gold: "gold", DB: "db"}
			if diff := cmp.Diff(want(), items(t, ds)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldMappingAndColumns(t *testing.T) {
	p := write(t, "q.jsonl", `{"qid":"x","nl":"q?","sql":"SELECT 1","n":3,"f":1.5,"ok":true,"tags":["a"],"skip":1}`+"\n")
	ds := &dsl.Dataset{Source: p, Format: "jsonl", ID: "qid", Question: "nl", Gold: "sql", DB: "db", DefaultDB: "main", Columns: []string{"n", "f", "ok", "tags", "absent"}}
	got := items(t, ds)
	w := []item.Item{{ID: "x", Question: "q?", Gold: "SELECT 1", DB: "main", Fields: []item.Field{
		{Name: "n", Value: int64(3)}, {Name: "f", Value: 1.5}, {Name: "ok", Value: true}, {Name: "tags", Value: `["a"]`}, {Name: "absent"}}}}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBadRowsBecomeInvalidItems: a row that cannot be an item is reported
// as FILE:LINE and delivered as an invalid item (id FILE:LINE), never
// dropped, and the rows around it are read.
func TestBadRowsBecomeInvalidItems(t *testing.T) {
	for _, tt := range []struct{ name, bad, want string }{
		{"missing id", `{"question":"x"}`, `q.jsonl:2: row has no "id" value`},
		{"empty id", `{"id":""}`, `q.jsonl:2: row has no "id" value`},
		{"duplicate", `{"id":"a"}`, `q.jsonl:2: duplicate id "a" (first at line 1)`},
		{"bad json", `{"id":`, `q.jsonl:2: not one JSON object`},
		{"two objects", `{"id":"b"}{"id":"c"}`, `q.jsonl:2: not one JSON object: two JSON values on one line`},
		{"two objects spaced", `{"id":"b"} {"id":"c"}`, `q.jsonl:2: not one JSON object: two JSON values on one line`},
		{"not an object", `["b"]`, `q.jsonl:2: not one JSON object: expected a JSON object`},
		{"a number", `7`, `q.jsonl:2: not one JSON object`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, "q.jsonl", `{"id":"a"}`+"\n"+tt.bad+"\n"+`{"id":"z"}`+"\n")
			got := items(t, &dsl.Dataset{Source: p, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"})
			if len(got) != 3 || got[0].ID != "a" || got[2].ID != "z" || got[0].Invalid != "" || got[2].Invalid != "" {
				t.Fatalf("items = %+v, want a, the bad row, z", got)
			}
			if !strings.Contains(got[1].Invalid, tt.want) || !strings.HasPrefix(got[1].Invalid, p) || got[1].ID != "q.jsonl:2" {
				t.Errorf("bad row: id %q invalid %q, want %q", got[1].ID, got[1].Invalid, tt.want)
			}
		})
	}
}

// TestBadCSVRecords: a record with the wrong number of fields and an
// unterminated quote are reported as invalid rows with their line, never
// a crash, and the good rows around them are read.
func TestBadCSVRecords(t *testing.T) {
	p := write(t, "q.csv", "id,question\na,x\nb,y,extra\nc,z\n\"d,w\ne,v\n")
	got := items(t, &dsl.Dataset{Source: p, Format: "csv", ID: "id", Question: "question", Gold: "gold", DB: "db"})
	var ids []string
	for _, it := range got {
		ids = append(ids, it.ID)
	}
	if len(got) < 4 || got[0].ID != "a" || got[1].Invalid == "" || !strings.Contains(got[1].Invalid, "q.csv:3: unreadable CSV record") || got[2].ID != "c" {
		t.Errorf("items %q; want a, an invalid row at line 3, c, then the unterminated quote reported", ids)
	}
	if last := got[len(got)-1]; last.Invalid == "" || !strings.Contains(last.Invalid, "q.csv:5:") {
		t.Errorf("the unterminated quote at line 5: %+v", last)
	}
}

// TestByteOrderMark: a UTF-8 BOM before the first JSONL object is not data.
func TestByteOrderMark(t *testing.T) {
	p := write(t, "q.jsonl", "\ufeff"+`{"id":"a"}`+"\n"+`{"id":"b"}`+"\n")
	got := items(t, &dsl.Dataset{Source: p, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"})
	if len(got) != 2 || got[0].ID != "a" || got[0].Invalid != "" {
		t.Errorf("items = %+v", got)
	}
}

// TestLineEndings: LF, CRLF and CR-only files have the same rows, and line
// numbers count every ending.
func TestLineEndings(t *testing.T) {
	rows := []string{`{"id":"a","n":1}`, `{"id":"b","n":2}`, `{"id":"c","n":3}`}
	for _, sep := range []string{"\n", "\r\n", "\r"} {
		for _, format := range []string{"jsonl", "csv"} {
			content := strings.Join(rows, sep) + sep
			name := "q.jsonl"
			if format == "csv" {
				content = strings.Join([]string{"id,n", "a,1", "b,2", "c,3"}, sep) + sep
				name = "q.csv"
			}
			p := write(t, name, content)
			got := items(t, &dsl.Dataset{Source: p, Format: format, ID: "id", Question: "question", Gold: "gold", DB: "db"})
			if len(got) != 3 || got[2].ID != "c" {
				t.Errorf("%s with %q endings: %d items %+v, want 3", format, sep, len(got), got)
			}
		}
		p := write(t, "q.jsonl", strings.Join([]string{rows[0], `{"id":`, rows[2]}, sep)+sep)
		got := items(t, &dsl.Dataset{Source: p, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"})
		if len(got) != 3 || !strings.Contains(got[1].Invalid, "q.jsonl:2:") {
			t.Errorf("%q endings: bad line not numbered 2: %+v", sep, got)
		}
	}
}

// TestUnionSchemaAndTypeConflicts: the columns are every row's keys (a key
// absent from row 1 is kept), ints widen to floats, and a column whose
// types conflict is text for every row, as written, with one warning.
func TestUnionSchemaAndTypeConflicts(t *testing.T) {
	p := write(t, "q.jsonl", strings.Join([]string{
		`{"id":"a","n":1,"x":1.50}`,
		`{"id":"b","n":2.5,"late":"yes","x":"two"}`,
		`{"id":"c","x":true,"late":null}`,
	}, "\n")+"\n")
	r, err := Open(context.Background(), &dsl.Dataset{Source: p, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wantCols := []Column{{Name: "n", Type: table.TypeFloat}, {Name: "x", Type: table.TypeString, Text: true}, {Name: "late", Type: table.TypeString}}
	if diff := cmp.Diff(wantCols, r.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `q.jsonl:2: column "x"`) || !strings.Contains(r.Warnings[0], "line 1") {
		t.Errorf("warnings = %q, want one naming x and line 2", r.Warnings)
	}
	var got [][]any
	err = r.Items(context.Background(), func(it item.Item) error {
		var vals []any
		for _, f := range it.Fields {
			vals = append(vals, f.Value)
		}
		got = append(got, vals)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{int64(1), "1.50", nil}, {2.5, "two", "yes"}, {nil, "true", nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

// TestFIFOOpenHonoursCancel: opening a FIFO no writer has opened blocks;
// cancelling returns at once. A FIFO with a writer is spooled and read.
func TestFIFOOpenHonoursCancel(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "q.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	ds := &dsl.Dataset{Source: fifo, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Open(ctx, ds)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Open = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Open of a FIFO ignored cancellation")
	}
	// A second FIFO: the first may still see the abandoned open's cleanup.
	fifo = filepath.Join(dir, "q2.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ds = &dsl.Dataset{Source: fifo, Format: "jsonl", ID: "id", Question: "question", Gold: "gold", DB: "db"}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w.WriteString(`{"id":"a"}` + "\n" + `{"id":"b"}` + "\n")
			w.Close()
		}
	}()
	got := items(t, ds)
	if len(got) != 2 || got[1].ID != "b" {
		t.Errorf("items from a FIFO: %+v", got)
	}
}

func TestJSONMustBeAnArray(t *testing.T) {
	p := write(t, "q.json", `{"id":"a"}`)
	err := ReadRows(p, "json", func(Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "array of objects") {
		t.Errorf("err = %v", err)
	}
}

// TestLen: Len, counted by Open's scan, is the number of items Items
// delivers — blank lines skipped, invalid rows counted — so a progress bar
// needs no second pass.
func TestLen(t *testing.T) {
	for _, tt := range []struct{ name, format, content string }{
		{"jsonl", "jsonl", `{"id":"a"}` + "\n\n" + `{"id":` + "\n" + `{"id":"a"}` + "\n" + `7` + "\n" + `{"id":"z"}`},
		{"json", "json", `[{"id":"a"}, {"id":"b"}, {"x":1}]`},
		{"csv", "csv", "id,question\na,x\nb,y\n\"c,z\n"},
		{"empty", "jsonl", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, "q."+tt.format, tt.content)
			ds := &dsl.Dataset{Source: p, Format: tt.format, ID: "id", Question: "question", Gold: "gold", DB: "db"}
			r, err := Open(context.Background(), ds)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := 0
			if err := r.Items(context.Background(), func(item.Item) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			if r.Len() != n {
				t.Errorf("Len() = %d, Items delivered %d", r.Len(), n)
			}
		})
	}
}

// TestDuplicateIDs: every repeat of an id is an invalid item naming the
// line of the first, whichever field the id comes from (declared, default
// or inferred); ids are compared as text (7 and "7" are one id); rows
// without an id do not count.
func TestDuplicateIDs(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		ds            dsl.Dataset
		want          []string // Invalid of each item, "" when valid
	}{{
		name:    "default id",
		content: `{"id":"a"}` + "\n" + `{"id":7}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"7"}` + "\n" + `{"x":1}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"b"}`,
		want:    []string{"", "", `duplicate id "a" (first at line 1)`, `duplicate id "7" (first at line 2)`, `row has no "id" value`, `duplicate id "a" (first at line 1)`, ""},
	}, {
		name:    "inferred question_id",
		content: `{"question_id":1,"id_x":1}` + "\n" + `{"question_id":2}` + "\n" + `{"question_id":1}`,
		want:    []string{"", "", `duplicate id "1" (first at line 1)`},
	}, {
		name:    "declared field",
		content: `{"key":"k","id":"same"}` + "\n" + `{"key":"l","id":"same"}` + "\n" + `{"key":"k","id":"other"}`,
		ds:      dsl.Dataset{ID: "key", Explicit: map[string]bool{"id": true}},
		want:    []string{"", "", `duplicate id "k" (first at line 1)`},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			ds := tt.ds
			ds.Source, ds.Format = write(t, "q.jsonl", tt.content), "jsonl"
			if ds.ID == "" {
				ds.ID = "id"
			}
			ds.Question, ds.Gold, ds.DB = "question", "gold", "db"
			var got []string
			for _, it := range items(t, &ds) {
				got = append(got, it.Invalid)
			}
			for i := range min(len(got), len(tt.want)) {
				if (tt.want[i] == "") != (got[i] == "") || !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("item %d: %q, want %q", i, got[i], tt.want[i])
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("%d items, want %d", len(got), len(tt.want))
			}
		})
	}
}
