package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Functions returns the function table available in pipeline expressions:
// go-cty's stdlib (the same names Terraform users know) plus file,
// fileexists, templatefile, abspath and env. Relative paths are resolved
// against baseDir, the pipeline's directory, never the working directory.
func Functions(baseDir string) map[string]function.Function {
	fns := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"index":           stdlib.IndexFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"regex_replace":   stdlib.RegexReplaceFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
	}
	hardened(fns)
	// One table's fromcwd and abspath read the working directory once.
	cwd := sync.OnceValues(os.Getwd)
	fns["file"] = fileFunc(baseDir)
	fns["fileexists"] = fileExistsFunc(baseDir)
	fns["abspath"] = absPathFunc(baseDir, cwd)
	fns["env"] = envFunc
	fns["fromcwd"] = fromCwdFunc(cwd)
	// templatefile sees every other function but not itself, so a template
	// cannot recurse.
	fns["templatefile"] = templateFileFunc(baseDir, fns)
	return fns
}

// unstable are the functions of Functions whose result may change during a
// run for the same arguments even when, as evalflow requires, the data
// tree, the working directory and the environment stay the same: file and
// templatefile return file contents, which nothing per item should be
// keyed on. A function that reads a clock or randomness belongs here too.
var unstable = map[string]bool{"file": true, "templatefile": true}

var functionNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for n := range Functions("") {
		m[n] = true
	}
	return m
})

// StableFunction reports whether the pipeline function name returns the
// same value for the same arguments throughout one run, given that the
// files it looks at (fileexists), the working directory (fromcwd,
// abspath) and the environment (env) do not change while a run reads them
// — which evalflow requires of the data tree anyway. It is false for a
// name Functions does not define and for file and templatefile. The
// per-item value of an expression calling only stable functions may be
// memoized per tuple of the item fields it reads (nodes.Engine.Locate).
func StableFunction(name string) bool { return functionNames()[name] && !unstable[name] }

func resolve(baseDir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(baseDir, p)
}

func fileFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a file, relative to the pipeline's directory, as a UTF-8 string.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, err := readLimited(resolve(baseDir, args[0].AsString()))
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

func fileExistsFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reports whether a file exists, relative to the pipeline's directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			_, err := os.Stat(resolve(baseDir, args[0].AsString()))
			return cty.BoolVal(err == nil), nil
		},
	})
}

func absPathFunc(baseDir string, cwd func() (string, error)) function.Function {
	return function.New(&function.Spec{
		Description: "Makes a path absolute, relative to the pipeline's directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p, err := absFrom(cwd, resolve(baseDir, args[0].AsString()))
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(p), nil
		},
	})
}

// absFrom is filepath.Abs with the working directory from cwd.
func absFrom(cwd func() (string, error), p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	wd, err := cwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, p), nil
}

var envFunc = function.New(&function.Spec{
	Description: "Returns an environment variable, or the default (second argument) when it is unset.",
	Params:      []function.Parameter{{Name: "name", Type: cty.String}},
	VarParam:    &function.Parameter{Name: "default", Type: cty.String},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if v, ok := os.LookupEnv(args[0].AsString()); ok {
			return cty.StringVal(v), nil
		}
		if len(args) > 1 {
			return args[1], nil
		}
		return cty.StringVal(""), nil
	},
})

func templateFileFunc(baseDir string, fns map[string]function.Function) function.Function {
	return function.New(&function.Spec{
		Description: "Renders a template file (HCL template syntax) with the given variables.",
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := resolve(baseDir, args[0].AsString())
			src, err := readLimited(p)
			if err != nil {
				return cty.NilVal, err
			}
			expr, diags := hclsyntax.ParseTemplate(src, p, hcl.InitialPos)
			if diags.HasErrors() {
				return cty.NilVal, fmt.Errorf("%s", diags.Error())
			}
			vars := map[string]cty.Value{}
			if v := args[1]; !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType()) {
				for it := v.ElementIterator(); it.Next(); {
					k, ev := it.Element()
					vars[k.AsString()] = ev
				}
			} else if !v.IsNull() {
				return cty.NilVal, fmt.Errorf("vars must be an object or map")
			}
			inner := map[string]function.Function{}
			for k, f := range fns {
				if k != "templatefile" {
					inner[k] = f
				}
			}
			out, diags := expr.Value(&hcl.EvalContext{Variables: vars, Functions: inner})
			if diags.HasErrors() {
				return cty.NilVal, fmt.Errorf("%s", diags.Error())
			}
			if !out.Type().Equals(cty.String) {
				return cty.NilVal, fmt.Errorf("template did not produce a string")
			}
			return out, nil
		},
	})
}

// fromCwdFunc resolves a path against the directory evalflow was started in:
// the right base for paths a user passes with -var. cwd is read once per
// function table (the working directory does not change during a run).
func fromCwdFunc(cwd func() (string, error)) function.Function {
	return function.New(&function.Spec{
		Description: "Resolves a path against the current working directory (for paths given with -var).",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			if p == "" || filepath.IsAbs(p) {
				return cty.StringVal(p), nil
			}
			abs, err := absFrom(cwd, p)
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(abs), nil
		},
	})
}
