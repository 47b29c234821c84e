package suite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Kind is the value domain a column draws generated values from.
type Kind uint8

// Value kinds, from the declared type (SQLite affinity rules; DuckDB type
// names map the same way).
const (
	KindText Kind = iota
	KindInt
	KindFloat
)

// String returns "text", "int" or "float".
func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	}
	return "text"
}

// kindOf maps a declared type to a Kind by SQLite's affinity rules (which
// also cover DuckDB's type names: INTEGER, BIGINT, DOUBLE, DECIMAL, VARCHAR).
func kindOf(decl string) Kind {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return KindInt
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"), strings.Contains(d, "STRING"):
		return KindText
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"),
		strings.Contains(d, "DEC"), strings.Contains(d, "NUMERIC"):
		return KindFloat
	}
	return KindText
}

// Schema is what the generator must respect in one database: its tables in
// an order where every parent comes before its children (ties by name).
type Schema struct {
	Tables []*Table
	// DDL is the statements that recreate the schema (tables, then indexes
	// and views), in the order they must run. For SQLite it is the text
	// stored in sqlite_master, so the generated files carry exactly the
	// original's constraints.
	DDL []string
	// Ignored lists the foreign keys the engine could not enforce (the
	// referenced columns are missing, or are not the parent's primary key
	// or a UNIQUE set): SQLite reports "foreign key mismatch" on every
	// insert under them, so they are left out of generation and the suite
	// is written with enforcement off.
	Ignored []string
}

// Table is one base table.
type Table struct {
	Name    string
	Columns []*Column
	// PrimaryKey lists the primary-key columns in key order (empty: none).
	PrimaryKey []string
	// Unique lists every UNIQUE constraint and unique index other than the
	// primary key, each as its columns.
	Unique [][]string
	// ForeignKeys lists the table's foreign keys.
	ForeignKeys []ForeignKey
}

// Column is one column of a Table.
type Column struct {
	Name     string
	DeclType string
	Kind     Kind
	NotNull  bool
}

// ForeignKey says that Columns reference RefColumns of RefTable, position by
// position. RefColumns is never empty: an implicit reference to the parent's
// primary key is resolved when the schema is read.
type ForeignKey struct {
	Columns    []string
	RefTable   string
	RefColumns []string
}

// Table returns the named table (case-insensitive), or nil.
func (s *Schema) Table(name string) *Table {
	for _, t := range s.Tables {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// Column returns the named column (case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// ReadSQLite reads the schema of the SQLite database db: columns and
// NOT NULL from PRAGMA table_info, primary keys from its pk field, UNIQUE
// constraints from PRAGMA index_list/index_info (origin "u" and unique
// CREATE INDEXes), foreign keys from PRAGMA foreign_key_list.
func ReadSQLite(ctx context.Context, db *sql.DB) (*Schema, error) {
	s := &Schema{}
	rows, err := db.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var typ, name, ddl string
		if err := rows.Scan(&typ, &name, &ddl); err != nil {
			rows.Close()
			return nil, err
		}
		s.DDL = append(s.DDL, ddl)
		if typ == "table" {
			names = append(names, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		t := &Table{Name: name}
		type pkcol struct {
			pos  int
			name string
		}
		var pks []pkcol
		err := queryEach(ctx, db, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, []any{name}, func(r *sql.Rows) error {
			var c Column
			var notnull, pk int
			if err := r.Scan(&c.Name, &c.DeclType, &notnull, &pk); err != nil {
				return err
			}
			c.Kind = kindOf(c.DeclType)
			c.NotNull = notnull != 0 || pk > 0
			if pk > 0 {
				pks = append(pks, pkcol{pk, c.Name})
			}
			t.Columns = append(t.Columns, &c)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		sort.Slice(pks, func(i, j int) bool { return pks[i].pos < pks[j].pos })
		for _, p := range pks {
			t.PrimaryKey = append(t.PrimaryKey, p.name)
		}
		var idx []string
		err = queryEach(ctx, db, `SELECT name FROM pragma_index_list(?) WHERE "unique" = 1 AND origin != 'pk' ORDER BY name`, []any{name}, func(r *sql.Rows) error {
			var n string
			if err := r.Scan(&n); err != nil {
				return err
			}
			idx = append(idx, n)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		for _, in := range idx {
			var cols []string
			err := queryEach(ctx, db, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, []any{in}, func(r *sql.Rows) error {
				var n sql.NullString
				if err := r.Scan(&n); err != nil {
					return err
				}
				cols = append(cols, n.String)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", in, err)
			}
			if len(cols) > 0 && !slicesEqualFold(cols, t.PrimaryKey) {
				t.Unique = append(t.Unique, cols)
			}
		}
		fks := map[int]*ForeignKey{}
		var ids []int
		err = queryEach(ctx, db, `SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, []any{name}, func(r *sql.Rows) error {
			var id int
			var ref, from string
			var to sql.NullString
			if err := r.Scan(&id, &ref, &from, &to); err != nil {
				return err
			}
			fk := fks[id]
			if fk == nil {
				fk = &ForeignKey{RefTable: ref}
				fks[id] = fk
				ids = append(ids, id)
			}
			fk.Columns = append(fk.Columns, from)
			fk.RefColumns = append(fk.RefColumns, to.String)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		for _, id := range ids {
			t.ForeignKeys = append(t.ForeignKeys, *fks[id])
		}
		s.Tables = append(s.Tables, t)
	}
	return s, s.finish()
}

// ReadDuckDB reads the schema of the DuckDB database db from
// information_schema.columns (types, NOT NULL) and duckdb_constraints()
// (PRIMARY KEY, UNIQUE, FOREIGN KEY). DDL is rebuilt from what was read.
func ReadDuckDB(ctx context.Context, db *sql.DB) (*Schema, error) {
	s := &Schema{}
	err := queryEach(ctx, db, `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = 'main' AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema = 'main')
		ORDER BY table_name, ordinal_position`, nil, func(r *sql.Rows) error {
		var tn, cn, typ, nullable string
		if err := r.Scan(&tn, &cn, &typ, &nullable); err != nil {
			return err
		}
		t := s.Table(tn)
		if t == nil {
			t = &Table{Name: tn}
			s.Tables = append(s.Tables, t)
		}
		t.Columns = append(t.Columns, &Column{Name: cn, DeclType: typ, Kind: kindOf(typ), NotNull: nullable == "NO"})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = queryEach(ctx, db, `SELECT table_name, constraint_type, array_to_string(constraint_column_names, chr(31)),
			coalesce(referenced_table, ''), coalesce(array_to_string(referenced_column_names, chr(31)), '')
		FROM duckdb_constraints() WHERE schema_name = 'main' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
		ORDER BY table_name, constraint_index`, nil, func(r *sql.Rows) error {
		var tn, typ, cols, ref, refCols string
		if err := r.Scan(&tn, &typ, &cols, &ref, &refCols); err != nil {
			return err
		}
		t := s.Table(tn)
		if t == nil {
			return nil
		}
		cs := strings.Split(cols, "\x1f")
		switch typ {
		case "PRIMARY KEY":
			t.PrimaryKey = cs
			for _, c := range cs {
				if col := t.Column(c); col != nil {
					col.NotNull = true
				}
			}
		case "UNIQUE":
			t.Unique = append(t.Unique, cs)
		case "FOREIGN KEY":
			fk := ForeignKey{Columns: cs, RefTable: ref}
			if refCols != "" {
				fk.RefColumns = strings.Split(refCols, "\x1f")
			}
			t.ForeignKeys = append(t.ForeignKeys, fk)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.finish(); err != nil {
		return nil, err
	}
	for _, t := range s.Tables {
		s.DDL = append(s.DDL, duckDBCreate(t))
	}
	return s, nil
}

// duckDBCreate writes the CREATE TABLE statement of t.
func duckDBCreate(t *Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", quoteIdent(t.Name))
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", quoteIdent(c.Name), c.DeclType)
		if c.NotNull {
			b.WriteString(" NOT NULL")
		}
	}
	if len(t.PrimaryKey) > 0 {
		fmt.Fprintf(&b, ", PRIMARY KEY (%s)", quoteIdents(t.PrimaryKey))
	}
	for _, u := range t.Unique {
		fmt.Fprintf(&b, ", UNIQUE (%s)", quoteIdents(u))
	}
	for _, fk := range t.ForeignKeys {
		fmt.Fprintf(&b, ", FOREIGN KEY (%s) REFERENCES %s (%s)", quoteIdents(fk.Columns), quoteIdent(fk.RefTable), quoteIdents(fk.RefColumns))
	}
	b.WriteString(")")
	return b.String()
}

// finish resolves implicit foreign-key targets and sorts the tables so that
// parents come first (Kahn's algorithm, ties by position; tables on a
// foreign-key cycle keep their order after the others).
func (s *Schema) finish() error {
	for _, t := range s.Tables {
		kept := t.ForeignKeys[:0]
		for _, fk := range t.ForeignKeys {
			p := s.Table(fk.RefTable)
			if p == nil {
				s.Ignored = append(s.Ignored, fmt.Sprintf("%s(%s) references missing table %s", t.Name, strings.Join(fk.Columns, ","), fk.RefTable))
				continue
			}
			fk.RefTable = p.Name
			for j, rc := range fk.RefColumns {
				if rc == "" && j < len(p.PrimaryKey) {
					fk.RefColumns[j] = p.PrimaryKey[j]
				}
			}
			ok := slicesEqualFold(fk.RefColumns, p.PrimaryKey)
			for _, u := range p.Unique {
				ok = ok || slicesEqualFold(fk.RefColumns, u)
			}
			for _, c := range fk.RefColumns {
				ok = ok && p.Column(c) != nil
			}
			if !ok {
				s.Ignored = append(s.Ignored, fmt.Sprintf("%s(%s) references %s(%s), not a key of it",
					t.Name, strings.Join(fk.Columns, ","), p.Name, strings.Join(fk.RefColumns, ",")))
				continue
			}
			kept = append(kept, fk)
		}
		t.ForeignKeys = kept
	}
	done := map[string]bool{}
	var order []*Table
	for len(order) < len(s.Tables) {
		progress := false
		for _, t := range s.Tables {
			if done[t.Name] {
				continue
			}
			ready := true
			for _, fk := range t.ForeignKeys {
				if fk.RefTable != t.Name && !done[fk.RefTable] {
					ready = false
				}
			}
			if ready {
				done[t.Name] = true
				order = append(order, t)
				progress = true
			}
		}
		if !progress { // a cycle: take the first remaining table
			for _, t := range s.Tables {
				if !done[t.Name] {
					done[t.Name] = true
					order = append(order, t)
					break
				}
			}
		}
	}
	s.Tables = order
	return nil
}

func queryEach(ctx context.Context, db *sql.DB, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func slicesEqualFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteIdents(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quoteIdent(s)
	}
	return strings.Join(q, ", ")
}
