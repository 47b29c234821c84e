package suite_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/suite"
)

// conformanceItem is one line of a conformance set's items.jsonl with its
// official verdicts (verdicts.jsonl).
type conformanceItem struct {
	ID, Gold, Pred, DB, Kind string
	TSExec                   float64 `json:"ts_exec"`
	TSExecKeepDistinct       float64 `json:"ts_exec_keep_distinct"`
}

// readConformance reads <set>/conformance/items.jsonl and verdicts.jsonl.
func readConformance(t *testing.T, data, set string) []conformanceItem {
	t.Helper()
	dir := filepath.Join(data, set, "conformance")
	var items []conformanceItem
	scanJSONL(t, filepath.Join(dir, "items.jsonl"), func(b []byte) error {
		var it conformanceItem
		if err := json.Unmarshal(b, &it); err != nil {
			return err
		}
		items = append(items, it)
		return nil
	})
	byID := map[string]*conformanceItem{}
	for i := range items {
		byID[items[i].ID] = &items[i]
	}
	n := 0
	scanJSONL(t, filepath.Join(dir, "verdicts.jsonl"), func(b []byte) error {
		var v struct {
			ID                 string
			TSExec             float64 `json:"ts_exec"`
			TSExecKeepDistinct float64 `json:"ts_exec_keep_distinct"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		it := byID[v.ID]
		if it == nil {
			return fmt.Errorf("verdict for unknown item %q", v.ID)
		}
		it.TSExec, it.TSExecKeepDistinct = v.TSExec, v.TSExecKeepDistinct
		n++
		return nil
	})
	if n != len(items) {
		t.Fatalf("%s: %d verdicts for %d items", set, n, len(items))
	}
	return items
}

func scanJSONL(t *testing.T, path string, f func([]byte) error) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := f(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSuiteConformance re-scores the published predictions of the
// GeoQuery and Restaurants conformance sets on suites built from their
// golds, under testsuite and testsuite_keep_distinct, through the replay
// pipeline. ex (the item's own database) must still be the official
// scorer's verdict; the suite verdict can only take a 1 away (ex_suite ≤
// ex for every item: a 0 → 1 flip would mean the suite scored a pair its
// own database separates); every gold scores 1 against itself on every
// database of the suite. The counts of flips (ex 1 → ex_suite 0) are
// logged, by kind of prediction, for docs/suites.md.
func TestSuiteConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two suites")
	}
	if suite.RaceEnabled {
		t.Skip("builds whole suites: run without -race (make test does)")
	}
	data := shareddata.Dir(t)
	for _, set := range []string{"geoquery", "restaurants"} {
		t.Run(set, func(t *testing.T) {
			items := readConformance(t, data, set)
			db := items[0].DB
			var golds []suite.Gold
			idx := map[string]int{}
			for _, it := range items {
				if it.DB != db {
					t.Fatalf("%s: items of two databases (%s, %s)", set, db, it.DB)
				}
				if i, ok := idx[it.Gold]; ok {
					golds[i].IDs = append(golds[i].IDs, it.ID)
					continue
				}
				idx[it.Gold] = len(golds)
				golds = append(golds, suite.Gold{Text: it.Gold, IDs: []string{it.ID}})
			}
			// The command's defaults, so that the counts are those of
			// `evalflow suite build` (docs/suites.md); verification draws
			// only measure the suite and never change what is kept.
			o := suite.DefaultOptions()
			o.Verify = 0
			// A short screen for speed (the command's default is the 5 s
			// query timeout): only cross products, dropped either way,
			// run that long on these databases.
			o.ScreenTimeout = 500 * time.Millisecond
			root := t.TempDir()
			start := time.Now()
			buildSuite(t, root, db, filepath.Join(data, set, db+".sqlite"), golds, o)
			t.Logf("%s: built in %s", db, time.Since(start).Round(time.Millisecond))

			var pairs []pair
			for _, it := range items {
				pairs = append(pairs, pair{id: it.ID, db: db, gold: it.Gold, pred: it.Pred})
			}
			for i, g := range golds {
				pairs = append(pairs, pair{id: fmt.Sprintf("gold-%03d", i), db: db, gold: g.Text, pred: g.Text})
			}
			for _, compare := range []string{"testsuite", "testsuite_keep_distinct"} {
				t.Run(compare, func(t *testing.T) {
					start := time.Now()
					got := scorePairs(t, root, compare, pairs)
					elapsed := time.Since(start).Round(time.Millisecond)
					for i, g := range golds {
						v := got[fmt.Sprintf("gold-%03d", i)]
						if v.status != "ok" || v.ex != 1 || !v.hasSuite || v.exSuite != 1 {
							t.Errorf("gold %s against itself: status %q (%s), ex %v, ex_suite %v (%s: %s)\n%s",
								g.IDs[0], v.status, v.err, v.ex, v.exSuite, v.sepDB, v.note, g.Text)
						}
					}
					var ex, exSuite, down, up int
					byKind := map[string]int{}
					for _, it := range items {
						v := got[it.ID]
						official := it.TSExec
						if compare == "testsuite_keep_distinct" {
							official = it.TSExecKeepDistinct
						}
						if v.status != "ok" && v.status != "unsafe" || !v.hasSuite {
							t.Errorf("%s: status %q (%s), suite verdict %v", it.ID, v.status, v.err, v.hasSuite)
							continue
						}
						if v.ex != official {
							t.Errorf("%s: ex %v, the official scorer's verdict %v", it.ID, v.ex, official)
						}
						ex += int(v.ex)
						exSuite += int(v.exSuite)
						switch {
						case v.ex == 1 && v.exSuite == 0:
							down++
							byKind[it.Kind]++
							if v.sepDB == "" || v.sepDB == db+".sqlite" {
								t.Errorf("%s: flipped, separated by %q: want a generated database", it.ID, v.sepDB)
							}
						case v.ex == 0 && v.exSuite == 1:
							up++
							t.Errorf("%s: ex 0 on its own database but ex_suite 1 (%s)\n  gold %s\n  pred %s", it.ID, v.note, it.Gold, it.Pred)
						}
					}
					var kinds []string
					for k, n := range byKind {
						kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
					}
					sort.Strings(kinds)
					t.Logf("%s %s: %d items, ex %d, ex_suite %d; flipped 1 → 0: %d (%s); 0 → 1: %d; %d golds score 1 against themselves on every database; scored in %s",
						set, compare, len(items), ex, exSuite, down, strings.Join(kinds, ", "), up, len(golds), elapsed)
				})
			}
		})
	}
}
