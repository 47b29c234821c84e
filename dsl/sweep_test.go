package dsl

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sweepVars = `
variable "model" {}
variable "prompt" { default = "short" }
variable "temperature" {
  type    = number
  default = 0
}
variable "top_p" {
  type    = number
  default = 1
}
variable "graph" { default = "g.ttl" }
`

func loadSweep(t *testing.T, src string, opts LoadOptions) (*Pipeline, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.hcl"), []byte(sweepVars+src), 0o644); err != nil {
		t.Fatal(err)
	}
	if opts.Env == nil {
		opts.Env = []string{}
	}
	p, diags := Load(filepath.Join(dir, "p.hcl"), opts)
	var msgs []string
	for _, d := range diags {
		loc := ""
		if d.Subject != nil {
			loc = filepath.Base(d.Subject.Filename) + ":" + strconv.Itoa(d.Subject.Start.Line) + ": "
		}
		msgs = append(msgs, loc+d.Summary+"; "+d.Detail)
	}
	return p, strings.Join(msgs, "\n")
}

func cellIDs(p *Pipeline) []string {
	var out []string
	for _, c := range p.Cells {
		out = append(out, c.ID)
	}
	return out
}

func TestSweepExpansion(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts LoadOptions
		want []string
	}{
		{"cartesian, first dimension slowest", `sweep {
  model  = ["a", "b"]
  prompt = ["short", "long"]
}`, LoadOptions{}, []string{"model=a,prompt=short", "model=a,prompt=long", "model=b,prompt=short", "model=b,prompt=long"}},
		{"zip advances together", `sweep {
  model = ["a", "b"]
  zip {
    temperature = [0, 0.7]
    top_p       = [1, 0.9]
  }
}`, LoadOptions{}, []string{"model=a,temperature=0,top_p=1", "model=a,temperature=0.7,top_p=0.9", "model=b,temperature=0,top_p=1", "model=b,temperature=0.7,top_p=0.9"}},
		{"exclude", `sweep {
  model   = ["a", "b"]
  prompt  = ["short", "long"]
  exclude = [{ model = "b", prompt = "long" }]
}`, LoadOptions{}, []string{"model=a,prompt=short", "model=a,prompt=long", "model=b,prompt=short"}},
		{"exclude by a number", `sweep {
  model       = ["a"]
  temperature = [0, 0.5, 1]
  exclude     = [{ temperature = 0.5 }]
}`, LoadOptions{}, []string{"model=a,temperature=0", "model=a,temperature=1"}},
		{"-sweep alone", `variable "x" { default = 1 }`, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"prompt=p1,p2,p3"}}, []string{"prompt=p1", "prompt=p2", "prompt=p3"}},
		{"-sweep replaces the block's list and adds a dimension", `sweep {
  model = ["a", "b"]
}`, LoadOptions{Sweeps: []string{"model=c", "temperature=0,1"}}, []string{"model=c,temperature=0", "model=c,temperature=1"}},
		{"-sweep HCL list keeps commas inside values", ``, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{`graph=["a.ttl,b.ttl","c.ttl"]`}}, []string{"graph=a.ttl,b.ttl", "graph=c.ttl"}},
		{"-var pins a swept variable", `sweep {
  model  = ["a", "b"]
  prompt = ["short", "long"]
}`, LoadOptions{Vars: []string{"model=b"}}, []string{"prompt=short", "prompt=long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := loadSweep(t, tt.src, tt.opts)
			if errs != "" {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tt.want, cellIDs(p)); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSweepCellValues: loading cell i gives the variables that cell's
// values, with source "sweep", converted to the declared type.
func TestSweepCellValues(t *testing.T) {
	src := `sweep {
  model = ["a", "b"]
  zip {
    temperature = [0, 0.7]
    top_p       = ["1", "0.9"]
  }
}`
	for i, want := range []struct {
		model string
		temp  float64
		topP  float64
	}{{"a", 0, 1}, {"a", 0.7, 0.9}, {"b", 0, 1}, {"b", 0.7, 0.9}} {
		p, errs := loadSweep(t, src, LoadOptions{Cell: i})
		if errs != "" {
			t.Fatal(errs)
		}
		m := p.Variables["model"]
		temp, _ := p.Variables["temperature"].Value.AsBigFloat().Float64()
		topP, _ := p.Variables["top_p"].Value.AsBigFloat().Float64()
		if m.Value.AsString() != want.model || temp != want.temp || topP != want.topP || m.Source != "sweep" || p.Cell.Index != i {
			t.Errorf("cell %d: model %s (%s) temperature %v top_p %v; want %+v", i, m.Value.AsString(), m.Source, temp, topP, want)
		}
		if p.Variables["prompt"].Source != "default" {
			t.Errorf("an unswept variable changed source: %s", p.Variables["prompt"].Source)
		}
	}
}

func TestSweepErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts LoadOptions
		want string
	}{
		{"undeclared with a suggestion", `sweep {
  modle = ["a"]
}`, LoadOptions{}, `p.hcl:14: Sweep over an undeclared variable; The sweep lists "modle", but no variable of that name is declared. Did you mean "model"?`},
		{"not a list", `sweep {
  model = "a"
}`, LoadOptions{}, "p.hcl:14: Sweep values must be a list"},
		{"empty list", `sweep {
  model = []
}`, LoadOptions{}, "p.hcl:14: Empty sweep list"},
		{"zip lengths differ", `sweep {
  model = ["a"]
  zip {
    temperature = [0, 1]
    top_p       = [1]
  }
}`, LoadOptions{}, "p.hcl:17: Zipped lists differ in length; In a zip block every list advances together: top_p has 1 values, temperature has 2."},
		{"swept twice", `sweep {
  model = ["a"]
  zip {
    model = ["b"]
  }
}`, LoadOptions{}, "p.hcl:16: Variable swept twice"},
		{"exclude removes every cell", `sweep {
  model   = ["a"]
  exclude = [{ model = "a" }]
}`, LoadOptions{}, "Sweep has no cells"},
		{"exclude names an unswept variable", `sweep {
  model   = ["a"]
  exclude = [{ prompt = "x" }]
}`, LoadOptions{}, "Exclude names a variable the sweep does not list"},
		{"wrong type", `sweep {
  model       = ["a"]
  temperature = ["hot"]
}`, LoadOptions{}, `Invalid value for variable; Sweep value 1 for var.temperature ("hot") does not match its type number`},
		{"repeated value", `sweep {
  model = ["a", "a"]
}`, LoadOptions{}, "Duplicate sweep cell"},
		{"two sweep blocks", `sweep {
  model = ["a"]
}
sweep {
  prompt = ["a"]
}`, LoadOptions{}, "Duplicate sweep block"},
		{"-sweep undeclared", ``, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"promt=a,b"}}, `<values for var.promt from -sweep>:1: Sweep over an undeclared variable; -sweep sets "promt", but the pipeline declares no variable of that name. Did you mean "prompt"?`},
		{"-sweep without values", ``, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"prompt"}}, "Invalid -sweep option"},
		{"-sweep and -var on one variable", ``, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"model=a,b"}}, "Variable both set and swept"},
		{"-sweep of a zipped variable", `sweep {
  zip {
    temperature = [0, 1]
    top_p       = [1, 0.9]
  }
}`, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"top_p=1"}}, "Cannot re-sweep a zipped variable"},
		{"-sweep a number variable with text", ``, LoadOptions{Vars: []string{"model=m"}, Sweeps: []string{"temperature=0,warm"}}, "Invalid value for variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := loadSweep(t, tt.src, tt.opts)
			if !strings.Contains(errs, tt.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", errs, tt.want)
			}
		})
	}
}

// TestSweepSetsRequiredVariable: a required variable given only by the
// sweep is not reported missing.
func TestSweepSetsRequiredVariable(t *testing.T) {
	p, errs := loadSweep(t, `sweep {
  model = ["a", "b"]
}`, LoadOptions{})
	if errs != "" || len(p.Cells) != 2 {
		t.Fatalf("%d cells; %s", len(p.Cells), errs)
	}
	if _, errs := loadSweep(t, ``, LoadOptions{}); !strings.Contains(errs, "No value for required variable") {
		t.Errorf("without the sweep, model is required: %s", errs)
	}
}
