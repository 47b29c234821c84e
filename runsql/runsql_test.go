package runsql

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/rundir"
)

// runDir writes a run directory whose items.parquet holds n items.
func runDir(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), []byte(`{"run_id":"r","status":"complete"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`COPY (SELECT i AS seq FROM range(?) t(i)) TO `+Quote(filepath.Join(dir, rundir.ItemsFile))+` (FORMAT parquet)`, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

func items(t *testing.T, dir string) int {
	t.Helper()
	db, partial, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if partial {
		t.Fatalf("%s read as partial", dir)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM items").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWarm: the instance Warm starts serves one Open, which reads its own
// run; the Opens after it start their own.
func TestWarm(t *testing.T) {
	a, b := runDir(t, 3), runDir(t, 5)
	Warm()
	Warm() // a second call before an Open does nothing
	if got := items(t, a); got != 3 {
		t.Fatalf("warmed Open of a: %d items, want 3", got)
	}
	warmed.Lock()
	left := warmed.c
	warmed.Unlock()
	if left != nil {
		t.Fatal("the warmed instance was not taken by the Open")
	}
	if got := items(t, b); got != 5 {
		t.Fatalf("Open of b: %d items, want 5", got)
	}
	Warm()
	if got := items(t, b); got != 5 {
		t.Fatalf("warmed Open of b: %d items, want 5", got)
	}
	if got := items(t, a); got != 3 {
		t.Fatalf("Open of a after: %d items, want 3", got)
	}
}

// BenchmarkOpen opens a run directory of 10,000 items with a new DuckDB
// instance and with one Warm had ready (docs/benchmarks-baseline.md, "The
// report rendered in Go"): the difference is what evalflow run takes off
// its report's wait.
func BenchmarkOpen(b *testing.B) {
	dir := runDir(b, 10_000)
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warmed"}[warm], func(b *testing.B) {
			for b.Loop() {
				if warm {
					b.StopTimer()
					Warm()
					warmed.Lock()
					ch := warmed.c
					warmed.Unlock()
					w := <-ch // the instance is ready; handed back for Open
					ch <- w
					b.StartTimer()
				}
				db, _, err := Open(context.Background(), dir)
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
