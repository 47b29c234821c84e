package suite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/suite"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// A query set of one database: gold queries of our own, each with
// rewrites that mean the same on every database of its schema and
// near-misses that give the gold's result on the original database but
// mean something else.
type querySet struct {
	set, db string // folder under ../shared/data; database name
	golds   []goldCase
}

type goldCase struct {
	gold   string
	same   []variant // equivalent on every database of the schema
	misses []variant // equal on the original, wrong in general
	// beyond are near-misses no neighbour of the gold stands for: the
	// suite may or may not separate them (an upper bound, not a proof);
	// only ex = 1 is asserted, the suite's verdict is logged.
	beyond []variant
}

type variant struct{ what, sql string }

// The rewrites rest on the schema alone, with one stated premise: the
// NOT IN ↔ NOT EXISTS ↔ LEFT JOIN … IS NULL rewrites hold on NULL-free
// columns (the original databases hold no NULL, and suites built without
// -nulls none either); the ones joining on a key (Restaurants'
// RESTAURANT_ID and GEOGRAPHIC.CITY_NAME) rest on its uniqueness, which
// the builder keeps. GeoQuery declares no key, so its tables may hold
// duplicate rows on a generated database: its join ↔ IN rewrites are
// written under DISTINCT. Each near-miss was checked to give the gold's
// result on the original (the test asserts it too).
var rewriteSets = []querySet{
	{set: "geoquery", db: "geography", golds: []goldCase{
		{gold: `SELECT city_name FROM city WHERE population > 150000 AND state_name = 'texas'`,
			same: []variant{
				{"alias, conjuncts swapped", `SELECT c.city_name FROM city AS c WHERE c.state_name = 'texas' AND c.population > 150000`},
				{"negated comparison", `SELECT city_name FROM city WHERE NOT population <= 150000 AND state_name = 'texas'`},
				{"constant on the left", `SELECT city_name FROM city WHERE 150000 < population AND 'texas' = state_name`},
			},
			misses: []variant{
				{"> vs >=", `SELECT city_name FROM city WHERE population >= 150000 AND state_name = 'texas'`},
				{"off-by-one constant", `SELECT city_name FROM city WHERE population > 150001 AND state_name = 'texas'`},
			}},
		{gold: `SELECT state_name FROM state WHERE area BETWEEN 50000 AND 100000`,
			same: []variant{
				{"BETWEEN vs two comparisons", `SELECT state_name FROM state WHERE area >= 50000 AND area <= 100000`},
				{"two comparisons, reversed", `SELECT s.state_name FROM state AS s WHERE 100000 >= s.area AND 50000 <= s.area`},
			},
			misses: []variant{
				{"BETWEEN vs two strict comparisons", `SELECT state_name FROM state WHERE area > 50000 AND area < 100000`},
			}},
		{gold: `SELECT DISTINCT s.capital FROM state AS s JOIN border_info AS b ON s.state_name = b.border WHERE b.state_name = 'texas'`,
			same: []variant{
				{"join order", `SELECT DISTINCT s.capital FROM border_info AS b JOIN state AS s ON b.border = s.state_name WHERE b.state_name = 'texas'`},
				{"comma join, no aliases", `SELECT DISTINCT state.capital FROM border_info, state WHERE border_info.border = state.state_name AND border_info.state_name = 'texas'`},
				{"join vs IN", `SELECT DISTINCT capital FROM state WHERE state_name IN (SELECT border FROM border_info WHERE state_name = 'texas')`},
				{"IN vs EXISTS", `SELECT DISTINCT capital FROM state AS s WHERE EXISTS (SELECT 1 FROM border_info AS b WHERE b.border = s.state_name AND b.state_name = 'texas')`},
			},
			misses: []variant{
				// border_info holds no duplicate row on the original.
				{"missing DISTINCT", `SELECT s.capital FROM state AS s JOIN border_info AS b ON s.state_name = b.border WHERE b.state_name = 'texas'`},
				// border_info is symmetric on the original.
				{"wrong join column", `SELECT DISTINCT s.capital FROM state AS s JOIN border_info AS b ON s.state_name = b.state_name WHERE b.border = 'texas'`},
			}},
		{gold: `SELECT state_name FROM state WHERE state_name NOT IN (SELECT state_name FROM border_info)`,
			same: []variant{
				{"NOT IN vs NOT EXISTS", `SELECT s.state_name FROM state AS s WHERE NOT EXISTS (SELECT 1 FROM border_info AS b WHERE b.state_name = s.state_name)`},
				{"NOT IN vs LEFT JOIN IS NULL", `SELECT s.state_name FROM state AS s LEFT JOIN border_info AS b ON b.state_name = s.state_name WHERE b.state_name IS NULL`},
				{"x NOT IN vs NOT x IN", `SELECT state_name FROM state WHERE NOT state_name IN (SELECT b.state_name FROM border_info AS b)`},
			},
			misses: []variant{
				{"wrong column with equal values", `SELECT state_name FROM state WHERE state_name NOT IN (SELECT border FROM border_info)`},
			}},
		{gold: `SELECT COUNT(*) FROM city WHERE state_name = 'texas'`,
			same: []variant{
				{"COUNT(*) vs COUNT of a NOT NULL column", `SELECT COUNT(country_name) FROM city WHERE state_name = 'texas'`},
				{"count over a derived table", `SELECT COUNT(*) FROM (SELECT city_name FROM city WHERE state_name = 'texas') AS t`},
				{"alias", `SELECT COUNT(*) FROM city AS c WHERE c.state_name = 'texas'`},
			},
			misses: []variant{
				// No two Texas cities share a name on the original.
				{"COUNT(DISTINCT) vs COUNT(*)", `SELECT COUNT(DISTINCT city_name) FROM city WHERE state_name = 'texas'`},
			}},
		{gold: `SELECT city_name FROM city WHERE population = (SELECT MAX(population) FROM city WHERE state_name = 'texas') AND state_name = 'texas'`,
			same: []variant{
				{"= MAX vs NOT EXISTS greater", `SELECT c.city_name FROM city AS c WHERE c.state_name = 'texas' AND NOT EXISTS (SELECT 1 FROM city AS d WHERE d.state_name = 'texas' AND d.population > c.population)`},
				{"= MAX vs >= MAX", `SELECT city_name FROM city WHERE state_name = 'texas' AND population >= (SELECT MAX(population) FROM city WHERE state_name = 'texas')`},
			}},
		{gold: `SELECT state_name, population FROM state WHERE area > 100000`,
			same: []variant{
				{"SELECT columns reordered", `SELECT population, state_name FROM state WHERE 100000 < area`},
				{"reordered, aliased", `SELECT s.population AS p, s.state_name AS n FROM state AS s WHERE s.area > 100000`},
			}},
		{gold: `SELECT capital FROM state WHERE state_name IN ('texas', 'ohio')`,
			same: []variant{
				{"IN list vs OR", `SELECT capital FROM state WHERE state_name = 'ohio' OR state_name = 'texas'`},
				{"IN list vs UNION ALL", `SELECT capital FROM state WHERE state_name = 'texas' UNION ALL SELECT capital FROM state WHERE state_name = 'ohio'`},
			}},
		{gold: `SELECT city_name FROM city WHERE state_name = 'kentucky' ORDER BY population DESC LIMIT 2`,
			same: []variant{
				{"alias, OFFSET 0", `SELECT c.city_name FROM city AS c WHERE c.state_name = 'kentucky' ORDER BY c.population DESC LIMIT 2 OFFSET 0`},
			},
			misses: []variant{
				// Kentucky has two cities on the original.
				{"LIMIT missing", `SELECT city_name FROM city WHERE state_name = 'kentucky' ORDER BY population DESC`},
			}},
		{gold: `SELECT state_name, COUNT(*) FROM city GROUP BY state_name HAVING COUNT(*) > 3`,
			same: []variant{
				{"HAVING vs WHERE on a derived table, reordered", `SELECT n, state_name FROM (SELECT state_name, COUNT(*) AS n FROM city GROUP BY state_name) AS t WHERE n > 3`},
				{"> 3 vs >= 4 on a count", `SELECT c.state_name, COUNT(*) FROM city AS c GROUP BY c.state_name HAVING COUNT(*) >= 4`},
			}},
		{gold: `SELECT DISTINCT river_name FROM river WHERE length > 3000`,
			same: []variant{
				{"DISTINCT vs GROUP BY", `SELECT river_name FROM river WHERE length > 3000 GROUP BY river_name`},
			},
			misses: []variant{
				{"off-by-one constant", `SELECT DISTINCT river_name FROM river WHERE length > 3001`},
			}},
	}},
	{set: "restaurants", db: "restaurants", golds: []goldCase{
		{gold: `SELECT r.name, l.street_name FROM restaurant AS r JOIN location AS l ON r.restaurant_id = l.restaurant_id WHERE r.food_type = 'french' AND l.city_name = 'san francisco'`,
			same: []variant{
				{"join order, SELECT columns reordered", `SELECT l.street_name, r.name FROM location AS l JOIN restaurant AS r ON l.restaurant_id = r.restaurant_id WHERE l.city_name = 'san francisco' AND r.food_type = 'french'`},
				{"comma join, the dataset's aliases", `SELECT RESTAURANTalias0.NAME, LOCATIONalias0.STREET_NAME FROM LOCATION AS LOCATIONalias0, RESTAURANT AS RESTAURANTalias0 WHERE LOCATIONalias0.CITY_NAME = 'san francisco' AND RESTAURANTalias0.RESTAURANT_ID = LOCATIONalias0.RESTAURANT_ID AND RESTAURANTalias0.FOOD_TYPE = 'french'`},
				{"JOIN USING", `SELECT name, street_name FROM restaurant JOIN location USING (restaurant_id) WHERE food_type = 'french' AND location.city_name = 'san francisco'`},
			}},
		{gold: `SELECT name FROM restaurant WHERE restaurant_id IN (SELECT restaurant_id FROM location WHERE street_name = 'solano ave' AND city_name = 'berkeley')`,
			same: []variant{
				{"IN vs EXISTS", `SELECT r.name FROM restaurant AS r WHERE EXISTS (SELECT 1 FROM location AS l WHERE l.restaurant_id = r.restaurant_id AND l.street_name = 'solano ave' AND l.city_name = 'berkeley')`},
				{"subquery vs join on a key", `SELECT r.name FROM location AS l JOIN restaurant AS r ON r.restaurant_id = l.restaurant_id WHERE l.city_name = 'berkeley' AND l.street_name = 'solano ave'`},
			}},
		{gold: `SELECT COUNT(*) FROM restaurant WHERE restaurant_id NOT IN (SELECT restaurant_id FROM location)`,
			same: []variant{
				{"NOT IN vs NOT EXISTS", `SELECT COUNT(*) FROM restaurant AS r WHERE NOT EXISTS (SELECT 1 FROM location AS l WHERE l.restaurant_id = r.restaurant_id)`},
				{"NOT IN vs LEFT JOIN IS NULL", `SELECT COUNT(*) FROM restaurant AS r LEFT JOIN location AS l ON l.restaurant_id = r.restaurant_id WHERE l.restaurant_id IS NULL`},
			}},
		{gold: `SELECT COUNT(*) FROM restaurant WHERE city_name = 'berkeley' AND food_type = 'chinese'`,
			same: []variant{
				{"COUNT(*) vs COUNT(pk)", `SELECT COUNT(restaurant_id) FROM restaurant WHERE city_name = 'berkeley' AND food_type = 'chinese'`},
				{"COUNT(pk), alias", `SELECT COUNT(r.restaurant_id) FROM restaurant AS r WHERE r.food_type = 'chinese' AND r.city_name = 'berkeley'`},
			},
			beyond: []variant{
				// The 36 Chinese restaurants of Berkeley have 36 names. No
				// neighbour asks for two rows with one name among them.
				{"COUNT(DISTINCT name) vs COUNT(*)", `SELECT COUNT(DISTINCT name) FROM restaurant WHERE city_name = 'berkeley' AND food_type = 'chinese'`},
			}},
		{gold: `SELECT name FROM restaurant WHERE city_name = 'american canyon' AND rating BETWEEN 2.4 AND 3.5`,
			same: []variant{
				{"BETWEEN vs two comparisons", `SELECT name FROM restaurant WHERE city_name = 'american canyon' AND rating >= 2.4 AND rating <= 3.5`},
			},
			misses: []variant{
				{"BETWEEN vs two strict comparisons", `SELECT name FROM restaurant WHERE city_name = 'american canyon' AND rating > 2.4 AND rating < 3.5`},
			}},
		{gold: `SELECT city_name, COUNT(*) FROM restaurant WHERE food_type = 'french' GROUP BY city_name`,
			same: []variant{
				{"SELECT columns reordered, COUNT(pk)", `SELECT COUNT(restaurant_id), city_name FROM restaurant WHERE food_type = 'french' GROUP BY city_name`},
			}},
		{gold: `SELECT COUNT(*) FROM restaurant AS r JOIN geographic AS g ON r.city_name = g.city_name WHERE g.region = 'bay area' AND r.food_type = 'chinese'`,
			same: []variant{
				{"join vs IN on a key", `SELECT COUNT(*) FROM restaurant WHERE food_type = 'chinese' AND city_name IN (SELECT city_name FROM geographic WHERE region = 'bay area')`},
				{"join vs EXISTS", `SELECT COUNT(*) FROM restaurant AS r WHERE r.food_type = 'chinese' AND EXISTS (SELECT 1 FROM geographic AS g WHERE g.city_name = r.city_name AND g.region = 'bay area')`},
				{"join order", `SELECT COUNT(*) FROM geographic AS g JOIN restaurant AS r ON g.city_name = r.city_name WHERE r.food_type = 'chinese' AND g.region = 'bay area'`},
			}},
		{gold: `SELECT name FROM restaurant WHERE city_name = 'atherton' AND rating > 1.9`,
			same: []variant{
				{"negated comparison", `SELECT name FROM restaurant WHERE NOT rating <= 1.9 AND city_name = 'atherton'`},
			},
			misses: []variant{
				// No Atherton restaurant is rated 1.9 on the original.
				{"> vs >=", `SELECT name FROM restaurant WHERE city_name = 'atherton' AND rating >= 1.9`},
			}},
		{gold: `SELECT DISTINCT food_type FROM restaurant WHERE city_name = 'angwin'`,
			same: []variant{
				{"DISTINCT vs GROUP BY", `SELECT food_type FROM restaurant WHERE city_name = 'angwin' GROUP BY food_type`},
			},
			misses: []variant{
				// Angwin's two restaurants serve two food types.
				{"missing DISTINCT", `SELECT food_type FROM restaurant WHERE city_name = 'angwin'`},
			}},
		{gold: `SELECT name FROM restaurant WHERE city_name = 'angwin' ORDER BY rating DESC, restaurant_id LIMIT 2`,
			same: []variant{
				{"alias, OFFSET 0", `SELECT r.name FROM restaurant AS r WHERE r.city_name = 'angwin' ORDER BY r.rating DESC, r.restaurant_id ASC LIMIT 2 OFFSET 0`},
			},
			misses: []variant{
				// Angwin has two restaurants on the original.
				{"LIMIT missing", `SELECT name FROM restaurant WHERE city_name = 'angwin' ORDER BY rating DESC, restaurant_id`},
			}},
		{gold: `SELECT r.name FROM restaurant AS r JOIN location AS l ON r.restaurant_id = l.restaurant_id WHERE r.city_name = 'angwin'`,
			same: []variant{
				{"join vs IN on a key", `SELECT name FROM restaurant WHERE city_name = 'angwin' AND restaurant_id IN (SELECT restaurant_id FROM location)`},
			},
			misses: []variant{
				// Both tables name Angwin for its two restaurants.
				{"wrong column with equal values", `SELECT r.name FROM restaurant AS r JOIN location AS l ON r.restaurant_id = l.restaurant_id WHERE l.city_name = 'angwin'`},
			}},
		{gold: `SELECT COUNT(*) FROM location WHERE city_name = 'atherton' AND house_number > 40`,
			same: []variant{
				{"constant on the left, alias", `SELECT COUNT(*) FROM location AS l WHERE 40 < l.house_number AND l.city_name = 'atherton'`},
			},
			misses: []variant{
				// Atherton's house numbers are 36, 55 and 150.
				{"off-by-one constant", `SELECT COUNT(*) FROM location WHERE city_name = 'atherton' AND house_number > 41`},
			}},
	}},
}

// repoFile returns the path of a file of the repository, from the test's
// directory.
func repoFile(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// buildSuite builds the suite of database db (the file orig) for golds
// into root/<db>/, as `evalflow suite build` lays it out, and returns
// the report.
func buildSuite(t *testing.T, root, db, orig string, golds []suite.Gold, o suite.Options) *suite.DBReport {
	t.Helper()
	rep, err := suite.Build(context.Background(), db, orig, filepath.Join(root, db), golds, o)
	if err != nil {
		t.Fatalf("building the suite of %s: %v", db, err)
	}
	t.Logf("%s: %d golds, %d neighbours (dropped %v), %d separated (%d by the original), %d unseparated, %d sampled, %d kept, %s",
		db, rep.Golds, rep.Neighbours, rep.Dropped, rep.Separated, rep.SeparatedByOriginal, len(rep.Unseparated), rep.Sampled, len(rep.Kept), rep.Elapsed)
	if len(rep.GoldIssues) != 0 {
		t.Fatalf("%s: gold issues: %+v", db, rep.GoldIssues)
	}
	if len(rep.Kept) == 0 {
		t.Fatalf("%s: the suite holds the original alone", db)
	}
	return rep
}

// pair is one (gold, prediction) item scored by scorePairs.
type pair struct{ id, db, gold, pred string }

// verdict is what a run wrote for one item.
type verdict struct {
	ex, exSuite float64
	hasSuite    bool
	sepDB       string // ex_suite_db
	status, err string
	note        string
}

// scorePairs runs the curated pipeline pipelines/text2sql-replay.hcl on
// the pairs with -var databases=root -var compare=<compare>: the code a
// run scores with, ex on the item's own database and ex_suite on every
// database of its folder.
func scorePairs(t *testing.T, root, compare string, pairs []pair) map[string]verdict {
	t.Helper()
	dir := t.TempDir()
	var items, preds []map[string]string
	for _, p := range pairs {
		items = append(items, map[string]string{"id": p.id, "question": p.id, "gold": p.gold, "db": p.db})
		preds = append(preds, map[string]string{"id": p.id, "pred": p.pred})
	}
	writeJSONL(t, filepath.Join(dir, "items.jsonl"), items)
	writeJSONL(t, filepath.Join(dir, "preds.jsonl"), preds)
	p, diags := dsl.Load(repoFile(t, "pipelines/text2sql-replay.hcl"), dsl.LoadOptions{Env: []string{}, Vars: []string{
		"dataset=" + filepath.Join(dir, "items.jsonl"),
		"predictions=" + filepath.Join(dir, "preds.jsonl"),
		"databases=" + root,
		"compare=" + compare,
		"concurrency=2",
	}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{})
	if pl != nil {
		t.Cleanup(func() { pl.Close() })
	}
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string]verdict{}
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		v := verdict{status: r.Status, err: r.Error}
		ex, ok := r.Score("ex")
		if !ok {
			return fmt.Errorf("%s: no ex", r.Item.ID)
		}
		v.ex = ex.Value
		if s, ok := r.Score("ex_suite"); ok {
			v.hasSuite, v.exSuite, v.note = true, s.Value, s.Note
			if s.Err != "" {
				v.note = s.Err
			}
			if s.Separation != nil {
				v.sepDB = s.Separation.DB
			}
		}
		got[r.Item.ID] = v
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pairs) {
		t.Fatalf("%d records for %d items", len(got), len(pairs))
	}
	return got
}

func writeJSONL(t *testing.T, path string, rows []map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// hasDistinct reports whether a query says DISTINCT, which the testsuite
// profile strips before running (docs/metrics.md): such a pair is
// compared under testsuite_keep_distinct only.
func hasDistinct(q string) bool { return strings.Contains(strings.ToLower(q), "distinct") }

// TestSuiteRewrites builds the suites of GeoQuery and Restaurants for
// golds of our own, then scores pairs through the replay pipeline on
// them: every gold against itself and every equivalent rewrite must score
// 1 on every database of the suite (ex and ex_suite 1), and every
// near-miss must score 1 on the original alone (ex 1: otherwise it is no
// near-miss) and 0 on the suite (ex_suite 0, separated by a generated
// database). A near-miss no neighbour of its gold stands for (beyond)
// must score ex 1; its suite verdict is only logged. Under
// testsuite_keep_distinct, the builder's own comparison, for all pairs;
// under testsuite (which strips DISTINCT) for the pairs that do not say
// DISTINCT.
func TestSuiteRewrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two suites")
	}
	if suite.RaceEnabled {
		t.Skip("builds whole suites: run without -race (make test does)")
	}
	data := shareddata.Dir(t)
	root := t.TempDir()
	var pairs []pair
	kind := map[string]string{} // id → "same", "miss" or "beyond"
	what := map[string]string{}
	for _, qs := range rewriteSets {
		var golds []suite.Gold
		for i, g := range qs.golds {
			gid := fmt.Sprintf("%s-%02d", qs.db, i)
			golds = append(golds, suite.Gold{Text: g.gold, IDs: []string{gid}})
			add := func(id, k, w, pred string) {
				pairs = append(pairs, pair{id: id, db: qs.db, gold: g.gold, pred: pred})
				kind[id], what[id] = k, w
			}
			add(gid+"-gold", "same", "the gold itself", g.gold)
			for j, v := range g.same {
				add(fmt.Sprintf("%s-same-%d", gid, j), "same", v.what, v.sql)
			}
			for j, v := range g.misses {
				add(fmt.Sprintf("%s-miss-%d", gid, j), "miss", v.what, v.sql)
			}
			for j, v := range g.beyond {
				add(fmt.Sprintf("%s-beyond-%d", gid, j), "beyond", v.what, v.sql)
			}
		}
		o := suite.DefaultOptions()
		// Verification draws only measure the suite; they never change
		// which databases are kept. A short screen for speed.
		o.Verify = 0
		o.ScreenTimeout = 500 * time.Millisecond
		start := time.Now()
		buildSuite(t, root, qs.db, filepath.Join(data, qs.set, qs.db+".sqlite"), golds, o)
		t.Logf("%s: built in %s", qs.db, time.Since(start).Round(time.Millisecond))
	}
	for _, compare := range []string{"testsuite_keep_distinct", "testsuite"} {
		t.Run(compare, func(t *testing.T) {
			var ps []pair
			for _, p := range pairs {
				if compare == "testsuite" && (hasDistinct(p.gold) || hasDistinct(p.pred)) {
					continue
				}
				ps = append(ps, p)
			}
			start := time.Now()
			got := scorePairs(t, root, compare, ps)
			t.Logf("%d pairs scored in %s", len(ps), time.Since(start).Round(time.Millisecond))
			same, miss := 0, 0
			for _, p := range ps {
				v := got[p.id]
				desc := fmt.Sprintf("%s (%s)\n  gold %s\n  pred %s", p.id, what[p.id], p.gold, p.pred)
				if v.status != "ok" || !v.hasSuite {
					t.Errorf("%s: status %q (%s), suite verdict %v", desc, v.status, v.err, v.hasSuite)
					continue
				}
				switch kind[p.id] {
				case "same":
					same++
					if v.ex != 1 || v.exSuite != 1 {
						t.Errorf("%s: an equivalent rewrite scores ex %v, ex_suite %v (separated by %s: %s)", desc, v.ex, v.exSuite, v.sepDB, v.note)
					}
				case "miss":
					miss++
					if v.ex != 1 {
						t.Errorf("%s: not a near-miss: ex %v on the original", desc, v.ex)
					}
					if v.exSuite != 0 {
						t.Errorf("%s: the suite does not separate the near-miss (ex_suite %v)", desc, v.exSuite)
					} else if v.sepDB == "" || v.sepDB == p.db+".sqlite" {
						t.Errorf("%s: separated by %q, want a generated database", desc, v.sepDB)
					} else {
						t.Logf("%s: separated by %s", p.id, v.sepDB)
					}
				case "beyond":
					if v.ex != 1 {
						t.Errorf("%s: not a near-miss: ex %v on the original", desc, v.ex)
					}
					t.Logf("%s (%s), beyond the neighbours: ex_suite %v %s", p.id, what[p.id], v.exSuite, v.sepDB)
				}
			}
			t.Logf("%s: %d pairs that mean the same scored, %d near-misses", compare, same, miss)
		})
	}
}
