package dsl

import (
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Dataset is a dataset block: where items come from and which fields map to
// evalflow's item identity and inputs.
//
//	dataset "questions" {
//	  source   = "data/questions.jsonl" # relative to the pipeline
//	  format   = "jsonl"                # jsonl | json | csv | parquet; default from the extension and content
//	  id       = "id"                   # field names; these are the defaults
//	  question = "question"
//	  gold     = "gold"
//	  db       = "db"
//	  columns  = ["difficulty"]         # pass-through columns; default: every other field
//	}
//
// An attribute the block leaves out is a default the dataset reader may
// replace (package dataset, docs/formats.md): the format by the file's
// content (a .json file holding JSONL), and id, gold and db by a benchmark's
// own field names (question_id, query or SQL, db_id) when the default field
// is absent. An attribute the block sets is used as it is.
type Dataset struct {
	Name     string
	Source   string // resolved: relative paths are relative to the pipeline directory
	Format   string
	ID       string
	Question string
	Gold     string
	DB       string
	Columns  []string // nil: all remaining fields
	// DefaultDB is used when the item has no db field (single-database sets).
	DefaultDB string
	// Explicit holds the attributes among format, id, question, gold and db
	// that the block sets itself (by attribute name); nil when it sets none.
	Explicit map[string]bool
	// SourceRange is the source attribute's expression, for diagnostics
	// about the file it names.
	SourceRange hcl.Range
	DeclRange   hcl.Range
}

var datasetBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "source", Required: true},
		{Name: "format"},
		{Name: "id"}, {Name: "question"}, {Name: "gold"}, {Name: "db"},
		{Name: "columns"}, {Name: "default_db"},
	},
}

// Formats a dataset (or a replay source) may have.
var Formats = []string{"jsonl", "json", "csv", "parquet"}

// FormatOf infers a format from a file extension ("" when unknown).
func FormatOf(path string) string {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch ext {
	case "jsonl", "ndjson":
		return "jsonl"
	case "json", "csv", "parquet":
		return ext
	}
	return ""
}

func decodeDatasetBlock(block *hcl.Block, ctx *hcl.EvalContext, vars map[string]*Variable) (*Dataset, hcl.Diagnostics) {
	a := DecodeAttrs(block.Body, datasetBlockSchema, ctx, block.DefRange)
	ds := &Dataset{Name: block.Labels[0], DeclRange: block.DefRange}
	ds.Source = a.String("source", "")
	ds.SourceRange = block.DefRange
	if e := a.Expr("source"); e != nil {
		ds.SourceRange = e.Range()
	}
	ds.Format = a.String("format", FormatOf(ds.Source))
	ds.ID = a.String("id", "id")
	ds.Question = a.String("question", "question")
	ds.Gold = a.String("gold", "gold")
	ds.DB = a.String("db", "db")
	ds.DefaultDB = a.String("default_db", "")
	for _, name := range []string{"format", "id", "question", "gold", "db"} {
		if a.Has(name) {
			if ds.Explicit == nil {
				ds.Explicit = map[string]bool{}
			}
			ds.Explicit[name] = true
		}
	}
	if a.Has("columns") {
		ds.Columns = a.Strings("columns")
		if ds.Columns == nil {
			ds.Columns = []string{}
		}
	}
	if ds.Format == "" && !a.Diags.HasErrors() {
		rng := block.DefRange
		if e := a.Expr("source"); e != nil {
			rng = e.Range()
		}
		a.Diags = append(a.Diags, errorf(&rng, "Unknown dataset format",
			"Cannot tell the format of %q from its extension; set format to one of %s.", ds.Source, strings.Join(Formats, ", ")))
	} else if ds.Format != "" && !contains(Formats, ds.Format) && a.Expr("format") != nil {
		a.Diags = append(a.Diags, InvalidChoice(vars, a.Expr("format"), block.DefRange, "Unknown dataset format", "a dataset format", ds.Format, Formats))
	}
	return ds, a.Diags
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
