package suite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
)

// checkSuite checks every kept SQLite database of a suite: integrity,
// foreign keys (PRAGMA foreign_key_check), PRIMARY KEY and UNIQUE tuples
// not repeated, and every gold runs.
func checkSuite(t *testing.T, dir, db string, golds []Gold, rep *DBReport) {
	t.Helper()
	ctx := context.Background()
	ex, err := sqlite.New(engine.Config{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for _, k := range rep.Kept {
		path := filepath.Join(dir, k.File)
		h, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		s, err := ReadSQLite(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		var ok string
		if err := h.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Errorf("%s: integrity_check %q %v", k.File, ok, err)
		}
		// A suite whose schema has foreign keys SQLite cannot enforce
		// (rep.SchemaNotes) is written without enforcement, and
		// foreign_key_check refuses such a schema ("foreign key mismatch").
		if len(rep.SchemaNotes) == 0 {
			rows, err := h.Query("PRAGMA foreign_key_check")
			if err != nil {
				t.Fatal(err)
			}
			if rows.Next() {
				t.Errorf("%s: foreign_key_check reports violations", k.File)
			}
			rows.Close()
		}
		for _, tb := range s.Tables {
			keys := append([][]string(nil), tb.Unique...)
			if len(tb.PrimaryKey) > 0 {
				keys = append(keys, tb.PrimaryKey)
			}
			for _, key := range keys {
				q := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE %s GROUP BY %s HAVING count(*) > 1)",
					quoteIdent(tb.Name), notNull(key), quoteIdents(key))
				var n int
				if err := h.QueryRow(q).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %s%v repeated %d times (%v)", k.File, tb.Name, key, n, err)
				}
			}
			for _, c := range tb.Columns {
				if !c.NotNull {
					continue
				}
				var n int
				q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NULL", quoteIdent(tb.Name), quoteIdent(c.Name))
				if err := h.QueryRow(q).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: NOT NULL %s.%s has %d NULLs (%v)", k.File, tb.Name, c.Name, n, err)
				}
			}
		}
		h.Close()
		for _, g := range golds {
			if _, err := ex.Execute(ctx, engine.Query{Text: g.Text, DB: path}); err != nil {
				t.Errorf("%s: gold %s fails: %v", k.File, g.IDs[0], err)
			}
		}
	}
}

func notNull(cols []string) string {
	var parts []string
	for _, c := range cols {
		parts = append(parts, quoteIdent(c)+" IS NOT NULL")
	}
	return strings.Join(parts, " AND ")
}
