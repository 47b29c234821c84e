package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Report is OUT/suite.json: the build's inputs and one DBReport per
// database, in the order the dataset first names them. Apart from the
// elapsed times it depends only on the inputs and the seed.
type Report struct {
	Dataset   string      `json:"dataset"`
	Engine    string      `json:"engine"`
	Compare   string      `json:"compare"`
	Seed      uint64      `json:"seed"`
	MaxDBs    int         `json:"max_dbs"`
	Samples   int         `json:"samples"`
	Verify    int         `json:"verify"`
	MaxRows   int         `json:"max_rows"`
	Nulls     bool        `json:"nulls"`
	Empty     bool        `json:"empty_tables"`
	Databases []*DBReport `json:"databases"`
	// Totals sums the databases (WriteFiles fills it).
	Totals  *Totals `json:"totals,omitempty"`
	Elapsed string  `json:"elapsed"`
}

// Totals are the sums over a Report's databases.
type Totals struct {
	Golds          int     `json:"golds"`
	Neighbours     int     `json:"neighbours"`
	Dropped        int     `json:"dropped"`
	Separated      int     `json:"separated"`
	Separable      int     `json:"separable"`
	SeparationRate float64 `json:"separation_rate"`
	Unseparated    int     `json:"unseparated"`
	Kept           int     `json:"kept"`
}

// Sum fills r.Totals from r.Databases and returns it.
func (r *Report) Sum() *Totals {
	t := &Totals{}
	for _, d := range r.Databases {
		t.Golds += d.Golds
		t.Neighbours += d.Neighbours
		t.Dropped += sum(d.Dropped)
		t.Separated += d.Separated
		t.Separable += d.Separable
		t.Unseparated += len(d.Unseparated)
		t.Kept += len(d.Kept)
	}
	t.SeparationRate = rate(t.Separated, t.Separable)
	r.Totals = t
	return t
}

// DBReport is what Build did for one database.
type DBReport struct {
	DB     string `json:"db"`
	Engine string `json:"engine"`
	// Golds is the number of distinct gold queries.
	Golds int `json:"golds"`
	// SchemaNotes lists the foreign keys of the schema that were ignored.
	SchemaNotes []string    `json:"schema_notes,omitempty"`
	GoldIssues  []GoldIssue `json:"gold_issues,omitempty"`
	// Neighbours counts the candidates generated; Dropped those that did
	// not run on the original, by reason.
	Neighbours int            `json:"neighbours"`
	Dropped    map[string]int `json:"dropped"`
	// Separated counts the kept neighbours whose result differs from the
	// gold's on some database of the suite; SeparatedByOriginal those the
	// original alone separates.
	Separated           int `json:"separated"`
	SeparatedByOriginal int `json:"separated_by_original"`
	// Separable counts the neighbours some database is known to separate:
	// the separated ones, plus those a drawn database that was not kept
	// (over MaxDBs) or a verification database separates.
	// SeparationRate is Separated/Separable (1 when nothing is separable),
	// rounded to four decimals.
	Separable      int     `json:"separable"`
	SeparationRate float64 `json:"separation_rate"`
	// Unseparated lists the neighbours the suite does not separate, each
	// with the reason: separable (and by what) or not seen separated.
	Unseparated []Unseparated `json:"unseparated"`
	// Sampled counts the random databases drawn; Rejected those not kept,
	// by reason.
	Sampled  int            `json:"sampled"`
	Rejected map[string]int `json:"rejected"`
	Kept     []KeptDB       `json:"kept"`
	// VerifySampled counts the verification databases drawn (Options.Verify;
	// fewer when every neighbour was settled); VerifyRejected those that
	// could not be used, by reason.
	VerifySampled  int            `json:"verify_sampled"`
	VerifyRejected map[string]int `json:"verify_rejected"`
	Elapsed        string         `json:"elapsed"`
}

// GoldIssue is a gold query that was left out, and why.
type GoldIssue struct {
	IDs     []string `json:"ids"`
	Gold    string   `json:"gold"`
	Problem string   `json:"problem"`
}

// Unseparated is a neighbour that no database of the suite tells apart
// from its gold: an equivalent query, or one the budget did not reach.
type Unseparated struct {
	IDs       []string `json:"ids"`
	Gold      string   `json:"gold"`
	Mutation  string   `json:"mutation"`
	Neighbour string   `json:"neighbour"`
	Reason    string   `json:"reason"`
}

// KeptDB is one generated database of the suite.
type KeptDB struct {
	File      string `json:"file"`
	Sample    int    `json:"sample"`
	Separated int    `json:"separated"`
}

// WriteFiles fills the totals and writes dir/suite.json and dir/summary.md.
func (r *Report) WriteFiles(dir string) error {
	r.Sum()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "suite.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return err
	}
	r.WriteSummary(f, true)
	return f.Close()
}

// WriteSummary writes the readable summary: one line per database, then
// (when full) the reasons and the unseparated neighbours with their text.
func (r *Report) WriteSummary(w io.Writer, full bool) {
	fmt.Fprintf(w, "# Suite of %s (engine %s, compare %s, seed %d)\n\n", r.Dataset, r.Engine, r.Compare, r.Seed)
	fmt.Fprintf(w, "| db | golds | neighbours | dropped | separated | by original | separable | rate | unseparated | sampled | kept | verify | time |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range r.Databases {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %.4f | %d | %d | %d | %d | %s |\n", d.DB, d.Golds, d.Neighbours, sum(d.Dropped),
			d.Separated, d.SeparatedByOriginal, d.Separable, d.SeparationRate, len(d.Unseparated), d.Sampled, len(d.Kept), d.VerifySampled, d.Elapsed)
	}
	if len(r.Databases) > 1 {
		t := r.Totals
		if t == nil {
			t = r.Sum()
		}
		fmt.Fprintf(w, "| **total** | %d | %d | %d | %d | | %d | %.4f | %d | | %d | | %s |\n", t.Golds, t.Neighbours, t.Dropped,
			t.Separated, t.Separable, t.SeparationRate, t.Unseparated, t.Kept, r.Elapsed)
	}
	fmt.Fprintf(w, "\nrate = separated / separable: separable neighbours are those some database separates (the suite's, a drawn one not kept, or one of %d verification databases).\n", r.Verify)
	if !full {
		return
	}
	for _, d := range r.Databases {
		fmt.Fprintf(w, "\n## %s\n", d.DB)
		for _, n := range d.SchemaNotes {
			fmt.Fprintf(w, "\n- foreign key ignored: %s\n", n)
		}
		for _, gi := range d.GoldIssues {
			fmt.Fprintf(w, "\n- gold %s left out: %s\n", strings.Join(gi.IDs, ","), gi.Problem)
		}
		writeCounts(w, "Neighbours dropped", d.Dropped)
		writeCounts(w, "Sampled databases not kept", d.Rejected)
		writeCounts(w, "Verification databases not used", d.VerifyRejected)
		if len(d.Kept) > 0 {
			fmt.Fprintf(w, "\nKept databases:\n\n")
			for _, k := range d.Kept {
				fmt.Fprintf(w, "- %s (sample %d): separates %d\n", k.File, k.Sample, k.Separated)
			}
		}
		if len(d.Unseparated) > 0 {
			why := map[string]int{}
			for _, u := range d.Unseparated {
				why[u.Reason]++
			}
			writeCounts(w, "Unseparated neighbours, by reason", why)
			fmt.Fprintf(w, "\nUnseparated neighbours:\n\n")
			for _, u := range d.Unseparated {
				fmt.Fprintf(w, "- %s, %s (%s):\n  - gold: `%s`\n  - neighbour: `%s`\n", strings.Join(u.IDs, ","), u.Mutation, u.Reason, u.Gold, u.Neighbour)
			}
		}
	}
}

func writeCounts(w io.Writer, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "\n%s:\n\n", title)
	for _, k := range keys {
		fmt.Fprintf(w, "- %d × %s\n", m[k], k)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
