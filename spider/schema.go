package spider

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // get_schema reads the .sqlite file
)

// Schema is process_sql.Schema: table names and their column names, all
// lower-cased, plus the id map ("t.c" → "__t.c__", "t" → "__t__",
// "*" → "__all__"). FK is evaluation.py's foreign-key map for the database
// (build_foreign_key_map), empty when unknown. A Schema is read-only after
// construction and safe for concurrent use.
type Schema struct {
	Tables []string            // in sqlite_master order
	Cols   map[string][]string // table → columns, in PRAGMA table_info order
	idMap  map[string]string
	FK     map[string]string
}

// NewSchema builds a Schema from table → columns (names are lower-cased as
// process_sql does). order fixes the table order; tables missing from it
// are appended in sorted order.
func NewSchema(order []string, cols map[string][]string) *Schema {
	s := &Schema{Cols: map[string][]string{}, idMap: map[string]string{"*": "__all__"}, FK: map[string]string{}}
	seen := map[string]bool{}
	add := func(t string) {
		lt := strings.ToLower(t)
		if seen[lt] {
			return
		}
		seen[lt] = true
		s.Tables = append(s.Tables, lt)
		var cs []string
		for _, c := range cols[t] {
			cs = append(cs, strings.ToLower(c))
		}
		s.Cols[lt] = cs
	}
	for _, t := range order {
		add(t)
	}
	var rest []string
	for t := range cols {
		rest = append(rest, t)
	}
	slices.Sort(rest)
	for _, t := range rest {
		add(t)
	}
	for _, t := range s.Tables {
		for _, c := range s.Cols[t] {
			s.idMap[t+"."+c] = "__" + t + "." + c + "__"
		}
	}
	for _, t := range s.Tables {
		s.idMap[t] = "__" + t + "__"
	}
	return s
}

func (s *Schema) hasTable(t string) bool { _, ok := s.Cols[t]; return ok }

// SchemaFromSQLite reads a schema the way process_sql.get_schema does:
// `SELECT name FROM sqlite_master WHERE type='table'`, then
// `PRAGMA table_info` for each, lower-cased. Only names are read, so a
// schema-only database (no rows) is enough.
func SchemaFromSQLite(path string) (*Schema, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type='table'")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, strings.ToLower(n))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	cols := map[string][]string{}
	for _, t := range tables {
		r, err := db.Query("PRAGMA table_info(" + t + ")")
		if err != nil {
			return nil, fmt.Errorf("%s: table %s: %w", path, t, err)
		}
		ct, _ := r.Columns()
		for r.Next() {
			dst := make([]any, len(ct))
			var name string
			for i := range dst {
				if ct[i] == "name" {
					dst[i] = &name
				} else {
					dst[i] = new(any)
				}
			}
			if err := r.Scan(dst...); err != nil {
				r.Close()
				return nil, err
			}
			cols[t] = append(cols[t], strings.ToLower(name))
		}
		r.Close()
		if err := r.Err(); err != nil {
			return nil, err
		}
	}
	return NewSchema(tables, cols), nil
}

// tablesEntry is one database of Spider's tables.json.
type tablesEntry struct {
	DBID            string   `json:"db_id"`
	TableNamesOrig  []string `json:"table_names_original"`
	ColumnNamesOrig [][2]any `json:"column_names_original"`
	ForeignKeys     [][2]int `json:"foreign_keys"`
}

// ForeignKeyMaps reads tables.json and returns evaluation.py's
// build_foreign_key_map for every db_id: each foreign-key-connected column
// set maps every member to its smallest column index's "__t.c__" name.
// Like the reference, a key pair joins the first existing set holding
// either column, without merging two existing sets.
func ForeignKeyMaps(tablesJSON string) (map[string]map[string]string, error) {
	b, err := os.ReadFile(tablesJSON)
	if err != nil {
		return nil, err
	}
	var entries []tablesEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", tablesJSON, err)
	}
	out := make(map[string]map[string]string, len(entries))
	for _, e := range entries {
		m, err := foreignKeyMap(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", tablesJSON, e.DBID, err)
		}
		out[e.DBID] = m
	}
	return out, nil
}

func foreignKeyMap(e tablesEntry) (map[string]string, error) {
	cols := make([]string, len(e.ColumnNamesOrig))
	for i, c := range e.ColumnNamesOrig {
		ti, ok := c[0].(float64)
		name, ok2 := c[1].(string)
		if !ok || !ok2 {
			return nil, fmt.Errorf("column_names_original[%d] is not [int, string]", i)
		}
		if ti >= 0 {
			if int(ti) >= len(e.TableNamesOrig) {
				return nil, fmt.Errorf("column %d names table %d of %d", i, int(ti), len(e.TableNamesOrig))
			}
			cols[i] = "__" + strings.ToLower(e.TableNamesOrig[int(ti)]) + "." + strings.ToLower(name) + "__"
		} else {
			cols[i] = "__all__"
		}
	}
	var sets []map[int]bool
	for _, fk := range e.ForeignKeys {
		k1, k2 := fk[0], fk[1]
		var set map[int]bool
		for _, s := range sets {
			if s[k1] || s[k2] {
				set = s
				break
			}
		}
		if set == nil {
			set = map[int]bool{}
			sets = append(sets, set)
		}
		set[k1], set[k2] = true, true
	}
	m := map[string]string{}
	for _, s := range sets {
		var ids []int
		for k := range s {
			ids = append(ids, k)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if id < 0 || id >= len(cols) || ids[0] < 0 || ids[0] >= len(cols) {
				return nil, fmt.Errorf("foreign key column %d out of range", id)
			}
			m[cols[id]] = cols[ids[0]]
		}
	}
	return m, nil
}

// Catalog resolves a db_id to its Schema: columns from
// <dir>/<db>/<db>.sqlite (or <dir>/<db>.sqlite), foreign keys from
// tables.json, as evaluation.py combines --db and --table. Schemas are read
// once and cached; a Catalog is safe for concurrent use.
type Catalog struct {
	dir string
	fk  map[string]map[string]string

	mu    sync.Mutex
	cache map[string]*Schema
}

// LoadSchemas reads tables.json and returns a Catalog over the .sqlite
// files under dbDir.
func LoadSchemas(tablesJSON, dbDir string) (*Catalog, error) {
	fk, err := ForeignKeyMaps(tablesJSON)
	if err != nil {
		return nil, err
	}
	return &Catalog{dir: dbDir, fk: fk, cache: map[string]*Schema{}}, nil
}

// Schema returns the schema of db. A db_id absent from tables.json is an
// error: evaluation.py raises KeyError on kmaps[db_name].
func (c *Catalog) Schema(db string) (*Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.cache[db]; ok {
		return s, nil
	}
	fk, ok := c.fk[db]
	if !ok {
		return nil, fmt.Errorf("database %q is not in tables.json", db)
	}
	if db == "" || strings.ContainsAny(db, `/\`) || db == "." || db == ".." {
		return nil, fmt.Errorf("invalid database name %q", db)
	}
	path := filepath.Join(c.dir, db, db+".sqlite")
	if _, err := os.Stat(path); err != nil {
		alt := filepath.Join(c.dir, db+".sqlite")
		if _, err2 := os.Stat(alt); err2 != nil {
			return nil, fmt.Errorf("no schema for %q: %w", db, err)
		}
		path = alt
	}
	s, err := SchemaFromSQLite(path)
	if err != nil {
		return nil, err
	}
	s.FK = fk
	c.cache[db] = s
	return s, nil
}
