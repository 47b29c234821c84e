package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

var (
	predNames   = []string{"id", "pred"}
	predDBNames = []string{"id", "pred", "db"}
)

// readSpider reads one query per line: row i (Line i+1) has id "i". A tab
// ends the query (the rest is the db of a gold-style line); surrounding
// whitespace is trimmed, as test-suite strips each line.
func readSpider(r io.Reader, path string, fn func(Row) error) error {
	lr := newLineReader(r)
	for {
		b, line, err := lr.next()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if b != nil {
			q, db, hasDB := strings.Cut(string(b), "\t")
			q = strings.TrimSpace(q)
			if q == NoPrediction {
				q = ""
			}
			row := Row{Line: line, Names: predNames, Values: []any{strconv.Itoa(line - 1), q}}
			if hasDB {
				row.Names, row.Values = predDBNames, append(row.Values, strings.TrimSpace(db))
			}
			if ferr := fn(row); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// readBird reads BIRD's predictions object: each key is an id, each value
// "SQL\t----- bird -----\tdb" (a value without the separator is all query).
// Row.Line is the line of the key. A value that is not a string is a row
// with Err; a file that is not one JSON object is an error.
func readBird(f *os.File, path string, fn func(Row) error) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := json.NewDecoder(bytes.NewReader(data))
	line, seen := 1, 0
	lineAt := func(off int64) int {
		line += bytes.Count(data[seen:off], []byte{'\n'})
		seen = int(off)
		return line
	}
	fail := func(err error) error {
		return fmt.Errorf("%s:%d: not a BIRD predictions object: %v", path, lineAt(dec.InputOffset()), err)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(fmt.Errorf("expected a JSON object mapping question ids to \"SQL%sdb_id\"", strings.ReplaceAll(BirdSeparator, "\t", `\t`)))
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		row := Row{Line: lineAt(dec.InputOffset())}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(err)
		}
		key := kt.(string)
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			row.Err = fmt.Sprintf("the value of %q is %s, not a string \"SQL%sdb_id\"", key, jsonKind(raw), strings.ReplaceAll(BirdSeparator, "\t", `\t`))
		} else {
			q, db, hasDB := strings.Cut(v, BirdSeparator)
			if q == NoPrediction {
				q = ""
			}
			row.Names, row.Values = predNames, []any{key, q}
			if hasDB {
				row.Names, row.Values = predDBNames, append(row.Values, db)
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(fmt.Errorf("more after the object"))
	}
	return nil
}

func jsonKind(raw json.RawMessage) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return "empty"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "a list"
	case t[0] == 'n':
		return "null"
	case t[0] == 't' || t[0] == 'f':
		return "a boolean"
	}
	return "a number"
}
