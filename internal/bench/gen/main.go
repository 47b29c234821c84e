// Command gen writes the inputs of the end-to-end CLI benchmarks
// (scripts/bench-cli.sh, docs/benchmarks-baseline.md) into a directory,
// normally a temporary one: nothing it writes belongs in the repository.
//
//	go run ./internal/bench/gen -kind geo     -n 8000   -out DIR -geo ../shared/data/geoquery/conformance/items.jsonl
//	go run ./internal/bench/gen -kind wide    -n 8000   -out DIR
//	go run ./internal/bench/gen -kind trivial -n 100000 -out DIR
//	go run ./internal/bench/gen -kind llm     -n 4000   -out DIR
//
// Every kind writes DIR/items.jsonl (id, question, gold, db) and, for the
// replay kinds, DIR/preds.jsonl (id, pred).
//
// geo: N items cycled from the GeoQuery conformance set (400 items, each a
// gold and a prediction over geography.sqlite). Every query text in the
// output is distinct — no two items, and not an item's gold and its own
// prediction, share a text — so no per-text cache (evalflow's stage cache
// is keyed by the query text) can answer one query from another's result.
// A text is made distinct by prefixing an unused common table expression:
//
//	WITH bench_g000123 AS (SELECT 123) <original query>
//
// SQLite never evaluates a CTE that the statement does not reference, so
// the result, its column names and its order are the original query's and
// the plan of the main query is unchanged (the only extra cost is parsing
// a dozen tokens, paid equally by evalflow and the raw floor). A trailing
// comment would not do (comments may be stripped before hashing), nor would
// whitespace, and a no-op predicate (AND n = n) needs a WHERE clause in the
// right place in every query. No GeoQuery query starts with WITH, so the
// prefix always yields a single valid WITH … SELECT; evalflow's read-only
// check accepts WITH. The pass-through fields of the conformance file
// (kind, hardness, gold_rows …) are dropped: gold_rows collides with a
// column evalflow writes. The 400 conformance items score ex = 0.415 with
// compare=testsuite, so 20 copies must too — a check that the prefix did
// not change a result.
//
// wide: N items over geography.sqlite (the directory -geo's file sits in
// the parent of) whose results are wide and long: each gold selects two
// to four columns of CITY, STATE, RIVER, BORDER_INFO, LAKE or MOUNTAIN,
// all rows or those past a threshold (tens to hundreds of rows, 1.76
// million in all at 8,000 items), sometimes ordered; each prediction is
// the gold again (a third), its columns in another order (test-suite
// accepts a permutation), with DISTINCT, with another threshold, or
// another table — so results are compared row by row, not only counted.
// Texts are made distinct as for geo; the choices follow a fixed seed, so
// a size always gives the same files. The GeoQuery replay's results have
// a row or two; this one prices what evalflow does a row.
//
// trivial: N items whose gold and prediction are both "SELECT 1" over
// DIR/t.sqlite, an empty (zero-byte) SQLite database; the planner's and the
// run directory's cost with as little query and metric work as possible.
//
// llm: N items with distinct questions over DIR/t.sqlite and no
// predictions (a model generates them), so every prompt is distinct.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	kind := flag.String("kind", "", "geo, wide, trivial or llm")
	n := flag.Int("n", 0, "number of items")
	out := flag.String("out", "", "output directory (created)")
	geo := flag.String("geo", "", "GeoQuery conformance items.jsonl (kind geo)")
	flag.Parse()
	if *n <= 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -n and -out are required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	var err error
	switch *kind {
	case "geo":
		err = writeGeo(*out, *n, *geo)
	case "wide":
		err = writeWide(*out, *n)
	case "trivial":
		err = writeTrivial(*out, *n)
	case "llm":
		err = writeLLM(*out, *n)
	default:
		fmt.Fprintln(os.Stderr, "gen: -kind must be geo, wide, trivial or llm")
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

type geoItem struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Gold     string `json:"gold"`
	Pred     string `json:"pred"`
	DB       string `json:"db"`
}

// distinct prefixes q with an unused CTE named after tag and n.
func distinct(tag string, n int, q string) string {
	return fmt.Sprintf("WITH bench_%s%06d AS (SELECT %d) %s", tag, n, n, q)
}

func writeGeo(dir string, n int, src string) error {
	if src == "" {
		return fmt.Errorf("-geo is required for kind geo")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var base []geoItem
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var it geoItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			return fmt.Errorf("%s:%d: %v", src, i+1, err)
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(it.Gold)), "WITH") ||
			strings.HasPrefix(strings.ToUpper(strings.TrimSpace(it.Pred)), "WITH") {
			return fmt.Errorf("%s:%d: a query already starts with WITH; the distinct prefix would not parse", src, i+1)
		}
		base = append(base, it)
	}
	return writePair(dir, n, func(i int) (item map[string]any, pred string) {
		it := base[i%len(base)]
		rep := i / len(base)
		return map[string]any{
			"id":       fmt.Sprintf("%s-r%03d", it.ID, rep),
			"question": fmt.Sprintf("%s (copy %d)", it.Question, rep),
			"gold":     distinct("g", i, it.Gold),
			"db":       it.DB,
		}, distinct("p", i, it.Pred)
	})
}

// wideTables are geography.sqlite's tables with the columns wide
// queries select and a numeric column to cut rows by (its values'
// range), none where the table has none.
var wideTables = []struct {
	name     string
	cols     []string
	num      string
	min, max int
}{
	{"CITY", []string{"CITY_NAME", "POPULATION", "COUNTRY_NAME", "STATE_NAME"}, "POPULATION", 0, 400000},
	{"STATE", []string{"STATE_NAME", "POPULATION", "AREA", "CAPITAL", "DENSITY"}, "POPULATION", 0, 5000000},
	{"RIVER", []string{"RIVER_NAME", "LENGTH", "COUNTRY_NAME", "TRAVERSE"}, "LENGTH", 0, 2000},
	{"BORDER_INFO", []string{"STATE_NAME", "BORDER"}, "", 0, 0},
	{"LAKE", []string{"LAKE_NAME", "AREA", "COUNTRY_NAME", "STATE_NAME"}, "AREA", 0, 5000},
	{"MOUNTAIN", []string{"MOUNTAIN_NAME", "MOUNTAIN_ALTITUDE", "COUNTRY_NAME", "STATE_NAME"}, "MOUNTAIN_ALTITUDE", 10000, 15000},
}

// wideQuery is one query of kind wide.
type wideQuery struct {
	table    int
	cols     []string
	distinct bool
	cut      int // rows with num > cut; -1: every row
	order    bool
}

func (q wideQuery) String() string {
	t := wideTables[q.table]
	var b strings.Builder
	b.WriteString("SELECT ")
	if q.distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(strings.Join(q.cols, ", "))
	b.WriteString(" FROM " + t.name)
	if q.cut >= 0 && t.num != "" {
		fmt.Fprintf(&b, " WHERE %s > %d", t.num, q.cut)
	}
	if q.order {
		b.WriteString(" ORDER BY " + q.cols[0])
	}
	return b.String()
}

func writeWide(dir string, n int) error {
	rng := rand.New(rand.NewPCG(14, 8000))
	pick := func() wideQuery {
		ti := rng.IntN(len(wideTables))
		t := wideTables[ti]
		cols := slices.Clone(t.cols)
		rng.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		q := wideQuery{table: ti, cols: cols[:min(len(cols), 2+rng.IntN(3))], cut: -1, order: rng.IntN(4) == 0}
		if t.num != "" && rng.IntN(2) == 0 {
			q.cut = t.min + rng.IntN(t.max-t.min)
		}
		return q
	}
	return writePair(dir, n, func(i int) (map[string]any, string) {
		g := pick()
		p := g
		switch k := rng.IntN(12); {
		case k < 4: // the same query
		case k < 6: // the columns in another order
			p.cols = slices.Clone(g.cols)
			rng.Shuffle(len(p.cols), func(i, j int) { p.cols[i], p.cols[j] = p.cols[j], p.cols[i] })
		case k < 8:
			p.distinct = true
		case k < 10:
			if t := wideTables[g.table]; t.num != "" {
				p.cut = t.min + rng.IntN(t.max-t.min)
			}
		default:
			p = pick()
		}
		return map[string]any{
			"id":       fmt.Sprintf("w%06d", i),
			"question": fmt.Sprintf("wide question %d", i),
			"gold":     distinct("g", i, g.String()),
			"db":       "geography",
		}, distinct("p", i, p.String())
	})
}

func writeTrivial(dir string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, "t.sqlite"), nil, 0o644); err != nil {
		return err
	}
	return writePair(dir, n, func(i int) (map[string]any, string) {
		return map[string]any{
			"id":       fmt.Sprintf("t%07d", i),
			"question": fmt.Sprintf("question %d", i),
			"gold":     "SELECT 1",
			"db":       "t",
		}, "SELECT 1"
	})
}

func writeLLM(dir string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, "t.sqlite"), nil, 0o644); err != nil {
		return err
	}
	return writePair(dir, n, func(i int) (map[string]any, string) {
		return map[string]any{
			"id":       fmt.Sprintf("q%07d", i),
			"question": fmt.Sprintf("what is the answer to question number %d", i),
			"gold":     "SELECT 1",
			"db":       "t",
		}, ""
	})
}

// writePair writes items.jsonl and, when any pred is non-empty, preds.jsonl.
func writePair(dir string, n int, f func(i int) (map[string]any, string)) error {
	items, err := os.Create(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		return err
	}
	defer items.Close()
	iw := bufio.NewWriterSize(items, 1<<20)
	var pw *bufio.Writer
	var preds *os.File
	for i := range n {
		it, pred := f(i)
		if err := encode(iw, it); err != nil {
			return err
		}
		if pred == "" {
			continue
		}
		if pw == nil {
			if preds, err = os.Create(filepath.Join(dir, "preds.jsonl")); err != nil {
				return err
			}
			defer preds.Close()
			pw = bufio.NewWriterSize(preds, 1<<20)
		}
		if err := encode(pw, map[string]string{"id": it["id"].(string), "pred": pred}); err != nil {
			return err
		}
	}
	if err := iw.Flush(); err != nil {
		return err
	}
	if err := items.Close(); err != nil {
		return err
	}
	if pw != nil {
		if err := pw.Flush(); err != nil {
			return err
		}
		return preds.Close()
	}
	return nil
}

// encode writes v as one JSON line without HTML escaping (< > & stay as
// they are, as Python's json.dumps writes them), so readers see the
// same bytes a real benchmark file has.
func encode(w *bufio.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return e.Encode(v)
}
