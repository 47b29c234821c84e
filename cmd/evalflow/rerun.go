package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/store"
)

// cmdRerun is `evalflow rerun RUN_DIR`: it runs again what RUN_DIR's
// manifest recorded — the same pipeline with the same variable values,
// sweep cells and options — after checking that every recorded input is
// unchanged (the pipeline's files, the files its blocks and variables
// name, the dataset, the engines' databases, the prompt templates, the
// evalflow version). A changed input is refused (exit 2) naming each one
// that differs; nothing runs.
func cmdRerun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rerun", "rerun [flags] RUN_DIR", stderr)
	out := fs.String("out", "", "directory of the new run (default RUN_DIR-rerun); as for run, an unfinished rerun there resumes")
	overwrite := fs.Bool("overwrite", false, "start over in -out even if it holds a run")
	allowVersion := fs.Bool("allow-version", false, "run even though this evalflow's version differs from the one that made the run")
	quiet := fs.Bool("quiet", false, "no progress display")
	noCache := fs.Bool("no-cache", false, "recompute every query and model call instead of reading the caches")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	dir := filepath.Clean(pos[0])
	dst := *out
	if dst == "" {
		dst = dir + "-rerun"
	}
	if absPath(dst) == absPath(dir) {
		fmt.Fprintf(stderr, "evalflow rerun: -out %s is the run being reproduced; choose another directory\n", dst)
		return exitConfig
	}
	m, ciSeed, err := readRerunManifest(dir)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow rerun: %v\n", err)
		return exitRun
	}

	rp := planRerun(ctx, m, *allowVersion)
	if len(rp.differs) > 0 {
		fmt.Fprintf(stderr, "evalflow rerun: cannot reproduce %s: %s changed since the run:\n", dir, plural(len(rp.differs), "an input", "inputs"))
		for _, d := range rp.differs {
			fmt.Fprintf(stderr, "  %s\n", d)
		}
		fmt.Fprintln(stderr, "evalflow rerun: nothing was run")
		return exitRun
	}

	runArgs := append([]string{}, rp.args...)
	if ciSeed != nil {
		runArgs = append(runArgs, "-ci-seed", strconv.FormatUint(*ciSeed, 10))
	}
	runArgs = append(runArgs, "-out", dst)
	if *overwrite {
		runArgs = append(runArgs, "-overwrite")
	}
	if *quiet {
		runArgs = append(runArgs, "-quiet")
	}
	if *noCache {
		runArgs = append(runArgs, "-no-cache")
	}
	if m.Status != "complete" {
		fmt.Fprintf(stderr, "evalflow rerun: note: %s is %s, not complete; its items may differ from the rerun's\n", dir, m.Status)
	}
	for _, n := range rp.notes {
		fmt.Fprintf(stderr, "evalflow rerun: %s\n", n)
	}
	fmt.Fprintf(stderr, "evalflow rerun: reproducing %s: evalflow run %s\n", dir, shellJoin(runArgs))
	code := cmdRun(ctx, runArgs, stdout, stderr)
	if code == exitOK || code == exitGate {
		if nm, err := rundir.Previous(dst); err == nil && nm != nil {
			for _, w := range servedChanges(m.Models, nm.Models) {
				fmt.Fprintf(stderr, "evalflow rerun: warning: %s\n", w)
			}
		}
	}
	return code
}

// readRerunManifest reads RUN_DIR/manifest.json; ciSeed is nil when the
// manifest predates ci_seed.
func readRerunManifest(dir string) (*rundir.Manifest, *uint64, error) {
	path := filepath.Join(dir, rundir.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, nil, fmt.Errorf("%s: no such run directory", dir)
			}
			return nil, nil, fmt.Errorf("%s is not a run directory (no %s)", dir, rundir.ManifestName)
		}
		return nil, nil, err
	}
	var m rundir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var opt struct {
		CISeed *uint64 `json:"ci_seed"`
	}
	_ = json.Unmarshal(b, &opt)
	if m.Pipeline == "" {
		return nil, nil, fmt.Errorf("%s records no pipeline", path)
	}
	return &m, opt.CISeed, nil
}

// rerunPlan is what a rerun will do: the run arguments (without -out and
// the flags of rerun itself), notes for the user, and every recorded input
// that differs now (then nothing runs).
type rerunPlan struct {
	args    []string
	notes   []string
	differs []string
}

func (rp *rerunPlan) differ(format string, a ...any) {
	rp.differs = append(rp.differs, fmt.Sprintf(format, a...))
}

// planRerun rebuilds the run command from m and checks the inputs.
func planRerun(ctx context.Context, m *rundir.Manifest, allowVersion bool) *rerunPlan {
	rp := &rerunPlan{}
	if v := buildVersion(); m.Evalflow != v {
		if !allowVersion {
			rp.differ("evalflow version: the run was made with evalflow %s, this is evalflow %s (-allow-version runs it anyway)", m.Evalflow, v)
		} else {
			rp.notes = append(rp.notes, fmt.Sprintf("note: the run was made with evalflow %s, this is evalflow %s (-allow-version)", m.Evalflow, v))
		}
	}
	if _, err := os.Stat(m.Pipeline); err != nil {
		rp.differ("pipeline %s: not found (paths in the manifest are relative to the directory the run was started in)", m.Pipeline)
		return rp
	}
	// The pipeline's files as they are now, and its declared variables.
	p0, _ := dsl.Load(m.Pipeline, dsl.LoadOptions{})
	pipelineChanged := p0.Hash != m.PipelineHash
	if pipelineChanged {
		rp.differ("pipeline %s: sha256 %s, now %s", m.Pipeline, short(m.PipelineHash), short(p0.Hash))
	}

	// Variables: every value not from a default or a sweep is passed with
	// -var, whatever set it then (-var, -var-file, EVALFLOW_VAR_*), so the
	// rerun does not depend on those files or that environment.
	var vars []string
	for _, v := range m.Variables {
		switch {
		case v.Source == "sweep":
			continue
		case v.Source == "default":
			if _, set := os.LookupEnv("EVALFLOW_VAR_" + v.Name); !set {
				continue
			}
			rp.notes = append(rp.notes, fmt.Sprintf("var.%s had its default; EVALFLOW_VAR_%s is set now, so the recorded value is passed with -var", v.Name, v.Name))
		case v.Source != "-var":
			rp.notes = append(rp.notes, fmt.Sprintf("var.%s came from %s; passed with -var", v.Name, v.Source))
		}
		vars = append(vars, "-var", v.Name+"="+varText(v.Value, declaredType(p0, v.Name)))
	}
	args := append([]string{m.Pipeline}, vars...)

	// Sweep: the cells, in order, as the run had them.
	var sweeps []string
	if len(m.Cells) > 0 {
		sweeps = sweepArgs(m, p0, flagValues(vars, "-var"))
		for _, s := range sweeps {
			args = append(args, "-sweep", s)
		}
	}
	o := m.Options
	if o.Limit > 0 {
		args = append(args, "-limit", strconv.Itoa(o.Limit))
	}
	if o.Sample > 0 {
		args = append(args, "-sample", strconv.Itoa(o.Sample), "-seed", strconv.FormatUint(o.Seed, 10))
	}
	if o.Concurrency > 0 {
		args = append(args, "-concurrency", strconv.Itoa(o.Concurrency))
	}
	if m.MaxErrors != "" {
		args = append(args, "-max-errors", m.MaxErrors)
	}
	rp.args = args

	// Plan every cell as run will, and compare what the run recorded.
	opts := dsl.LoadOptions{Vars: flagValues(vars, "-var"), Sweeps: sweeps}
	p, diags := dsl.Load(m.Pipeline, opts)
	if diags.HasErrors() {
		if !pipelineChanged {
			rp.differ("the pipeline no longer loads with the recorded variables: %s", diagText(diags))
		}
		return rp
	}
	var ids []string
	for _, c := range p.Cells {
		ids = append(ids, c.ID)
	}
	var want []string
	for _, c := range m.Cells {
		want = append(want, c.ID)
	}
	if !slices.Equal(ids, want) {
		rp.differ("sweep cells: the run had %s; the pipeline now gives %s", cellList(want), cellList(ids))
		return rp
	}
	var cells []*cellRun
	defer func() {
		for _, c := range cells {
			c.pl.Close()
		}
	}()
	for i := range max(1, len(p.Cells)) {
		pi := p
		if i > 0 {
			lo := opts
			lo.Cell = i
			if pi, diags = dsl.Load(m.Pipeline, lo); diags.HasErrors() {
				rp.differ("sweep cell %s no longer loads: %s", p.Cells[i].ID, diagText(diags))
				return rp
			}
		}
		pl, diags := planner.Build(ctx, pi, planner.Options{Concurrency: o.Concurrency})
		if diags.HasErrors() {
			pl.Close()
			if !pipelineChanged {
				rp.differ("the pipeline no longer plans with the recorded variables: %s", diagText(diags))
			}
			return rp
		}
		c := &cellRun{p: pi, pl: pl}
		if len(p.Cells) > 0 {
			c.cell = &p.Cells[i]
		}
		cells = append(cells, c)
	}

	seen := map[string]bool{}
	if pipelineChanged {
		seen["pipeline"] = true
	}
	if m.Dataset.Path != "" {
		now := store.HashFile(m.Dataset.Path)
		switch {
		case m.Dataset.SHA256 == "":
			rp.differ("dataset %s: its content was not recorded (it was not a regular file: a pipe or standard input), so the rerun cannot check it", m.Dataset.Path)
			seen["dataset"] = true
		case now == "":
			rp.differ("dataset %s: missing or unreadable now", m.Dataset.Path)
			seen["dataset"] = true
		case now != m.Dataset.SHA256:
			rp.differ("dataset %s: sha256 %s, now %s", m.Dataset.Path, short(m.Dataset.SHA256), short(now))
			seen["dataset"] = true
		}
	}
	if len(m.Fingerprint) > 0 {
		fp := sweepFingerprint(cells, o.Limit, o.Sample, o.Seed)
		keys := map[string]bool{}
		for k := range m.Fingerprint {
			keys[k] = true
		}
		for k := range fp {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			was, is := m.Fingerprint[k]
			now, has := fp[k]
			if was == now && is == has || seen[k] {
				continue
			}
			rp.differ("%s", fingerprintDiff(k, was, is, now, has))
		}
	}
	plans := cellPlans(cells)
	inputs := map[string]rundir.ManifestInput{}
	for _, in := range inputFiles(plans) {
		inputs[in.Name] = in
	}
	for _, in := range m.Inputs {
		now, ok := inputs[in.Name]
		switch {
		case !ok && store.HashFile(in.Path) == "":
			rp.differ("%s (%s): missing now", in.Name, in.Path)
		case !ok:
			rp.differ("%s: the pipeline no longer names %s", in.Name, in.Path)
		case now.SHA256 != in.SHA256:
			rp.differ("%s (%s): sha256 %s, now %s", in.Name, now.Path, short(in.SHA256), short(now.SHA256))
		}
	}
	for _, d := range modelDiffs(m.Models, modelProvenance(plans)) {
		rp.differ("%s", d)
	}
	return rp
}

// sweepArgs returns -sweep values that reproduce the manifest's cells: one
// per swept variable the pipeline's sweep block does not zip, its values
// in the order the cells first vary them. Variables the block zips keep
// the block's lists. The caller checks the resulting cells.
func sweepArgs(m *rundir.Manifest, p0 *dsl.Pipeline, vars []string) []string {
	// The block's own cells, with the variables pinned as recorded: when
	// they are the run's, nothing needs saying.
	pb, diags := dsl.Load(m.Pipeline, dsl.LoadOptions{Vars: vars})
	if !diags.HasErrors() && len(pb.Cells) == len(m.Cells) {
		same := true
		for i, c := range pb.Cells {
			same = same && c.ID == m.Cells[i].ID
		}
		if same {
			return nil
		}
	}
	if diags.HasErrors() {
		pb = p0
	}
	zipped := map[string]bool{}
	if pb != nil && pb.Sweep != nil {
		for _, d := range pb.Sweep.Dims {
			if len(d.Names) > 1 {
				for _, n := range d.Names {
					zipped[n] = true
				}
			}
		}
	}
	var out []string
	for _, name := range sweptNames(m.Cells) {
		if zipped[name] {
			continue
		}
		var vals []string
		for _, v := range sweptOrder(m.Cells, name) {
			vals = append(vals, hclLiteral(v))
		}
		out = append(out, name+"=["+strings.Join(vals, ", ")+"]")
	}
	return out
}

// sweptNames returns the swept variables in dimension order: the order of
// their name=value parts in the first cell's id.
func sweptNames(cells []rundir.ManifestCell) []string {
	c := cells[0]
	left := slices.Sorted(maps.Keys(c.Variables))
	var out []string
	id := c.ID
	for len(left) > 0 {
		best := -1
		for i, n := range left {
			part := n + "=" + cellText(c.Variables[n])
			if rest, ok := strings.CutPrefix(id, part); ok && (rest == "" || rest[0] == ',') {
				if best < 0 || len(n) > len(left[best]) {
					best = i
				}
			}
		}
		if best < 0 { // not an id this build writes: keep the rest sorted
			return append(out, left...)
		}
		n := left[best]
		out = append(out, n)
		id = strings.TrimPrefix(strings.TrimPrefix(id, n+"="+cellText(c.Variables[n])), ",")
		left = slices.Delete(left, best, best+1)
	}
	return out
}

// sweptOrder returns name's distinct values in its list's order: among
// cells that agree on every other swept variable, the values of name come
// in list order (the cells are the product, first dimension slowest, minus
// exclusions), so those sequences are merged; ties follow first
// appearance.
func sweptOrder(cells []rundir.ManifestCell, name string) []json.RawMessage {
	var vals []string
	first := map[string]int{}
	after := map[string]map[string]bool{} // value → values that must follow it
	last := map[string]string{}           // the other variables' values → the last value of name seen with them
	for _, c := range cells {
		v := string(c.Variables[name])
		if _, ok := first[v]; !ok {
			first[v] = len(vals)
			vals = append(vals, v)
			after[v] = map[string]bool{}
		}
		var others []string
		for _, n := range slices.Sorted(maps.Keys(c.Variables)) {
			if n != name {
				others = append(others, n+"="+string(c.Variables[n]))
			}
		}
		key := strings.Join(others, "\x00")
		if prev, ok := last[key]; ok && prev != v {
			after[prev][v] = true
		}
		last[key] = v
	}
	// Kahn's algorithm, smallest first appearance first.
	indeg := map[string]int{}
	for _, v := range vals {
		for w := range after[v] {
			indeg[w]++
		}
	}
	var out []json.RawMessage
	done := map[string]bool{}
	for len(out) < len(vals) {
		next := ""
		for _, v := range vals {
			if !done[v] && indeg[v] == 0 {
				next = v
				break
			}
		}
		if next == "" { // contradictory orders: first appearance
			out = out[:0]
			for _, v := range vals {
				out = append(out, json.RawMessage(v))
			}
			return out
		}
		done[next] = true
		out = append(out, json.RawMessage(next))
		for w := range after[next] {
			indeg[w]--
		}
	}
	return out
}

// cellText renders a swept value as cell ids do (dsl.CellValueText):
// strings as they are, everything else as its JSON.
func cellText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// declaredType is var name's declared type in p, cty.DynamicPseudoType
// when p does not declare it.
func declaredType(p *dsl.Pipeline, name string) cty.Type {
	if p != nil {
		if v, ok := p.Variables[name]; ok && v.Type != cty.NilType {
			return v.Type
		}
	}
	return cty.DynamicPseudoType
}

// varText is the -var text that gives back a recorded value: a string
// variable's text as it is, anything else as an HCL expression.
func varText(v json.RawMessage, t cty.Type) string {
	var s string
	if t == cty.String && json.Unmarshal(v, &s) == nil {
		return s
	}
	return hclLiteral(v)
}

// hclLiteral writes a JSON value as an HCL expression of the same value.
// Strings are quoted with HCL's escapes (so "${" stays text); numbers keep
// their JSON digits.
func hclLiteral(v json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return string(v)
	}
	var b strings.Builder
	writeHCL(&b, x)
	return b.String()
}

func writeHCL(b *strings.Builder, x any) {
	switch x := x.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(x.String())
	case string:
		b.WriteString(hclQuote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeHCL(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(hclQuote(k))
			b.WriteString(" = ")
			writeHCL(b, x[k])
		}
		b.WriteByte('}')
	}
}

// hclQuote quotes s as an HCL string literal: backslash escapes for
// quotes, backslashes and control characters, and $${ and %%{ so that
// template sequences stay text.
func hclQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// flagValues returns the values of flag name in args (["-var", "a=1", ...]).
func flagValues(args []string, name string) []string {
	var out []string
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == name {
			out = append(out, args[i+1])
		}
	}
	return out
}

// fingerprintDiff says how one fingerprint component differs.
func fingerprintDiff(k, was string, is bool, now string, has bool) string {
	switch {
	case !has:
		return fmt.Sprintf("%s: %s in the run, absent now", k, short(was))
	case !is:
		return fmt.Sprintf("%s: absent in the run, %s now", k, short(now))
	case now == "":
		return fmt.Sprintf("%s: %s in the run, missing now", k, short(was))
	}
	return fmt.Sprintf("%s: %s, now %s", k, short(was), short(now))
}

// modelDiffs compares the models a run recorded with the ones the
// pipeline plans now: the endpoint as configured and every prompt
// template's hash. What the API serves is not compared here (it is known
// only after calls; see servedChanges).
func modelDiffs(was, now []rundir.ManifestModel) []string {
	key := func(m rundir.ManifestModel) string { return m.Name + "\x00" + strings.Join(m.Cells, "\x00") }
	cur := map[string]rundir.ManifestModel{}
	for _, m := range now {
		cur[key(m)] = m
	}
	var out []string
	for _, w := range was {
		label := "model." + w.Name
		if len(w.Cells) > 0 {
			label += " [cells " + strings.Join(w.Cells, " | ") + "]"
		}
		n, ok := cur[key(w)]
		if !ok {
			out = append(out, label+": no longer called the same way")
			continue
		}
		for _, f := range []struct{ name, a, b string }{
			{"provider", w.Provider, n.Provider}, {"base_url", w.BaseURL, n.BaseURL}, {"model", w.RequestedModel, n.RequestedModel},
		} {
			if f.a != f.b {
				out = append(out, fmt.Sprintf("%s: %s %q, now %q", label, f.name, f.a, f.b))
			}
		}
		names := map[string]bool{}
		for t := range w.PromptSHA256 {
			names[t] = true
		}
		for t := range n.PromptSHA256 {
			names[t] = true
		}
		for _, t := range slices.Sorted(maps.Keys(names)) {
			a, b := w.PromptSHA256[t], n.PromptSHA256[t]
			switch {
			case a == b:
			case b == "":
				out = append(out, fmt.Sprintf("%s: template %s is no longer rendered", label, t))
			case a == "":
				out = append(out, fmt.Sprintf("%s: template %s is new", label, t))
			default:
				out = append(out, fmt.Sprintf("%s: template %s: sha256 %s, now %s", label, t, short(a), short(b)))
			}
		}
	}
	return out
}

// servedChanges says which models answered differently in the rerun: the
// API resolved the requested model to another snapshot, or reported
// another system fingerprint. The rerun's results may then differ from
// the run's.
func servedChanges(was, now []rundir.ManifestModel) []string {
	cur := map[string]rundir.ManifestModel{}
	for _, m := range now {
		cur[m.Name+"\x00"+strings.Join(m.Cells, "\x00")] = m
	}
	var out []string
	for _, w := range was {
		n, ok := cur[w.Name+"\x00"+strings.Join(w.Cells, "\x00")]
		if !ok {
			continue
		}
		if len(w.ResolvedModels) > 0 && len(n.ResolvedModels) > 0 && !slices.Equal(w.ResolvedModels, n.ResolvedModels) {
			out = append(out, fmt.Sprintf("model.%s: the run was answered by %s, the rerun by %s; results may differ",
				w.Name, strings.Join(w.ResolvedModels, ", "), strings.Join(n.ResolvedModels, ", ")))
		}
		if len(w.SystemFingerprints) > 0 && len(n.SystemFingerprints) > 0 && !slices.Equal(w.SystemFingerprints, n.SystemFingerprints) {
			out = append(out, fmt.Sprintf("model.%s: system fingerprint %s in the run, %s in the rerun; results may differ",
				w.Name, strings.Join(w.SystemFingerprints, ", "), strings.Join(n.SystemFingerprints, ", ")))
		}
	}
	return out
}

// short abbreviates a hash for messages ("sha256:" and "tree:" prefixes
// kept); other values are shown whole.
func short(s string) string {
	pre, h, ok := strings.Cut(s, ":")
	if !ok {
		pre, h = "", s
	} else {
		pre += ":"
	}
	if len(h) == 64 && strings.Trim(h, "0123456789abcdef") == "" {
		return pre + h[:12]
	}
	if s == "" {
		return `""`
	}
	return s
}

func cellList(ids []string) string {
	if len(ids) == 0 {
		return "no sweep"
	}
	return strings.Join(ids, " | ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return strconv.Itoa(n) + " " + many
}

// diagText renders diagnostics on one line each, joined.
func diagText(diags hcl.Diagnostics) string {
	var b strings.Builder
	writeDiags(&b, diags)
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "\n", "; "))
}

// shellJoin quotes args for display as a shell command line.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
