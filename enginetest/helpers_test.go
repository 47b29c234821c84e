package enginetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/internal/shareddata"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"

	_ "github.com/evalflow/evalflow/engine/duckdb"
	_ "github.com/evalflow/evalflow/engine/falkordb"
	_ "github.com/evalflow/evalflow/engine/postgres"
	_ "github.com/evalflow/evalflow/engine/sparql"
	_ "github.com/evalflow/evalflow/engine/sqlite"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// repoRoot is the checkout's root (tests run in enginetest/).
func repoRoot(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sharedData returns ../shared/data (shareddata.Dir).
func sharedData(t testing.TB) string { return shareddata.Dir(t) }

// plan loads and plans the pipeline at path with -var values; the plan is
// closed when the test ends.
func plan(t testing.TB, path string, vars ...string) *planner.Plan {
	t.Helper()
	p, diags := dsl.Load(path, dsl.LoadOptions{Vars: vars, Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{})
	t.Cleanup(func() { pl.Close() })
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pl
}

// outcome is what a test checks of one finished item.
type outcome struct {
	Status string  // items.parquet's status (rundir.ItemStatus)
	Class  string  // the final attempt's error class
	EX     float64 // the ex score, -1 when absent
	Msg    string  // the final attempt's error message
	Exec   time.Duration
	Rec    *item.Record
}

// runPlan runs pl to the end and returns every item's outcome by id. The
// run must finish without error within limit.
func runPlan(t testing.TB, pl *planner.Plan, limit time.Duration) map[string]outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out := map[string]outcome{}
	err := pl.Run(ctx, planner.RunOptions{OnRecord: func(r *item.Record) error {
		o := outcome{Status: rundir.ItemStatus(r), EX: -1, Rec: r}
		if f := r.Final(); f != nil {
			o.Class, o.Msg, o.Exec = f.ErrorClass, f.ErrorMessage, f.Timings["execute"]
		}
		if s, ok := r.Score("ex"); ok && !s.Null {
			o.EX = s.Value
		}
		out[r.Item.ID] = o
		return nil
	}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// writeJSONL writes rows to dir/name and returns the path.
func writeJSONL(t testing.TB, dir, name string, rows []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileSum is the sha256 of a file's bytes.
func fileSum(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dirSums maps every file under dir (relative path) to its sha256, so a
// new file (a WAL, a journal, an attached database) shows up too.
func dirSums(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = fileSum(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// textSum is the sha256 of lines sorted, a canonical dump's checksum.
func textSum(lines []string) string {
	s := append([]string(nil), lines...)
	sort.Strings(s)
	h := sha256.Sum256([]byte(strings.Join(s, "\n")))
	return hex.EncodeToString(h[:])
}

// within reports whether d is within frac of want (|d-want| ≤ frac·want).
func within(d, want time.Duration, frac float64) bool {
	diff := d - want
	if diff < 0 {
		diff = -diff
	}
	return float64(diff) <= frac*float64(want)
}

// execOutput runs a command and returns its stdout; the error carries
// stderr.
func execOutput(name string, args ...string) (string, error) {
	var stderr strings.Builder
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", name, err, stderr.String())
	}
	return string(out), nil
}
