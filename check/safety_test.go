package check

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

type corpusEntry struct {
	Lang   string `json:"lang"`
	Query  string `json:"query"`
	Unsafe bool   `json:"unsafe"`
	Why    string `json:"why"`
}

func readCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/safety_corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("safety_corpus.jsonl:%d: %v", line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSafetyCorpus is seed 001 MC-REQ-03 on the labelled corpus: every
// unsafe query must be caught (100% recall); the false-positive rate on
// safe queries is reported (docs/validation.md records it).
func TestSafetyCorpus(t *testing.T) {
	corpus := readCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus has %d queries, want at least 200", len(corpus))
	}
	type counts struct{ unsafe, caught, safe, fp int }
	by := map[string]*counts{}
	total := &counts{}
	for i, e := range corpus {
		ok, reason := Safe(e.Lang, e.Query)
		c := by[e.Lang]
		if c == nil {
			c = &counts{}
			by[e.Lang] = c
		}
		for _, c := range []*counts{c, total} {
			if e.Unsafe {
				c.unsafe++
				if !ok {
					c.caught++
				}
			} else {
				c.safe++
				if !ok {
					c.fp++
				}
			}
		}
		switch {
		case e.Unsafe && ok:
			t.Errorf("line %d (%s, %s): unsafe query not caught: %q", i+1, e.Lang, e.Why, e.Query)
		case !e.Unsafe && !ok:
			t.Logf("line %d (%s, %s): false positive: %q: %s", i+1, e.Lang, e.Why, e.Query, reason)
		case !ok && reason == "":
			t.Errorf("line %d: rejected without a reason", i+1)
		}
	}
	langs := make([]string, 0, len(by))
	for l := range by {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range append(langs, "all") {
		c := total
		if l != "all" {
			c = by[l]
		}
		t.Logf("%-6s unsafe %3d caught %3d (recall %.1f%%)  safe %3d false positives %d (FP rate %.1f%%)",
			l, c.unsafe, c.caught, 100*float64(c.caught)/float64(max(c.unsafe, 1)), c.safe, c.fp, 100*float64(c.fp)/float64(max(c.safe, 1)))
	}
	// Recall on unsafe queries must be 100% (each miss is an error above).
	// False positives on the labelled safe queries: measured 1 of 107
	// (0.9%: go test ./check -run TestSafetyCorpus -v); the threshold is
	// that count, so a new false positive fails.
	if total.caught != total.unsafe {
		t.Errorf("recall %d of %d unsafe queries, want all", total.caught, total.unsafe)
	}
	if total.fp > maxCorpusFalsePositives {
		t.Errorf("%d false positives on %d safe queries, above the threshold of %d", total.fp, total.safe, maxCorpusFalsePositives)
	}
}

// maxCorpusFalsePositives is the number of labelled-safe corpus queries the
// safety check may refuse today.
const maxCorpusFalsePositives = 1

func TestSafeReasons(t *testing.T) {
	tests := []struct {
		lang, query string
		want        string // substring of the reason; "" means safe
	}{
		{SQL, "SELECT 1", ""},
		{SQL, "SELECT 1; DROP TABLE t", "multiple statements"},
		{SQL, "SELECT load_extension('x')", "load_extension"},
		{SQL, "COPY t TO PROGRAM 'sh'", "not a read-only query"},
		{Cypher, "MATCH (n) DETACH DELETE n", "DETACH"},
		{Cypher, "CALL apoc.load.json('x')", "apoc.load.json"},
		{Cypher, "CALL db.labels()", ""},
		{SPARQL, "SELECT * { SERVICE <x:y> { ?s ?p ?o } }", "SERVICE"},
		{SPARQL, "CLEAR ALL", "Update"},
		{"prolog", "x", "unknown query language"},
	}
	for _, tc := range tests {
		t.Run(tc.lang+" "+tc.query, func(t *testing.T) {
			ok, reason := Safe(tc.lang, tc.query)
			if tc.want == "" {
				if !ok {
					t.Errorf("rejected: %s", reason)
				}
				return
			}
			if ok || !strings.Contains(reason, tc.want) {
				t.Errorf("got (%v, %q), want a rejection mentioning %q", ok, reason, tc.want)
			}
		})
	}
}

// FuzzSafe checks that Safe never panics, always gives a reason for a
// rejection, and rejects a stacked write after any query whose text ends
// outside a string or comment (checked by appending a newline, which ends a
// line comment, and requiring the query to be closed).
func FuzzSafe(f *testing.F) {
	for _, e := range readCorpus(f) {
		f.Add(e.Lang, e.Query)
	}
	f.Fuzz(func(t *testing.T, lang, q string) {
		ok, reason := Safe(lang, q)
		if !ok && reason == "" {
			t.Fatalf("rejected without a reason: %q", q)
		}
		if lang == Cypher && closedCypher(q) {
			if ok, _ := Safe(Cypher, q+"\n;MATCH (n) DELETE n"); ok {
				t.Fatalf("stacked delete after %q is safe", q)
			}
		}
	})
}

// closedCypher reports whether q lexes, under both readings, without an
// unterminated string, quoted name, block comment or quoted parameter: each
// such token ends at the same place when more text follows it (an
// unterminated one would swallow that text; "```" is an escaped backtick
// and no closing one).
func closedCypher(q string) bool {
	for _, bs := range []bool{true, false} {
		for _, t := range lexCypher(normalize(q), bs) {
			switch {
			case t.Kind == tString, t.Kind == tQuoted, t.Kind == tParam && strings.HasPrefix(t.Text, "$`"),
				t.Kind == tComment && strings.HasPrefix(t.Text, "/*"):
				if again := lexCypher(t.Text+" x", bs); again[0].Text != t.Text {
					return false
				}
			}
		}
	}
	return true
}
