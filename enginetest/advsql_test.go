package enginetest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// attack is one abusive prediction. engines limits it to some engines
// (nil: all SQL engines). want is the error class the engine itself gives
// it (the raw pipeline, no validate stage), by engine, with "*" as the
// default; the curated pipeline's validate stage must stop every
// non-timeout attack as unsafe or a syntax error before it runs.
type attack struct {
	id, text string
	engines  []string
	want     map[string]string
}

func (a attack) on(eng string) bool {
	if a.engines == nil {
		return true
	}
	for _, e := range a.engines {
		if e == eng {
			return true
		}
	}
	return false
}

// wantClass is the class expected under key: an engine, or
// "engine/variant" falling back to the engine, then to "*".
func (a attack) wantClass(key string) string {
	for k := key; ; {
		if c, ok := a.want[k]; ok {
			return c
		}
		i := strings.LastIndexByte(k, '/')
		if i < 0 {
			return a.want["*"]
		}
		k = k[:i]
	}
}

func all(c string) map[string]string { return map[string]string{"*": c} }

// outDir in an attack's text is replaced by a world-writable directory
// outside every database: a file there afterwards means the attack wrote
// through the engine.
const outDir = "{{OUT}}"

var sqlAttacks = []attack{
	{id: "drop", text: `DROP TABLE books`, want: all("safety")},
	{id: "delete", text: `DELETE FROM loans`, want: all("safety")},
	{id: "update", text: `UPDATE books SET price = 0`, want: all("safety")},
	{id: "insert", text: `INSERT INTO authors VALUES (99, 'Mallory', 'XX', 2000)`, want: all("safety")},
	{id: "replace", text: `REPLACE INTO members VALUES (1, 'Mallory', 'Nowhere')`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "create", text: `CREATE TABLE evil (x INTEGER)`, want: all("safety")},
	{id: "alter", text: `ALTER TABLE books ADD COLUMN evil INTEGER`, want: all("safety")},
	{id: "index", text: `CREATE INDEX evil ON books (title)`, want: all("safety")},
	{id: "view", text: `CREATE VIEW evil AS SELECT * FROM books`, want: all("safety")},
	{id: "truncate", text: `TRUNCATE books`, engines: []string{"duckdb", "postgres"}, want: all("safety")},
	{id: "stacked", text: `SELECT 1; DROP TABLE books`, want: map[string]string{"*": "safety", "postgres": "syntax"}},
	// Only PostgreSQL has data-modifying CTEs; the others cannot parse one.
	{id: "cte_delete", text: `WITH d AS (DELETE FROM loans RETURNING *) SELECT count(*) FROM d`,
		want: map[string]string{"*": "syntax", "postgres": "safety"}},
	{id: "recursive", text: endlessCTE, want: all("timeout")},
	{id: "cartesian", text: cartesian4, want: all("timeout")},
	{id: "cartesian_join", text: `SELECT count(*) FROM nums a JOIN nums b ON a.n <> b.n JOIN nums c ON b.n <> c.n JOIN nums d ON c.n <> d.n`, want: all("timeout")},

	// SQLite: files, pragmas and maintenance that write.
	// mode=ro covers the main database only (an ATTACH or VACUUM INTO would
	// create files elsewhere), so engine/sqlite refuses every statement but
	// one SELECT/WITH/VALUES before running it (found by this test).
	{id: "attach", text: `ATTACH DATABASE '` + outDir + `/evil.sqlite' AS evil`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "vacuum_into", text: `VACUUM INTO '` + outDir + `/copy.sqlite'`, engines: []string{"sqlite"}, want: all("safety")},
	// DuckDB runs VACUUM and CHECKPOINT on a read-only file as no-ops (the
	// checksums show nothing changed).
	{id: "vacuum", text: `VACUUM`, engines: []string{"sqlite", "duckdb"}, want: map[string]string{"sqlite": "safety", "duckdb": ""}},
	{id: "pragma_user_version", text: `PRAGMA user_version = 7`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "pragma_journal_mode", text: `PRAGMA journal_mode = WAL`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "begin_exclusive", text: `BEGIN EXCLUSIVE`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "analyze", text: `ANALYZE`, engines: []string{"sqlite"}, want: all("safety")},
	{id: "trigger", text: `CREATE TRIGGER evil AFTER INSERT ON books BEGIN DELETE FROM loans; END`, engines: []string{"sqlite"}, want: all("safety")},

	// DuckDB: files, extensions and configuration.
	{id: "attach", text: `ATTACH '` + outDir + `/evil.duckdb' AS evil`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "export", text: `EXPORT DATABASE '` + outDir + `/export'`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "read_csv", text: `SELECT * FROM read_csv('/etc/passwd')`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "install", text: `INSTALL httpfs`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "load", text: `LOAD httpfs`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "set_external", text: `SET enable_external_access = true`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "checkpoint", text: `CHECKPOINT`, engines: []string{"duckdb"}, want: all("")},
	{id: "macro", text: `CREATE MACRO evil(x) AS x + 1`, engines: []string{"duckdb"}, want: all("safety")},
	{id: "sequence", text: `CREATE SEQUENCE evil`, engines: []string{"duckdb", "postgres"}, want: all("safety")},

	// PostgreSQL: server-side files and programs, procedural code, locks,
	// session tricks. The superuser DSN ("postgres") is what the test
	// cluster and most local setups give; "postgres/reader" is the same
	// attack as a role with SELECT only (readerRole), the defence in depth
	// docs/engines.md recommends.
	//
	// As a superuser, a READ ONLY transaction still allows COPY … TO a
	// server file or PROGRAM (a shell command as the server's OS user):
	// engine/postgres refuses every statement but one SELECT/WITH/VALUES
	// before sending it (found by this test).
	{id: "copy_to", text: `COPY books TO '` + outDir + `/books.csv'`, engines: []string{"duckdb", "postgres"}, want: all("safety")},
	{id: "copy_program", text: `COPY (SELECT 1) TO PROGRAM 'touch ` + outDir + `/pwned'`, engines: []string{"postgres"}, want: all("safety")},
	// lo_import reads a server file into a new large object and lo_create
	// makes one; both succeed as a superuser and are rolled back (the dump
	// counts large objects). A reader may still create one, rolled back too.
	{id: "lo_import", text: `SELECT lo_import('/etc/hostname')`, engines: []string{"postgres"},
		want: map[string]string{"postgres": "", "postgres/reader": "safety"}},
	{id: "lo_create", text: `SELECT lo_create(0)`, engines: []string{"postgres"}, want: all("")},
	{id: "do_block", text: `DO $$ BEGIN DELETE FROM loans; END $$`, engines: []string{"postgres"}, want: all("safety")},
	{id: "temp_table", text: `CREATE TEMP TABLE evil AS SELECT * FROM books`, engines: []string{"postgres"}, want: all("safety")},
	// The lock is taken inside the read-only transaction and released by
	// its ROLLBACK; a reader lacks the privilege.
	{id: "lock", text: `LOCK TABLE books IN ACCESS EXCLUSIVE MODE`, engines: []string{"postgres"}, want: all("safety")},
	// The extended protocol takes one statement (42601, syntax).
	{id: "commit_then_drop", text: `COMMIT; DROP TABLE books`, engines: []string{"postgres"}, want: all("syntax")},
	{id: "cte_set_rw", text: `WITH s AS (SELECT set_config('transaction_read_only', 'off', true)), d AS (DELETE FROM loans RETURNING 1) SELECT * FROM s, d`, engines: []string{"postgres"}, want: all("safety")},
	{id: "alter_system", text: `ALTER SYSTEM SET statement_timeout = 0`, engines: []string{"postgres"}, want: all("safety")},
	{id: "vacuum_full", text: `VACUUM FULL books`, engines: []string{"postgres"}, want: all("safety")},
	{id: "grant", text: `GRANT ALL ON books TO PUBLIC`, engines: []string{"postgres"}, want: all("safety")},
	{id: "create_extension", text: `CREATE EXTENSION IF NOT EXISTS pgcrypto`, engines: []string{"postgres"}, want: all("safety")},
	{id: "pg_sleep", text: `SELECT pg_sleep(60)`, engines: []string{"postgres"}, want: all("timeout")},
}

// knownLeftovers are the files known attacks leave in the out directory
// (none since engine/sqlite and engine/postgres refuse non-SELECT text
// before running it), and whether they may hold data.
var knownLeftovers = map[string]map[string]bool{}

// timeoutSettings are the adversarial runs' timeouts, each checked to hold
// within 10% (DuckDB included since engine/duckdb interrupts at the
// deadline itself instead of through the driver's late context interrupt).
var timeoutSettings = map[string]struct {
	setting, extra time.Duration
}{
	"sqlite":   {time.Second, 0},
	"duckdb":   {time.Second, 0},
	"postgres": {time.Second, 0},
}

// TestAdversarialSQL runs the abusive predictions on each SQL engine twice,
// through the curated text2sql-replay pipeline (validate stage on) and
// through testdata/sql-raw.hcl (straight to the engine), and requires every
// database to be unchanged (file checksums; a canonical dump for
// PostgreSQL), nothing written outside them, every failure recorded on its
// item with the expected class, and every timeout within 10% of its
// setting (for DuckDB: of setting + 0.5 s).
func TestAdversarialSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("timeouts take seconds per engine")
	}
	const db = "library_adv"
	dir, vars := sqlSetup(t, db)
	dbs := filepath.Join(dir, "dbs")
	for _, eng := range sqlEngines {
		t.Run(eng, func(t *testing.T) {
			// The PostgreSQL server runs as another user: the out directory
			// must be reachable and writable by it, so that an attack that
			// gets through shows up.
			out, err := os.MkdirTemp("", "evalflow-adv-out-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(out) })
			os.Chmod(out, 0o777)
			v, ok := vars[eng]
			if !ok {
				needPostgres(t)
			}
			var qs, ps []map[string]any
			var attacks []attack
			for _, a := range sqlAttacks {
				if !a.on(eng) {
					continue
				}
				attacks = append(attacks, a)
				qs = append(qs, map[string]any{"id": a.id, "question": "adversarial", "gold": "SELECT count(*) FROM books", "db": db})
				ps = append(ps, map[string]any{"id": a.id, "pred": strings.ReplaceAll(a.text, outDir, out)})
			}
			edir := mkdir(t, filepath.Join(dir, eng))
			dataset := writeJSONL(t, edir, "questions.jsonl", qs)
			preds := writeJSONL(t, edir, "predictions.jsonl", ps)
			ts := timeoutSettings[eng]

			sums := func() any {
				if eng == "postgres" {
					return pgDump(t, pgDSN, db)
				}
				return dirSums(t, dbs)
			}
			var readerDSN string
			if eng == "postgres" {
				readerDSN = readerRole(t, pgDSN, db)
			}
			before := sums()

			type mode struct {
				name, pipeline, key string
				validate            bool
				vars                []string
			}
			raw := filepath.Join("testdata", "sql-raw.hcl")
			modes := []mode{
				{"curated", filepath.Join(repoRoot(t), "pipelines", "text2sql-replay.hcl"), eng, true, v},
				{"raw", raw, eng, false, v},
			}
			if eng == "postgres" {
				modes = append(modes, mode{"raw-reader", raw, "postgres/reader", false,
					[]string{"engine=postgres", "dsn=" + readerDSN}})
			}
			for _, mode := range modes {
				t.Run(mode.name, func(t *testing.T) {
					args := append([]string{"dataset=" + dataset, "predictions=" + preds, "timeout=" + ts.setting.String()}, mode.vars...)
					start := time.Now()
					res := runPlan(t, plan(t, mode.pipeline, args...), 2*time.Minute)
					t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
					for _, a := range attacks {
						o, ok := res[a.id]
						if !ok {
							t.Errorf("%s: no record", a.id)
							continue
						}
						want := a.wantClass(mode.key)
						got := o.Class
						if mode.validate && want != "timeout" && (got == "safety" || got == "syntax") {
							// The validate stage stopped it (unsafe) or the
							// engine's prepare refused it; either way it never ran.
							got = want
						}
						if got != want {
							t.Errorf("%s: class %q (status %s), want %q: %s", a.id, o.Class, o.Status, want, o.Msg)
						}
						if wantStatus := map[string]string{"safety": "unsafe", "timeout": "timeout"}[o.Class]; wantStatus != "" && o.Status != wantStatus {
							t.Errorf("%s: status %q for class %q", a.id, o.Status, o.Class)
						}
						if o.EX != 0 {
							t.Errorf("%s: ex %v, want 0", a.id, o.EX)
						}
						if o.Class == "timeout" {
							target := ts.setting + ts.extra
							t.Logf("%s: timeout after %v (setting %v)", a.id, o.Exec.Round(time.Millisecond), ts.setting)
							// The execute timing starts after the deadline's clock (which also
							// covers the query's preparation): it may read a little under the setting.
							if !within(o.Exec, target, 0.10*float64(ts.setting)/float64(target)) {
								t.Errorf("%s: timed out after %v; want %v ± 10%% of %v", a.id, o.Exec, target, ts.setting)
							}
						}
						if testing.Verbose() {
							t.Logf("%s: %s/%s %.120s", a.id, o.Status, o.Class, o.Msg)
						}
					}
				})
			}

			if diff := cmp.Diff(before, sums()); diff != "" {
				t.Errorf("%s database changed (-before +after):\n%s", eng, diff)
			}
			checkOut(t, out, knownLeftovers[eng])
		})
	}
}

// checkOut requires dir to hold nothing but the known leftovers, each
// empty.
func checkOut(t testing.TB, dir string, known map[string]bool) {
	t.Helper()
	for _, name := range listDir(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		data, ok := known[name]
		switch {
		case !ok:
			t.Errorf("an attack wrote %s outside the database (%d bytes)", name, fi.Size())
		case fi.Size() != 0 && !data:
			t.Errorf("known leftover %s holds %d bytes; it must stay empty", name, fi.Size())
		default:
			t.Logf("KNOWN BUG: an attack left %s (%d bytes) outside the database", name, fi.Size())
		}
	}
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// readerRole creates (once per cluster) a login role that may only read
// the tables of db, and returns dsn with that user.
func readerRole(t testing.TB, dsn, db string) string {
	t.Helper()
	ctx := context.Background()
	conn := pgConnect(t, dsn, db)
	defer conn.Close(ctx)
	for _, s := range []string{
		`DO $$ BEGIN
		   IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'evalflow_reader') THEN
		     CREATE ROLE evalflow_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
		   END IF;
		 END $$`,
		`GRANT CONNECT ON DATABASE ` + pgx.Identifier{db}.Sanitize() + ` TO evalflow_reader`,
		`GRANT USAGE ON SCHEMA public TO evalflow_reader`,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO evalflow_reader`,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", firstLine(s), err)
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("evalflow_reader")
	return u.String()
}
