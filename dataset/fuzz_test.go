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
			err := Items(&dsl.Dataset{Source: p, Format: format, ID: "id", Question: "question", Gold: "gold", DB: "db"},
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
