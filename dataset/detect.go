package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Prediction formats beyond the dataset formats. Both are read by ReadRows
// as rows with the fields "id" and "pred" (and "db" when the file names
// one), and written by package export.
const (
	// Spider is a Spider / test-suite pred.txt: one query per line, line i
	// (from 0) the prediction for the item with id "i". A tab ends the
	// query (gold files carry "\tdb_id" there). Every line is a row, an
	// empty one an empty prediction; the line ending of the last line does
	// not start another.
	Spider = "spider"
	// Bird is BIRD's predict_dev.json: one JSON object mapping each
	// question id to "SQL\t----- bird -----\tdb_id".
	Bird = "bird"
)

// BirdSeparator separates the query from the database in a BIRD
// prediction value.
const BirdSeparator = "\t----- bird -----\t"

// NoPrediction is the line package export writes for an item without a
// query: an empty line would end a session in test-suite's reader (and be
// skipped by Spider's), shifting every later prediction, and an empty BIRD
// query runs as a statement that returns no rows. It is a syntax error in
// every SQL dialect, so official scorers count it wrong as evalflow does;
// reading it back gives an empty prediction.
const NoPrediction = "EVALFLOW_NO_PREDICTION"

// PredictionFormats are the formats a replay predictions file may have.
var PredictionFormats = []string{"jsonl", "json", "csv", "parquet", Spider, Bird}

// DatasetFormat decides the format of a dataset file whose block sets
// none: byExt (from the extension, dsl.FormatOf) unless the content of a
// .json or .jsonl file says otherwise — an array is "json", several
// objects are "jsonl". A .json file holding one JSON object is not a
// dataset: the error says what is expected (and when the object maps ids to
// SQL strings, that it looks like BIRD's predictions). name is the file
// as the user gave it, for messages.
func DatasetFormat(path, name, byExt string) (string, error) {
	if byExt != "json" && byExt != "jsonl" {
		return byExt, nil
	}
	s, err := sniffJSON(path)
	if err != nil {
		return "", err
	}
	switch {
	case s.kind == "array":
		return "json", nil
	case s.kind == "lines" || (s.kind == "object" && byExt == "jsonl"):
		return "jsonl", nil
	case s.kind == "object":
		msg := fmt.Sprintf("%s holds one JSON object, not rows: a JSON dataset is an array of objects (as Spider's and BIRD's dev.json), or one object per line (JSONL)", name)
		if s.strings {
			msg += "; an object of SQL strings is BIRD's predictions format (predict_dev.json): pass it as the predictions"
		}
		return "", errors.New(msg)
	}
	return byExt, nil
}

// PredictionFormat decides the format of a predictions file whose stage
// sets none, from its extension and content: .txt and .sql are Spider
// (one query per line); a .json file is an array ("json"), several objects
// ("jsonl"), or one object — BIRD's predictions, unless it has an "id"
// field (then it is a one-row JSONL file); .jsonl, .csv and .parquet are
// what they say. It returns "" for an extension it does not know.
func PredictionFormat(path string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch ext {
	case "txt", "sql":
		return Spider, nil
	case "jsonl", "ndjson":
		return "jsonl", nil
	case "csv", "parquet":
		return ext, nil
	case "json":
	default:
		return "", nil
	}
	s, err := sniffJSON(path)
	if err != nil {
		return "", err
	}
	switch s.kind {
	case "lines":
		return "jsonl", nil
	case "object":
		if s.hasID {
			return "jsonl", nil
		}
		return Bird, nil
	}
	return "json", nil
}

// sniffed is what the start of a JSON-family file holds.
type sniffed struct {
	kind    string // "array", "lines" (more than one value), "object" (exactly one), "" (anything else)
	strings bool   // object: every value is a string
	hasID   bool   // object: it has an "id" key
}

// sniffJSON decodes the first value of a file that starts with '{' (one
// line of a JSONL file, or the whole of a single object) and looks past
// it for another; for '[' it reads nothing more.
func sniffJSON(path string) (sniffed, error) {
	f, err := os.Open(path)
	if err != nil {
		return sniffed{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\ufeff")) {
		br.Discard(3)
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return sniffed{}, nil // empty: the reader decides
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		br.UnreadByte()
		switch c {
		case '[':
			return sniffed{kind: "array"}, nil
		case '{':
		default:
			return sniffed{}, nil
		}
		break
	}
	dec := json.NewDecoder(br)
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		// A first line that is not an object: JSONL, whose reader reports
		// the line.
		return sniffed{kind: "lines"}, nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return sniffed{kind: "lines"}, nil
	}
	s := sniffed{kind: "object", strings: len(obj) > 0}
	for k, v := range obj {
		if k == "id" {
			s.hasID = true
		}
		if len(v) == 0 || v[0] != '"' {
			s.strings = false
		}
	}
	return s, nil
}
