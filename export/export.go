// Package export writes a run's final predictions in the input formats of
// the official scorers, so any number evalflow reports can be checked with
// the official script (docs/formats.md):
//
//	bird    BIRD's predict_dev.json: {"ID": "SQL\t----- bird -----\tDB", ...}
//	spider  a Spider / test-suite pred.txt: one query per line
//	jsonl   evalflow's own replay format: {"id": ..., "pred": ...} per line
//
// Every format keeps the run's order, which is the order the official
// scorers pair predictions with their gold file in (BIRD's evaluation.py
// iterates the object in file order, test-suite reads line by line): check
// a run over the whole dataset, in the dataset's order, against the gold
// file of that dataset. Reading an exported file back as replay
// predictions gives the same (id, query) pairs, except that a Spider line
// has no newlines or tabs (see Write).
package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/sqltext"
)

// Pred is one item's final prediction: sample 0's final query.
type Pred struct {
	ID    string
	Query string
	DB    string
}

// Formats are the formats Write knows.
var Formats = []string{dataset.Bird, dataset.Spider, "jsonl"}

// Write writes preds to w in format, in the order given. An item without a
// query (empty, or only comments and semicolons) is written as
// dataset.NoPrediction in the bird and spider formats — an empty line would
// shift every later line for test-suite (which reads a blank line as the end
// of a session) and Spider's evaluation.py (which skips it), and an empty
// BIRD query runs as a statement that returns no rows — and as "" in jsonl.
//
// bird keeps each query as it is (JSON holds its newlines, and BIRD's
// script executes the string whole). spider puts each query on one line:
// whitespace holding a line break or tab becomes one space, comments that
// would swallow the rest of the line (--) or hold a line break are removed,
// and a line break or tab inside a quoted literal becomes a space (the one
// change of meaning a one-line format forces). bird fails on a repeated id,
// which a JSON object cannot hold.
func Write(w io.Writer, format string, preds []Pred) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case dataset.Bird:
		err = writeBird(bw, preds)
	case dataset.Spider:
		for _, p := range preds {
			bw.WriteString(OneLine(p.Query))
			bw.WriteByte('\n')
		}
	case "jsonl":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		for _, p := range preds {
			if err = enc.Encode(struct {
				ID   string `json:"id"`
				Pred string `json:"pred"`
			}{p.ID, p.Query}); err != nil {
				break
			}
		}
	default:
		return fmt.Errorf("export: unknown format %q; use one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func writeBird(w *bufio.Writer, preds []Pred) error {
	seen := make(map[string]bool, len(preds))
	w.WriteString("{")
	for i, p := range preds {
		if seen[p.ID] {
			return fmt.Errorf("export: id %q appears twice; a BIRD predictions object holds one query per id", p.ID)
		}
		seen[p.ID] = true
		q := p.Query
		if sqltext.Empty(q) {
			q = dataset.NoPrediction
		}
		if i > 0 {
			w.WriteString(",")
		}
		w.WriteString("\n    ")
		w.Write(jsonString(p.ID))
		w.WriteString(": ")
		w.Write(jsonString(q + dataset.BirdSeparator + p.DB))
	}
	if len(preds) > 0 {
		w.WriteString("\n")
	}
	w.WriteString("}\n")
	return nil
}

// jsonString encodes s as a JSON string without HTML escaping (queries
// keep their < and > readable).
func jsonString(s string) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// OneLine is query as one line of a Spider predictions file (see Write);
// dataset.NoPrediction when it holds no statement.
func OneLine(query string) string {
	if sqltext.Empty(query) {
		return dataset.NoPrediction
	}
	var b strings.Builder
	space := func() { // one space where a line break or comment was
		if s := b.String(); s != "" && s[len(s)-1] != ' ' {
			b.WriteByte(' ')
		}
	}
	for _, t := range sqltext.Lex(query) {
		switch {
		case t.Kind == sqltext.Comment && (strings.HasPrefix(t.Text, "--") || strings.ContainsAny(t.Text, "\n\r\t")):
			space()
		case t.Kind == sqltext.Space && strings.ContainsAny(t.Text, "\n\r\t"):
			space()
		default:
			b.WriteString(strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' || r == '\t' {
					return ' '
				}
				return r
			}, t.Text))
		}
	}
	return strings.TrimSpace(b.String())
}
