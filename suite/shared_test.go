package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/metrics"
)

// sharedGolds returns the distinct golds of a conformance set, in file
// order (shareddata.Dir: skipped without the shared data, failed in CI).
func sharedGolds(t *testing.T, set string) ([]Gold, string) {
	t.Helper()
	dir := filepath.Join(shareddata.Dir(t), set)
	f, err := os.Open(filepath.Join(dir, "conformance", "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var golds []Gold
	idx := map[string]int{}
	var db string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var it struct{ ID, Gold, DB string }
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		db = it.DB
		if i, ok := idx[it.Gold]; ok {
			golds[i].IDs = append(golds[i].IDs, it.ID)
			continue
		}
		idx[it.Gold] = len(golds)
		golds = append(golds, Gold{Text: it.Gold, IDs: []string{it.ID}})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return golds, filepath.Join(dir, db+".sqlite")
}

// TestRoundTripShared: every GeoQuery and Restaurants gold parses, and
// the printed AST gives the same result as the gold on its database (the
// parser choice in doc.go rests on this).
func TestRoundTripShared(t *testing.T) {
	for _, set := range []string{"geoquery", "restaurants"} {
		t.Run(set, func(t *testing.T) {
			golds, dbPath := sharedGolds(t, set)
			ex, err := sqlite.New(engine.Config{Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			ctx := context.Background()
			parsed, same := 0, 0
			for _, g := range golds {
				stmt, err := Parse(g.Text)
				if err != nil {
					t.Errorf("%s: does not parse: %v", g.IDs[0], err)
					continue
				}
				parsed++
				text, err := Print(stmt)
				if err != nil {
					t.Errorf("%s: does not print: %v", g.IDs[0], err)
					continue
				}
				a, err := ex.Execute(ctx, engine.Query{Text: g.Text, DB: dbPath})
				if err != nil {
					t.Fatalf("%s: gold fails: %v", g.IDs[0], err)
				}
				b, err := ex.Execute(ctx, engine.Query{Text: text, DB: dbPath})
				if err != nil {
					t.Errorf("%s: printed query fails: %v\n%s", g.IDs[0], err, text)
					continue
				}
				o := metrics.CompareOptions{Ordered: metrics.ProfileEvalflow.Ordered(g.Text)}
				if !metrics.CompareTables(a, b, o).Match {
					t.Errorf("%s: printed query differs\n%s\n%s", g.IDs[0], g.Text, text)
					continue
				}
				same++
			}
			t.Logf("%s: %d distinct golds, %d parse, %d round-trip to the same result", set, len(golds), parsed, same)
		})
	}
}

// TestGeoQuerySuite builds a suite for the first GeoQuery golds: every
// kept database holds the gold's schema, every gold runs on it, and the
// generated databases separate neighbours the original alone does not.
func TestGeoQuerySuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a suite")
	}
	golds, dbPath := sharedGolds(t, "geoquery")
	golds = golds[:12]
	dir := t.TempDir()
	o := DefaultOptions()
	o.Samples, o.MaxDBs = 60, 10
	rep, err := Build(context.Background(), "geography", dbPath, dir, golds, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("neighbours %d (dropped %v), separated %d (by the original %d), unseparated %d, sampled %d, kept %d, rejected %v, %s",
		rep.Neighbours, rep.Dropped, rep.Separated, rep.SeparatedByOriginal, len(rep.Unseparated), rep.Sampled, len(rep.Kept), rep.Rejected, rep.Elapsed)
	if len(rep.GoldIssues) != 0 {
		t.Errorf("gold issues: %+v", rep.GoldIssues)
	}
	if len(rep.Kept) == 0 || rep.Separated <= rep.SeparatedByOriginal {
		t.Fatalf("the generated databases separate nothing the original does not: %+v", rep)
	}
	checkSuite(t, dir, "geography", golds, rep)
}

// TestSharedSuitesRate builds the whole GeoQuery and Restaurants suites
// with the default options: at least 99% of the neighbours some database
// separates are separated, and every gold scores 1 against itself on
// every kept database.
func TestSharedSuitesRate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two whole suites (about a minute each)")
	}
	if RaceEnabled {
		t.Skip("builds whole suites: run without -race (make test does)")
	}
	for _, set := range []string{"geoquery", "restaurants"} {
		t.Run(set, func(t *testing.T) {
			t.Parallel()
			golds, dbPath := sharedGolds(t, set)
			dir := t.TempDir()
			o := DefaultOptions()
			// A short screen (the command's default is the 5 s query
			// timeout): Restaurants' cross-product neighbours are dropped
			// in a second, not five; the rate does not depend on it.
			o.ScreenTimeout = 500 * time.Millisecond
			db := strings.TrimSuffix(filepath.Base(dbPath), ".sqlite")
			rep, err := Build(context.Background(), db, dbPath, dir, golds, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: neighbours %d (dropped %v), separated %d of %d separable (rate %.4f), unseparated %d, sampled %d, kept %d, %s",
				set, rep.Neighbours, rep.Dropped, rep.Separated, rep.Separable, rep.SeparationRate, len(rep.Unseparated), rep.Sampled, len(rep.Kept), rep.Elapsed)
			if len(rep.GoldIssues) != 0 {
				t.Errorf("gold issues: %+v", rep.GoldIssues)
			}
			if rep.SeparationRate < 0.99 {
				t.Errorf("separation rate %.4f < 0.99 (%d of %d separable)", rep.SeparationRate, rep.Separated, rep.Separable)
			}
			goldSelfMatch(t, dir, golds, rep, o.Profile)
			checkSuite(t, dir, db, golds, rep)
		})
	}
}
