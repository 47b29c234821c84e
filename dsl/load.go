package dsl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Pipeline is a decoded pipeline. Everything that does not depend on a
// dataset item is evaluated; per-item expressions stay hcl.Expression.
type Pipeline struct {
	// Path is what the user named (file or directory); Dir is the directory
	// relative paths resolve against.
	Path string
	Dir  string
	// Files holds every parsed file's source, for rendering diagnostics.
	Files map[string]*hcl.File
	// Hash is the SHA-256 of the pipeline's files (names and bytes, sorted).
	Hash string

	Variables map[string]*Variable
	Locals    map[string]*Local
	Datasets  []*Dataset
	Engines   []*Engine
	Stages    []*Stage
	Sinks     []*Sink
	Models    []*Model // model blocks, by name (dsl/model.go)

	// Sweep is the expanded sweep (the sweep block with -sweep and -var
	// applied), nil when nothing is swept; Cells are its combinations and
	// Cell the one whose values this pipeline was loaded with.
	Sweep *Sweep
	Cells []Cell
	Cell  *Cell

	ctx *hcl.EvalContext
}

// LoadOptions carries values from outside the files.
type LoadOptions struct {
	Vars     []string // -var name=value, in command-line order
	VarFiles []string // -var-file paths, in command-line order
	// Env is the environment read for EVALFLOW_VAR_*; nil means os.Environ().
	Env []string
	// Sweeps are -sweep VAR=V1,V2 options, in command-line order.
	Sweeps []string
	// Cell selects the sweep cell whose values the variables take (0: the
	// first); ignored when nothing is swept.
	Cell int
}

var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "dataset", LabelNames: []string{"name"}},
		{Type: "engine", LabelNames: []string{"name"}},
		{Type: "stage", LabelNames: []string{"name"}},
		{Type: "sink", LabelNames: []string{"name"}},
		{Type: "model", LabelNames: []string{"name"}},
		{Type: "sweep"},
	},
}

func parseFile(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if d := checkSource(src, filename, hcl.InitialPos, false); d.HasErrors() {
		return nil, d
	}
	if strings.HasSuffix(filename, ".json") {
		return hclparse.NewParser().ParseJSON(src, filename)
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

// fileStart is the range of a file's first character, for diagnostics
// about the file as a whole.
func fileStart(path string) *hcl.Range {
	return &hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos}
}

// Load parses and decodes the pipeline at path (a .hcl file or a directory of
// them; in a directory, files named *.vars.hcl are left for -var-file). The returned pipeline is non-nil whenever parsing succeeded, so
// callers can render diagnostics against its Files even on error.
func Load(path string, opts LoadOptions) (*Pipeline, hcl.Diagnostics) {
	p := &Pipeline{Path: path, Files: map[string]*hcl.File{}, Variables: map[string]*Variable{}, Locals: map[string]*Local{}}
	st, err := os.Stat(path)
	if err != nil {
		return p, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Pipeline not found",
			Detail: fmt.Sprintf("%s. Give a .hcl file or a directory holding *.hcl files.", err), Subject: fileStart(path)}}
	}
	var files []string
	if st.IsDir() {
		p.Dir = path
		matches, _ := filepath.Glob(filepath.Join(path, "*.hcl"))
		for _, m := range matches {
			// *.vars.hcl files hold -var-file values, not pipeline blocks.
			if !strings.HasSuffix(m, ".vars.hcl") {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return p, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No pipeline files",
				Detail: fmt.Sprintf("The directory %s holds no *.hcl files.", path), Subject: fileStart(path)}}
		}
	} else {
		p.Dir = filepath.Dir(path)
		files = []string{path}
	}
	sort.Strings(files)

	var diags hcl.Diagnostics
	h := sha256.New()
	var bodies []hcl.Body
	for _, fn := range files {
		src, err := readLimited(fn)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read pipeline file", Detail: err.Error(), Subject: fileStart(fn)})
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(fn), len(src))
		h.Write(src)
		f, d := parseFile(src, fn)
		diags = append(diags, d...)
		if f != nil {
			p.Files[fn] = f
			bodies = append(bodies, f.Body)
		}
	}
	p.Hash = hex.EncodeToString(h.Sum(nil))
	if diags.HasErrors() {
		return p, diags
	}

	var blocks hcl.Blocks
	for _, b := range bodies {
		content, d := b.Content(rootSchema)
		explainUnknownNames(d, rootSchema)
		diags = append(diags, d...)
		blocks = append(blocks, content.Blocks...)
	}

	// Variables first: everything else may read them.
	for _, b := range blocks.OfType("variable") {
		v, d := decodeVariableBlock(b)
		diags = append(diags, d...)
		if v == nil {
			continue
		}
		if prev, dup := p.Variables[v.Name]; dup {
			diags = append(diags, duplicate("variable", v.Name, b.DefRange, prev.DeclRange))
			continue
		}
		p.Variables[v.Name] = v
	}
	if diags.HasErrors() {
		return p, diags
	}
	var sweep *Sweep
	for _, b := range blocks.OfType("sweep") {
		if sweep != nil {
			diags = append(diags, errorf(&b.DefRange, "Duplicate sweep block",
				"A pipeline has one sweep block (the first is at %s); put every dimension in it.", sweep.DeclRange))
			continue
		}
		sw, d := decodeSweepBlock(b, p.Variables, p.Dir)
		diags = append(diags, d...)
		sweep = sw
	}
	if diags.HasErrors() {
		return p, diags
	}
	sweep, d := applySweepFlags(sweep, p.Variables, opts)
	diags = append(diags, d...)
	if diags.HasErrors() {
		return p, diags
	}
	var cellVars []CellVar
	if sweep != nil {
		cells, d := sweep.expand(p.Variables)
		diags = append(diags, d...)
		if diags.HasErrors() {
			return p, diags
		}
		if opts.Cell < 0 || opts.Cell >= len(cells) {
			return p, append(diags, errorf(sweep.DeclRange.Ptr(), "No such sweep cell", "Cell %d of %d.", opts.Cell+1, len(cells)))
		}
		p.Sweep, p.Cells, p.Cell = sweep, cells, &cells[opts.Cell]
		cellVars = p.Cell.Vars
	}
	diags = append(diags, resolveVariables(p.Variables, opts, cellVars)...)
	if diags.HasErrors() {
		return p, diags
	}
	p.ctx = p.baseContext()
	// A validation rule sees every variable (so a rule may say "databases
	// is needed unless engine is postgres").
	diags = append(diags, checkValidations(p.Variables, func(v *Variable) *hcl.EvalContext {
		return p.ctx
	})...)

	for _, b := range blocks.OfType("locals") {
		ls, d := decodeLocalsBlock(b)
		diags = append(diags, d...)
		for _, l := range ls {
			if prev, dup := p.Locals[l.Name]; dup {
				diags = append(diags, duplicate("local value", l.Name, l.DeclRange, prev.DeclRange))
				continue
			}
			p.Locals[l.Name] = l
		}
	}
	diags = append(diags, p.evalLocals()...)
	if diags.HasErrors() {
		return p, ExplainDiagnostics(diags)
	}

	// Declare names before decoding bodies, so references in any order work.
	names := map[string]map[string]hcl.Range{"dataset": {}, "engine": {}, "stage": {}, "sink": {}}
	for _, b := range blocks {
		m, ok := names[b.Type]
		if !ok {
			continue
		}
		if !hclsyntax.ValidIdentifier(b.Labels[0]) {
			diags = append(diags, errorf(&b.LabelRanges[0], "Invalid "+b.Type+" name",
				"A name must start with a letter and contain only letters, digits, underscores and dashes."))
			continue
		}
		if prev, dup := m[b.Labels[0]]; dup {
			diags = append(diags, duplicate(b.Type, b.Labels[0], b.DefRange, prev))
			continue
		}
		m[b.Labels[0]] = b.DefRange
	}
	if diags.HasErrors() {
		return p, diags
	}
	p.ctx = p.refContext(names)
	// model.NAME evaluates to the model block's settings (dsl/model.go).
	diags = append(diags, p.decodeModels(blocks.OfType("model"))...)

	for _, b := range blocks {
		var d hcl.Diagnostics
		switch b.Type {
		case "dataset":
			var ds *Dataset
			ds, d = decodeDatasetBlock(b, p.ctx, p.Variables)
			if ds != nil {
				if ds.Source != "" && !filepath.IsAbs(ds.Source) {
					ds.Source = filepath.Join(p.Dir, ds.Source)
				}
				p.Datasets = append(p.Datasets, ds)
			}
		case "engine":
			var e *Engine
			e, d = decodeEngineBlock(b, p.ctx)
			if e != nil {
				p.Engines = append(p.Engines, e)
			}
		case "stage":
			var s *Stage
			s, d = decodeStageBlock(b, p.ctx)
			if s != nil {
				p.Stages = append(p.Stages, s)
			}
		case "sink":
			var s *Sink
			s, d = decodeSinkBlock(b, p.ctx, p.Variables)
			if s != nil {
				p.Sinks = append(p.Sinks, s)
			}
		}
		diags = append(diags, d...)
	}
	diags = append(diags, p.checkReferences(names)...)
	return p, ExplainDiagnostics(diags)
}

func duplicate(kind, name string, rng, prev hcl.Range) *hcl.Diagnostic {
	return errorf(&rng, "Duplicate "+kind+" "+fmt.Sprintf("%q", name),
		"A %s named %q was already declared at %s. Names must be unique; rename one of them.", kind, name, prev)
}

// baseContext holds functions, var and path.
func (p *Pipeline) baseContext() *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for n, v := range p.Variables {
		vars[n] = v.Value
	}
	abs, _ := filepath.Abs(p.Dir)
	cwd, _ := os.Getwd()
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var": cty.ObjectVal(vars),
			"path": cty.ObjectVal(map[string]cty.Value{
				"pipeline": cty.StringVal(abs),
				"module":   cty.StringVal(abs),
				"cwd":      cty.StringVal(cwd),
			}),
		},
		Functions: Functions(p.Dir),
	}
}

// refContext adds local values and placeholder objects for dataset.X,
// engine.X, stage.X so expressions that reference blocks evaluate to an
// object with the block's name; the planner reads the edges from the
// expressions themselves.
func (p *Pipeline) refContext(names map[string]map[string]hcl.Range) *hcl.EvalContext {
	c := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: p.ctx.Functions}
	for k, v := range p.ctx.Variables {
		c.Variables[k] = v
	}
	locals := map[string]cty.Value{}
	for n, l := range p.Locals {
		locals[n] = l.Value
	}
	c.Variables["local"] = cty.ObjectVal(locals)
	for _, kind := range []string{"dataset", "engine", "stage", "sink"} {
		objs := map[string]cty.Value{}
		for n := range names[kind] {
			objs[n] = cty.ObjectVal(map[string]cty.Value{
				"name":  cty.StringVal(n),
				"block": cty.StringVal(kind),
			})
		}
		c.Variables[kind] = cty.ObjectVal(objs)
	}
	return c
}

// EvalContext returns the context for evaluating block attributes: functions,
// var, local, path and block placeholders. Per-item expressions add "item".
func (p *Pipeline) EvalContext() *hcl.EvalContext { return p.ctx }

// Variable values in declaration-independent (sorted) order.
func (p *Pipeline) VariableNames() []string {
	out := make([]string, 0, len(p.Variables))
	for n := range p.Variables {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func ctyJSON(v cty.Value) ([]byte, error) {
	return ctyjson.Marshal(v, v.Type())
}

// ValueJSON renders a cty value as JSON (for manifests).
func ValueJSON(v cty.Value) []byte {
	b, err := ctyJSON(v)
	if err != nil {
		return []byte(`null`)
	}
	return b
}
