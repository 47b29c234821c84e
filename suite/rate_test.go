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
	"github.com/evalflow/evalflow/metrics"
)

// writeDB creates a SQLite file from a script of statements separated by
// semicolons.
func writeDB(t *testing.T, path, script string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range strings.Split(script, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// rateDDL: on this schema every neighbour of rateGolds can be separated
// except the DISTINCT toggles (id is the key, count(*) is one row).
const rateDDL = `
CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER NOT NULL);
INSERT INTO t VALUES (1, 3), (2, 7);
`

var rateGolds = []Gold{
	{Text: "SELECT id FROM t WHERE a = 3", IDs: []string{"q1"}},
	{Text: "SELECT DISTINCT id FROM t", IDs: []string{"q2"}},
	{Text: "SELECT count(*) FROM t", IDs: []string{"q3"}},
}

// TestSeparationRate: the separable neighbours are exactly the ones that
// are not equivalent to their gold, the rate is separated/separable, and
// what the suite leaves separable is listed with the verification reason.
func TestSeparationRate(t *testing.T) {
	orig := filepath.Join(t.TempDir(), "r.sqlite")
	writeDB(t, orig, rateDDL)
	equivalent := func(u Unseparated) bool { return u.Mutation == "toggle DISTINCT" }
	tests := []struct {
		name            string
		samples, maxDBs int
		verify          int
		wantRate        func(r *DBReport) bool
		wantReason      string // of the separable ones left unseparated, if any
	}{
		{"suite separates all", 60, 10, 40, func(r *DBReport) bool { return r.SeparationRate == 1 }, ""},
		{"original only, verification finds the rest", 0, 0, 40, func(r *DBReport) bool {
			return r.Separated == r.SeparatedByOriginal && r.SeparationRate < 1
		}, reasonVerify},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Samples, o.MaxDBs, o.Verify = tt.samples, tt.maxDBs, tt.verify
			rep, err := Build(context.Background(), "r", orig, t.TempDir(), rateGolds, o)
			if err != nil {
				t.Fatal(err)
			}
			kept := rep.Neighbours - sum(rep.Dropped)
			nEquiv := 0
			for _, u := range rep.Unseparated {
				switch {
				case equivalent(u):
					nEquiv++
					if u.Reason != reasonNoneSeen {
						t.Errorf("equivalent neighbour %q listed as %q", u.Neighbour, u.Reason)
					}
				case u.Reason != tt.wantReason:
					t.Errorf("separable neighbour %q (%s) listed as %q, want %q", u.Neighbour, u.Mutation, u.Reason, tt.wantReason)
				}
			}
			if nEquiv != 3 {
				t.Errorf("%d equivalent neighbours left unseparated, want 3 (the DISTINCT toggles: id is the key, count(*) one row)", nEquiv)
			}
			if rep.Separable != kept-nEquiv {
				t.Errorf("separable %d, want %d (kept neighbours %d less the %d equivalent ones)", rep.Separable, kept-nEquiv, kept, nEquiv)
			}
			if want := rate(rep.Separated, rep.Separable); rep.SeparationRate != want {
				t.Errorf("separation_rate %v, want %v", rep.SeparationRate, want)
			}
			if !tt.wantRate(rep) {
				t.Errorf("separated %d (by the original %d) of %d separable: rate %v", rep.Separated, rep.SeparatedByOriginal, rep.Separable, rep.SeparationRate)
			}
			rp := &Report{Databases: []*DBReport{rep}, Verify: tt.verify}
			var b strings.Builder
			rp.WriteSummary(&b, true)
			if !strings.Contains(b.String(), fmt.Sprintf("| %.4f |", rep.SeparationRate)) {
				t.Errorf("the summary does not show the rate:\n%s", b.String())
			}
		})
	}
}

// nestedDDL: p's scores tie at the top on the original.
const nestedDDL = `
CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
INSERT INTO p VALUES (1, 'a', 5), (2, 'b', 9), (3, 'c', 4);
`

var nestedGolds = []Gold{
	{Text: "SELECT name FROM p WHERE id = (SELECT id FROM p ORDER BY score DESC LIMIT 1)", IDs: []string{"eq"}},
	{Text: "SELECT name FROM p WHERE id IN (SELECT id FROM p ORDER BY score LIMIT 2)", IDs: []string{"in"}},
}

// TestNestedTies: a database where a sub-query's ORDER BY … LIMIT has ties
// at the limit is refused, one without such ties is accepted, and a built
// suite keeps no database with them.
func TestNestedTies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	orig := filepath.Join(dir, "n.sqlite")
	writeDB(t, orig, nestedDDL)
	h, err := sql.Open("sqlite", "file:"+orig+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSQLite(ctx, h)
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	for _, g := range nestedGolds {
		tcs := tieChecks(g.Text, o.Profile.Ordered(g.Text))
		if len(tcs) != 1 || tcs[0].top {
			t.Fatalf("%s: checks %+v, want one for the sub-query", g.Text, tcs)
		}
	}
	tests := []struct {
		name string
		gold int
		rows [][]any
		want string
	}{
		{"= sub-query, tie at LIMIT 1", 0, [][]any{{int64(1), "a", int64(9)}, {int64(2), "b", int64(9)}, {int64(3), "c", int64(1)}}, rejectNestedTies},
		{"= sub-query, no tie", 0, [][]any{{int64(1), "a", int64(9)}, {int64(2), "b", int64(8)}, {int64(3), "c", int64(8)}}, ""},
		{"IN sub-query, tie at LIMIT 2", 1, [][]any{{int64(1), "a", int64(1)}, {int64(2), "b", int64(2)}, {int64(3), "c", int64(2)}}, rejectNestedTies},
		{"IN sub-query, tie inside the limit only", 1, [][]any{{int64(1), "a", int64(1)}, {int64(2), "b", int64(1)}, {int64(3), "c", int64(2)}}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := nestedGolds[tt.gold].Text
			runs := []*goldRun{{exec: g, ties: tieChecks(g, o.Profile.Ordered(g))}}
			gen := &genDB{rows: map[string][][]any{"p": tt.rows}}
			_, reason, tieGold, err := evalSample(ctx, o, s, gen, filepath.Join(dir, fmt.Sprintf("s%d.sqlite", i)), runs, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if reason != tt.want || (tt.want != "") != (tieGold == 0) {
				t.Errorf("reason %q (gold %d), want %q", reason, tieGold, tt.want)
			}
		})
	}
	out := filepath.Join(dir, "suite")
	o.Samples, o.MaxDBs, o.Verify = 60, 10, 0
	rep, err := Build(ctx, "n", orig, out, nestedGolds, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Kept) == 0 {
		t.Fatalf("no database kept: %+v", rep)
	}
	ex, err := sqlite.New(engine.Config{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for _, k := range rep.Kept {
		path := filepath.Join(out, k.File)
		// 1 when the sub-query of the first gold, of the second, has a tie
		// at its limit.
		for _, q := range []string{
			"SELECT (SELECT count(*) FROM p WHERE score = (SELECT max(score) FROM p)) > 1",
			"SELECT (SELECT score FROM p ORDER BY score LIMIT 1 OFFSET 1) = (SELECT score FROM p ORDER BY score LIMIT 1 OFFSET 2)",
		} {
			res, err := ex.Execute(ctx, engine.Query{Text: q, DB: path})
			if err != nil {
				t.Fatal(err)
			}
			if v := fmt.Sprint(res.Rows[0][0]); v == "1" || v == "true" {
				t.Errorf("%s: a kept database has a tie at a sub-query's LIMIT (%s)", k.File, q)
			}
		}
	}
	goldSelfMatch(t, out, nestedGolds, rep, o.Profile)
}

// goldSelfMatch checks that every gold scores 1 against itself on every
// database of a suite (the original's copy and the kept ones) under the
// profile.
func goldSelfMatch(t *testing.T, dir string, golds []Gold, rep *DBReport, p metrics.Profile) {
	t.Helper()
	ctx := context.Background()
	ex, err := sqlite.New(engine.Config{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	left := map[string]bool{}
	for _, gi := range rep.GoldIssues {
		left[gi.Gold] = true
	}
	files := []string{rep.DB + ".sqlite"}
	for _, k := range rep.Kept {
		files = append(files, k.File)
	}
	for _, f := range files {
		path := filepath.Join(dir, f)
		for _, g := range golds {
			if left[g.Text] {
				continue
			}
			exec, order := p.PrepareGold(g.Text)
			a, err := ex.Execute(ctx, engine.Query{Text: exec, DB: path})
			if err != nil {
				t.Errorf("%s: gold %s fails: %v", f, g.IDs[0], err)
				continue
			}
			b, err := ex.Execute(ctx, engine.Query{Text: p.PreparePred(g.Text), DB: path})
			if err != nil || !metrics.CompareTables(a, b, p.CompareOptions(order, metrics.Tolerance{})).Match {
				t.Errorf("%s: gold %s does not score 1 against itself (%v)", f, g.IDs[0], err)
			}
		}
	}
}
