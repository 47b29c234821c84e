package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Formats are the output formats [Write] knows.
var Formats = []string{"text", "json", "markdown"}

// maxFlips and maxOnly bound the ids text and markdown name per list; JSON
// has them all.
const (
	maxFlips = 20
	maxOnly  = 10
)

// Write renders res in format ("text", "json" or "markdown") to w.
func Write(w io.Writer, res *Result, format string) error {
	switch format {
	case "text":
		return writeText(w, res)
	case "json":
		return writeJSON(w, res)
	case "markdown":
		return writeMarkdown(w, res)
	}
	return fmt.Errorf("compare: unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// jsonRow is one element of the JSON array; its keys are a public
// contract (docs/cli.md). Undefined numbers are null.
type jsonRow struct {
	A             string   `json:"a"`
	B             string   `json:"b"`
	Metric        string   `json:"metric"`
	GroupBy       *string  `json:"group_by"`
	Group         *string  `json:"group"`
	NPairs        int      `json:"n_pairs"`
	NDropped      int      `json:"n_dropped"`
	NOnlyA        int      `json:"n_only_a"`
	NOnlyB        int      `json:"n_only_b"`
	AMean         *float64 `json:"a_mean"`
	BMean         *float64 `json:"b_mean"`
	Diff          *float64 `json:"diff"`
	CILow         *float64 `json:"ci_low"`
	CIHigh        *float64 `json:"ci_high"`
	Test          string   `json:"test"`
	PValue        *float64 `json:"p_value"`
	PHolm         *float64 `json:"p_holm"`
	Significant   bool     `json:"significant"`
	FlippedBetter []string `json:"flipped_better"`
	FlippedWorse  []string `json:"flipped_worse"`
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func ids(fs []Flip) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func writeJSON(w io.Writer, res *Result) error {
	out := make([]jsonRow, len(res.Rows))
	for i, r := range res.Rows {
		j := jsonRow{
			A: res.A.Label(), B: res.B.Label(), Metric: r.Metric,
			NPairs: r.NPairs, NDropped: r.NDropped, NOnlyA: r.NOnlyA, NOnlyB: r.NOnlyB,
			AMean: num(r.AMean), BMean: num(r.BMean), Diff: num(r.Diff),
			CILow: num(r.CILow), CIHigh: num(r.CIHigh), Test: r.Test,
			PValue: num(r.P), PHolm: num(r.PHolm), Significant: r.Significant,
			FlippedBetter: ids(r.Better), FlippedWorse: ids(r.Worse),
		}
		if r.Grouped {
			j.GroupBy, j.Group = &r.GroupBy, &r.Group
		}
		out[i] = j
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func f4(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}

func signed(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	s := strconv.FormatFloat(f, 'f', 4, 64)
	if f >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

func pval(p float64) string {
	if !math.IsNaN(p) && p < 0.0001 {
		return "<0.0001"
	}
	return f4(p)
}

func ci(r Row) string {
	if math.IsNaN(r.CILow) {
		return "n/a"
	}
	return "[" + signed(r.CILow) + ", " + signed(r.CIHigh) + "]"
}

func groupCell(r Row) string {
	if !r.Grouped {
		return "(all)"
	}
	if r.Group == "" {
		return "(null)"
	}
	return r.Group
}

// describe is "runs/x  run ID  pipeline P  cell C".
func describe(r *Run) string {
	parts := []string{r.Dir}
	if r.RunID != "" {
		parts = append(parts, "run "+r.RunID)
	}
	if r.Pipeline != "" {
		parts = append(parts, "pipeline "+r.Pipeline)
	}
	if r.Cell != "" {
		parts = append(parts, "cell "+r.Cell)
	}
	return strings.Join(parts, "  ")
}

func idList(xs []string, limit int) string {
	if len(xs) <= limit {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:limit], ", ") + fmt.Sprintf(", … and %d more", len(xs)-limit)
}

// pairsLine is "31 items paired by id; 0 only in A; 1 only in B: q32".
func pairsLine(res *Result) string {
	s := fmt.Sprintf("%d items paired by id; %d only in A", res.Paired, len(res.OnlyA))
	if len(res.OnlyA) > 0 {
		s += " (" + idList(res.OnlyA, maxOnly) + ")"
	}
	s += fmt.Sprintf("; %d only in B", len(res.OnlyB))
	if len(res.OnlyB) > 0 {
		s += " (" + idList(res.OnlyB, maxOnly) + ")"
	}
	return s
}

// methodNote says how the p-values and intervals were computed.
func methodNote(res *Result) []string {
	var bin, other []string
	tests := 0
	for _, r := range res.Rows {
		if !math.IsNaN(r.P) {
			tests++
		}
		if r.Grouped {
			continue
		}
		if r.Binary {
			bin = append(bin, r.Metric)
		} else {
			other = append(other, r.Metric)
		}
	}
	var how []string
	if len(bin) > 0 {
		how = append(how, fmt.Sprintf("exact McNemar test on the discordant pairs for the metrics declared 0/1 (%s)", strings.Join(bin, ", ")))
	}
	if len(other) > 0 {
		how = append(how, fmt.Sprintf("Wilcoxon signed-rank test on B − A (SciPy's defaults) for %s", strings.Join(other, ", ")))
	}
	return []string{
		fmt.Sprintf("p: two-sided, %s; p_holm: Holm-adjusted over the %d p-values above; * marks p_holm < %g.", strings.Join(how, "; "), tests, res.Alpha),
		fmt.Sprintf("diff = mean of B − A over the pairs; CI: %g%% paired percentile bootstrap, %d resamples, seed %d. A pair with status error or cancelled on either side, or a null value, is dropped.",
			CILevel*100, res.Resamples, res.Seed),
	}
}

// flipLines lists, per metric (overall rows only), the items that changed.
func flipLines(res *Result) []string {
	var out []string
	for _, r := range res.Rows {
		if r.Grouped {
			continue
		}
		if len(r.Better)+len(r.Worse) == 0 {
			out = append(out, fmt.Sprintf("%s: no item changed", r.Metric))
			continue
		}
		for _, d := range []struct {
			name  string
			flips []Flip
			arrow string
		}{{"better", r.Better, "0 → 1"}, {"worse", r.Worse, "1 → 0"}} {
			if len(d.flips) == 0 {
				continue
			}
			head := fmt.Sprintf("%s: %d %s", r.Metric, len(d.flips), d.name)
			if r.Binary {
				head += " (" + d.arrow + ")"
			}
			names := make([]string, len(d.flips))
			for i, f := range d.flips {
				names[i] = f.ID
				if !r.Binary {
					names[i] += " (" + signed(f.B-f.A) + ")"
				}
			}
			out = append(out, head+": "+idList(names, maxFlips))
		}
	}
	return out
}

// tableCells returns the header and the cells of the results table.
func tableCells(res *Result) (head []string, rows [][]string, right []bool) {
	grouped := res.By != ""
	head = []string{"metric"}
	right = []bool{false}
	if grouped {
		head = append(head, res.By)
		right = append(right, false)
	}
	head = append(head, "pairs", "dropped", "A mean", "B mean", "diff", "95% CI", "test", "p", "p_holm", "")
	right = append(right, true, true, true, true, true, false, false, true, true, false)
	for _, r := range res.Rows {
		c := []string{r.Metric}
		if grouped {
			c = append(c, groupCell(r))
		}
		sig := ""
		if r.Significant {
			sig = "*"
		}
		c = append(c, strconv.Itoa(r.NPairs), strconv.Itoa(r.NDropped), f4(r.AMean), f4(r.BMean), signed(r.Diff),
			ci(r), r.Test, pval(r.P), pval(r.PHolm), sig)
		rows = append(rows, c)
	}
	return head, rows, right
}

func writeText(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n%s\n\n", describe(res.A), describe(res.B), pairsLine(res))
	head, rows, right := tableCells(res)
	width := make([]int, len(head))
	for _, r := range append([][]string{head}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range append([][]string{head}, rows...) {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	b.WriteString("\n")
	for _, l := range methodNote(res) {
		b.WriteString(l + "\n")
	}
	if fl := flipLines(res); len(fl) > 0 {
		b.WriteString("\nchanged items (A → B):\n")
		for _, l := range fl {
			b.WriteString("  " + l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps a cell inside its GitHub table column.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func writeMarkdown(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**A**: %s  \n**B**: %s  \n%s\n\n", mdEscape(describe(res.A)), mdEscape(describe(res.B)), mdEscape(pairsLine(res)))
	head, rows, right := tableCells(res)
	head[len(head)-1] = "sig"
	b.WriteString("|")
	for _, h := range head {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for _, r := range right {
		if r {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, l := range methodNote(res) {
		b.WriteString(l + "\n")
	}
	if fl := flipLines(res); len(fl) > 0 {
		b.WriteString("\nChanged items (A → B):\n\n")
		for _, l := range fl {
			b.WriteString("- " + mdEscape(l) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
