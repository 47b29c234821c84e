package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
)

// FuzzReaders: arbitrary bytes as JSONL, CSV or JSON never panic, and in
// JSONL every non-blank line becomes an item or an invalid item — nothing
// is dropped.
func FuzzReaders(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","x":1}` + "\n" + `{"id":"a"}{"id":"b"}` + "\r" + `["x"]` + "\r\n\n" + `{"id":""}`,
		"id,q\na,x\nb,y,z\n\"c\n",
		`[{"id":"a"},{"id":"b"},3]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		for _, format := range []string{"jsonl", "csv", "json"} {
			p := filepath.Join(dir, "q."+format)
			if err := os.WriteFile(p, src, 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			// The format is set: the test holds each reader to its format
			// (content detection would read a JSON array in q.jsonl as JSON).
			err := Items(&dsl.Dataset{Source: p, Format: format, ID: "id", Question: "question", Gold: "gold", DB: "db", Explicit: map[string]bool{"format": true}},
				func(item.Item) error { n++; return nil })
			if format != "jsonl" || err != nil {
				continue
			}
			lines := 0
			for _, l := range bytes.FieldsFunc(src, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if len(bytes.TrimSpace(l)) > 0 {
					lines++
				}
			}
			if n != lines {
				t.Errorf("%d non-blank lines gave %d items:\n%q", lines, n, src)
			}
		}
	})
}

// FuzzPredictionReaders: arbitrary bytes never panic the Spider and BIRD
// readers or the format detection, and a Spider file has one row per line.
func FuzzPredictionReaders(f *testing.F) {
	for _, seed := range []string{
		"SELECT 1\n\nSELECT 2\tdb\r\nSELECT 3",
		`{"0": "SELECT 1\t----- bird -----\tdb", "1": 7}`,
		`{"id":"a"}` + "\n" + `{"id":"b"}`,
		"\ufeff[{\"id\":1}]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		for _, name := range []string{"p.txt", "p.json"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, src, 0o644); err != nil {
				t.Fatal(err)
			}
			PredictionFormat(p)
			DatasetFormat(p, p, "json")
		}
		n := 0
		if err := ReadRows(filepath.Join(dir, "p.txt"), Spider, func(Row) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		b := bytes.TrimPrefix(src, []byte("\ufeff"))
		b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		want := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			want++
		}
		if n != want {
			t.Errorf("%d lines gave %d rows: %q", want, n, src)
		}
		ReadRows(filepath.Join(dir, "p.json"), Bird, func(Row) error { return nil })
	})
}
