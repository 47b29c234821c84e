package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Column is one pass-through column of a dataset: the union, over every
// row, of the fields the dataset block does not map to id, question, gold
// or db, typed from all their values.
type Column struct {
	Name string
	Type table.Type
	// Text is set when the column's values have conflicting types: every
	// value is delivered as text, as written in the file.
	Text bool
}

// Reader reads a dataset strictly: the schema of every row first, then the
// items. A source that is not a regular file (a FIFO, a device) is copied
// once to a temporary file so it can be read twice.
type Reader struct {
	ds       *dsl.Dataset
	path     string // the file read (the source, or its spooled copy)
	spooled  bool
	Columns  []Column
	Warnings []string
	// Mapping is how the file was read: its format and the field each
	// item attribute came from. Fixed by Open.
	Mapping Mapping
	// rows is the number of rows Open's scan read: what Len reports.
	rows int
	// seed hashes ids; dups holds the hashes of the ids more than one row
	// has (nil: none), found by Open's scan, so Items tracks those only.
	seed maphash.Seed
	dups map[uint64]struct{}
}

// Len is the number of items Items delivers: every row of the file, the
// invalid ones included (each becomes an item in error). Open counted them
// while it read the schema, so a caller that needs the total (a progress
// bar) does not read the file again.
func (r *Reader) Len() int { return r.rows }

// Mapping says how a dataset file became items: the format it was read as
// and the field each item attribute was read from. An attribute the dataset
// block sets is used as it is; one it leaves out falls back, when its
// default field is in no row, to the first of these present in some row:
//
//	id    id, question_id, else (a JSON array only) the row index "0".."N-1"
//	gold  gold, query (Spider), SQL (BIRD)
//	db    db, db_id (Spider, BIRD); none when the block sets default_db
//
// Row-index ids pair a Spider dev.json with a pred.txt (line i is item "i")
// and with BIRD's predict_dev.json keys.
type Mapping struct {
	Format   string
	ID       string // "" when RowIndex
	RowIndex bool   // ids are the 0-based element indexes of a JSON array
	Question string
	Gold     string
	DB       string
	// Inferred names what was decided from the file rather than taken from
	// the block or its defaults, in the order format, id, gold, db; nil when
	// nothing was. A run prints the mapping once when it is not nil.
	Inferred []string
}

// String describes the mapping in one line, for a notice such as
// `dataset "q": format json; id = row index, question = "question", gold =
// "query", db = "db_id" (inferred: id, gold, db)`.
func (m Mapping) String() string {
	id := strconv.Quote(m.ID)
	if m.RowIndex {
		id = "row index (0..N-1)"
	}
	s := fmt.Sprintf("format %s; id = %s, question = %q, gold = %q, db = %q", m.Format, id, m.Question, m.Gold, m.DB)
	if len(m.Inferred) > 0 {
		s += " (inferred: " + strings.Join(m.Inferred, ", ") + "; set them in the dataset block to choose)"
	}
	return s
}

// fallbacks are the field names tried, after the block's default, for the
// attributes it leaves out.
var fallbacks = []struct {
	attr  string
	names []string
}{
	{"id", []string{"id", "question_id"}},
	{"gold", []string{"gold", "query", "SQL"}},
	{"db", []string{"db", "db_id"}},
}

// Open checks and spools the source and reads the schema of every row. It
// returns promptly once ctx is done, also while opening a FIFO no writer
// has opened yet.
func Open(ctx context.Context, ds *dsl.Dataset) (*Reader, error) {
	r := &Reader{ds: ds, path: ds.Source}
	r.Mapping = Mapping{Format: ds.Format, ID: ds.ID, Question: ds.Question, Gold: ds.Gold, DB: ds.DB}
	st, err := os.Stat(ds.Source)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		tmp, err := spool(ctx, ds.Source)
		if err != nil {
			return nil, err
		}
		r.path, r.spooled = tmp, true
	}
	if !ds.Explicit["format"] {
		f, err := DatasetFormat(r.path, ds.Source, ds.Format)
		if err != nil {
			r.Close()
			return nil, err
		}
		if f != ds.Format {
			r.Mapping.Format = f
			r.Mapping.Inferred = append(r.Mapping.Inferred, "format")
		}
	}
	if err := r.scan(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close removes a spooled copy.
func (r *Reader) Close() error {
	if r.spooled {
		return os.Remove(r.path)
	}
	return nil
}

// spool copies a non-seekable source to a temporary file, honouring ctx
// while the open blocks (a FIFO waits for its writer) and while it reads.
func spool(ctx context.Context, src string) (string, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(src)
		ch <- opened{f, err}
	}()
	var f *os.File
	select {
	case o := <-ch:
		if o.err != nil {
			return "", o.err
		}
		f = o.f
	case <-ctx.Done():
		// Unblock the pending open of a FIFO by opening its other end (the
		// open may not have started yet: keep trying until it returns).
		go func() {
			for {
				select {
				case o := <-ch:
					if o.f != nil {
						o.f.Close()
					}
					return
				default:
				}
				if w, err := os.OpenFile(src, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		return "", context.Cause(ctx)
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	out, err := os.CreateTemp("", "evalflow-dataset-*"+filepath.Ext(src))
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("reading %s: %w", src, err)
	}
	return out.Name(), nil
}

// scan reads every row once for the union of their pass-through fields and
// their types, and settles the Mapping (the fallbacks need every row's
// field names). Integers and floats widen to float; any other mix makes the
// column text, with one warning naming it and the first conflicting line.
// Fields the mapping reads are not pass-through columns (unless the block
// lists them in columns).
func (r *Reader) scan(ctx context.Context) error {
	ds := r.ds
	// The id field is only settled once every row is read (resolve): the
	// ids of each field it may be are hashed as they come, and the
	// duplicates of the one it is are kept (findDups).
	r.seed = maphash.MakeSeed()
	var idNames []string
	for _, n := range append([]string{r.Mapping.ID}, fallbacks[0].names...) {
		if !slices.Contains(idNames, n) && (n == r.Mapping.ID || !ds.Explicit["id"]) {
			idNames = append(idNames, n)
		}
	}
	idHashes := make([][]uint64, len(idNames))
	idx := map[string]int{}
	firstLine := map[string]int{}
	seen := map[string]bool{} // every field name of every row
	type warning struct{ col, msg string }
	var warns []warning
	var cols []Column
	if ds.Columns != nil {
		for _, c := range ds.Columns {
			idx[c] = len(cols)
			cols = append(cols, Column{Name: c, Type: table.TypeNull})
		}
	}
	err := ReadRows(r.path, r.Mapping.Format, func(row Row) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r.rows++
		for i, n := range idNames {
			if v, ok := row.Get(n); ok && v != nil {
				if id := Text(v); id != "" {
					idHashes[i] = append(idHashes[i], maphash.String(r.seed, id))
				}
			}
		}
		for i, n := range row.Names {
			j, ok := idx[n]
			if !ok {
				if ds.Columns != nil {
					seen[n] = true
					continue
				}
				j = len(cols)
				idx[n] = j
				cols = append(cols, Column{Name: n, Type: table.TypeNull})
			}
			t := typeOf(Scalar(row.Values[i]))
			c := &cols[j]
			switch {
			case t == table.TypeNull || c.Text:
			case c.Type == table.TypeNull:
				c.Type = t
				firstLine[n] = row.Line
			case c.Type == t:
			case (c.Type == table.TypeInt && t == table.TypeFloat) || (c.Type == table.TypeFloat && t == table.TypeInt):
				c.Type = table.TypeFloat
			default:
				warns = append(warns, warning{n, fmt.Sprintf("%s:%d: column %q holds a %s here but a %s at line %d: every value of it is written as text, as in the file",
					ds.Source, row.Line, n, t, c.Type, firstLine[n])})
				c.Type, c.Text = table.TypeString, true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for n := range idx {
		seen[n] = true
	}
	r.resolve(seen)
	if !r.Mapping.RowIndex {
		if i := slices.Index(idNames, r.Mapping.ID); i >= 0 {
			r.dups = findDups(idHashes[i])
		}
	}
	mapped := map[string]bool{r.Mapping.Question: true, r.Mapping.Gold: true, r.Mapping.DB: true}
	if !r.Mapping.RowIndex {
		mapped[r.Mapping.ID] = true
	}
	kept := cols[:0]
	for _, c := range cols {
		if ds.Columns == nil && mapped[c.Name] {
			continue
		}
		if c.Type == table.TypeNull {
			c.Type = table.TypeString
		}
		kept = append(kept, c)
	}
	r.Columns = kept
	for _, w := range warns {
		if ds.Columns != nil || !mapped[w.col] {
			r.Warnings = append(r.Warnings, w.msg)
		}
	}
	return nil
}

// findDups returns the values h holds more than once (nil: none); it sorts h.
func findDups(h []uint64) map[uint64]struct{} {
	slices.Sort(h)
	var dups map[uint64]struct{}
	for i := 1; i < len(h); i++ {
		if h[i] == h[i-1] {
			if dups == nil {
				dups = map[uint64]struct{}{}
			}
			dups[h[i]] = struct{}{}
		}
	}
	return dups
}

// resolve settles the id, gold and db fields the block leaves out, given
// every field name of the file.
func (r *Reader) resolve(seen map[string]bool) {
	m := &r.Mapping
	for _, fb := range fallbacks {
		if r.ds.Explicit[fb.attr] || (fb.attr == "db" && r.ds.DefaultDB != "") {
			continue // default_db says the rows have no db field
		}
		field := map[string]*string{"id": &m.ID, "gold": &m.Gold, "db": &m.DB}[fb.attr]
		if seen[*field] {
			continue
		}
		found := false
		for _, n := range fb.names {
			if seen[n] {
				*field, found = n, true
				m.Inferred = append(m.Inferred, fb.attr)
				break
			}
		}
		if !found && fb.attr == "id" && m.Format == "json" {
			m.ID, m.RowIndex = "", true
			m.Inferred = append(m.Inferred, "id")
		}
	}
}

func typeOf(v table.Value) table.Type {
	switch v.(type) {
	case nil:
		return table.TypeNull
	case int64:
		return table.TypeInt
	case float64:
		return table.TypeFloat
	case bool:
		return table.TypeBool
	}
	return table.TypeString
}

// Items streams the dataset's rows as items, mapped as Mapping says, with
// Fields aligned to Columns (nil where a row lacks a field). A
// row that cannot be an item — not one JSON object, no id, an id seen
// before — is delivered with Invalid set to "FILE:LINE: message" and the
// id "FILE:LINE", so it is reported and counted, never dropped: item
// identity must be stable for caches, resumes and comparisons.
func (r *Reader) Items(ctx context.Context, fn func(item.Item) error) error {
	ds := r.ds
	// Duplicate ids are found through 64-bit hashes of the ids, not the
	// ids themselves. Open's scan sorted every id's hash and kept those
	// more than one row has (dups); only those are tracked here, with the
	// line each was first seen on, so the memory is the duplicates', not
	// 16 bytes and more per item for the whole run. A false duplicate
	// needs a 64-bit collision (~3e-8 at a million items).
	first := map[uint64]int{}
	base := filepath.Base(ds.Source)
	m := r.Mapping
	return ReadRows(r.path, m.Format, func(row Row) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		it := item.Item{}
		invalid := func(msg string) error {
			it.ID = base + ":" + strconv.Itoa(row.Line)
			it.Invalid = fmt.Sprintf("%s:%d: %s", ds.Source, row.Line, msg)
			return fn(it)
		}
		if row.Err != "" {
			return invalid(row.Err)
		}
		if m.RowIndex {
			it.ID = strconv.Itoa(row.Line - 1)
		} else {
			id, ok := row.Get(m.ID)
			if !ok || id == nil || Text(id) == "" {
				return invalid(fmt.Sprintf("row has no %q value (set id = \"...\" in dataset %q to name the id field)", m.ID, ds.Name))
			}
			it.ID = Text(id)
		}
		if r.dups != nil {
			h := maphash.String(r.seed, it.ID)
			if _, twice := r.dups[h]; twice {
				if prev, dup := first[h]; dup {
					return invalid(fmt.Sprintf("duplicate id %q (first at line %d)", it.ID, prev))
				}
				first[h] = row.Line
			}
		}
		if v, ok := row.Get(m.Question); ok {
			it.Question = Text(v)
		}
		if v, ok := row.Get(m.Gold); ok {
			it.Gold = Text(v)
		}
		if v, ok := row.Get(m.DB); ok && v != nil {
			it.DB = Text(v)
		} else {
			it.DB = ds.DefaultDB
		}
		it.Fields = make([]item.Field, len(r.Columns))
		for i, c := range r.Columns {
			v, _ := row.Get(c.Name)
			var val table.Value = Scalar(v)
			if c.Text && val != nil {
				if _, isText := val.(string); !isText {
					val = asWritten(row.Src, c.Name, v)
				}
			}
			it.Fields[i] = item.Field{Name: c.Name, Value: val}
		}
		return fn(it)
	})
}

// asWritten returns a field's JSON text as it appears in the row (1.50
// stays "1.50"), falling back to its rendering.
func asWritten(src []byte, name string, v any) string {
	if len(src) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(src, &m) == nil {
			if raw, ok := m[name]; ok {
				return strings.TrimSpace(string(raw))
			}
		}
	}
	return Text(v)
}

// Items reads ds with a background context (tests and tools).
func Items(ds *dsl.Dataset, fn func(item.Item) error) error {
	r, err := Open(context.Background(), ds)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Items(context.Background(), fn)
}

// Text renders a field as a string: strings as they are, numbers in
// shortest form, nil as "".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return table.Format(table.Normalize(v))
}

// Scalar keeps scalars and renders lists and objects as JSON text, so
// pass-through columns always have a flat type.
func Scalar(v any) table.Value {
	switch x := v.(type) {
	case nil, string, int64, float64, bool:
		return x
	case []any, map[string]any:
		return jsonText(x)
	}
	return table.Normalize(v)
}
