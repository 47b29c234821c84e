package llm

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/evalflow/evalflow/engine"
)

// PromptData is what a prompt template sees. Generation prompts use the
// item's fields and the schema; refine prompts add the previous attempt.
type PromptData struct {
	ID       string
	Question string
	DB       string
	Gold     string // the reference query; the default templates never show it
	Language string // sql, cypher, sparql, pandas
	// Fields are the item's pass-through columns by name.
	Fields map[string]any
	// Schema is the rendered database schema ("" when schema = "none").
	Schema string
	Sample int

	// Refine only: the attempt being repaired.
	Attempt    int    // index of the attempt being written (1, 2, ...)
	Previous   string // the failed attempt's query
	Raw        string // the failed attempt's full completion
	ErrorClass string // syntax, schema, execution, timeout, ...
	Error      string // the engine's message
	Result     string // a preview of the result, when the attempt ran
}

// DefaultSystem is the system prompt when neither the model block nor the
// stage sets one.
const DefaultSystem = "You translate questions into database queries. Answer with one query in a fenced code block and nothing else."

// DefaultGeneratePrompt is the generation template when the stage sets none.
const DefaultGeneratePrompt = `{{if .Schema}}Database schema:
{{.Schema}}

{{end}}Write one {{.Language | upper}} query that answers the question.
Question: {{.Question}}`

// DefaultRefinePrompt is the repair template when the stage sets none.
const DefaultRefinePrompt = `Your previous {{.Language | upper}} query failed.
Query:
` + "```{{.Language}}\n{{.Previous}}\n```" + `
Error ({{.ErrorClass}}): {{.Error}}
{{if .Result}}Result preview:
{{.Result}}
{{end}}Write a corrected query for the same question.`

// ParseTemplate parses a prompt template (Go text/template syntax) with
// the functions upper, lower, trim, indent and join.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=zero").Funcs(template.FuncMap{
		"upper": strings.ToUpper,
		"lower": strings.ToLower,
		"trim":  strings.TrimSpace,
		"join":  func(sep string, xs []string) string { return strings.Join(xs, sep) },
		"indent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
	}).Parse(text)
}

// Render executes t with d.
func Render(t *template.Template, d PromptData) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// RenderDefaultGenerate is Render of DefaultGeneratePrompt, the same text
// without text/template's reflection: a stage that keeps the default
// prompt renders it for every item.
func RenderDefaultGenerate(d PromptData) string {
	lang := strings.ToUpper(d.Language)
	var b strings.Builder
	b.Grow(len(d.Schema) + len(lang) + len(d.Question) + 80)
	if d.Schema != "" {
		b.WriteString("Database schema:\n")
		b.WriteString(d.Schema)
		b.WriteString("\n\n")
	}
	b.WriteString("Write one ")
	b.WriteString(lang)
	b.WriteString(" query that answers the question.\nQuestion: ")
	b.WriteString(d.Question)
	return strings.TrimSpace(b.String())
}

// Schema rendering modes.
const (
	SchemaFull   = "full"   // every table
	SchemaPruned = "pruned" // tables the question names, their foreign-key neighbours
	SchemaNone   = "none"
)

// SchemaModes lists the modes.
var SchemaModes = []string{SchemaFull, SchemaPruned, SchemaNone}

// SchemaOptions control RenderSchema.
type SchemaOptions struct {
	Mode string
	// Language selects the rendering: "sql" (default) as DDL-like lines,
	// "cypher" as node and relationship patterns, "sparql" as classes
	// with their predicates (the engines' Describe mappings, docs/engines.md).
	Language string
	Question string // for pruned
	// Samples maps a table name to sample rows (already formatted), shown
	// under the table when present.
	Samples map[string][]string
}

var wordRe = lazyRegexp(`[A-Za-z0-9_]+`)

// RenderSchema renders s as compact DDL-like text, one table a line:
//
//	orders(id INTEGER PRIMARY KEY, user_id INTEGER, total REAL)  -- user_id → users.id
//
// In pruned mode only the tables whose name (or singular) or one of whose
// columns the question mentions are kept, with the tables their foreign
// keys reach; when nothing matches, every table is kept.
func RenderSchema(s *engine.Schema, o SchemaOptions) string {
	if s == nil || o.Mode == SchemaNone {
		return ""
	}
	tables := s.Tables
	if o.Mode == SchemaPruned {
		if kept := prune(s, o.Question); len(kept) > 0 {
			tables = kept
		}
	}
	switch o.Language {
	case "cypher":
		return renderCypher(tables, o)
	case "sparql":
		return renderSPARQL(tables)
	}
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		kind := ""
		if t.View {
			kind = "VIEW "
		}
		fmt.Fprintf(&b, "%s%s(", kind, t.Name)
		for j, c := range t.Columns {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name)
			typ := c.DeclType
			if typ == "" {
				typ = c.Type.String()
			}
			if typ != "" {
				b.WriteString(" " + typ)
			}
			if c.PrimaryKey {
				b.WriteString(" PRIMARY KEY")
			}
		}
		b.WriteByte(')')
		var fks []string
		for _, fk := range t.ForeignKeys {
			fks = append(fks, fmt.Sprintf("%s → %s.%s", strings.Join(fk.Columns, ","), fk.RefTable, strings.Join(fk.RefColumns, ",")))
		}
		if len(fks) > 0 {
			b.WriteString("  -- " + strings.Join(fks, "; "))
		}
		for _, r := range o.Samples[t.Name] {
			b.WriteString("\n  -- e.g. " + r)
		}
	}
	return b.String()
}

func prune(s *engine.Schema, question string) []engine.TableInfo {
	words := map[string]bool{}
	for _, w := range wordRe().FindAllString(strings.ToLower(question), -1) {
		words[w] = true
		words[strings.TrimSuffix(w, "s")] = true
	}
	keep := map[string]bool{}
	for _, t := range s.Tables {
		n := strings.ToLower(t.Name)
		if words[n] || words[strings.TrimSuffix(n, "s")] {
			keep[n] = true
			continue
		}
		for _, c := range t.Columns {
			if cn := strings.ToLower(c.Name); len(cn) > 2 && words[cn] {
				keep[n] = true
				break
			}
		}
	}
	if len(keep) == 0 {
		return nil
	}
	for _, t := range s.Tables {
		if keep[strings.ToLower(t.Name)] {
			for _, fk := range t.ForeignKeys {
				keep[strings.ToLower(fk.RefTable)] = true
			}
		}
	}
	var out []engine.TableInfo
	for _, t := range s.Tables {
		if keep[strings.ToLower(t.Name)] {
			out = append(out, t)
		}
	}
	return out
}

// renderCypher renders a graph schema (node labels as tables; relationship
// types as tables with "(start)"/"(end)" foreign keys naming their endpoint
// labels) as Cypher patterns:
//
//	(:Person {born: INTEGER, name: STRING})
//	(:Person)-[:ACTED_IN {roles: LIST}]->(:Movie)
func renderCypher(tables []engine.TableInfo, o SchemaOptions) string {
	props := func(t engine.TableInfo) string {
		if len(t.Columns) == 0 {
			return ""
		}
		var ps []string
		for _, c := range t.Columns {
			typ := c.DeclType
			if typ == "" {
				typ = c.Type.String()
			}
			ps = append(ps, c.Name+": "+typ)
		}
		return " {" + strings.Join(ps, ", ") + "}"
	}
	var nodes, rels []string
	for _, t := range tables {
		var starts, ends []string
		for _, fk := range t.ForeignKeys {
			if len(fk.Columns) != 1 {
				continue
			}
			switch fk.Columns[0] {
			case "(start)":
				starts = append(starts, fk.RefTable)
			case "(end)":
				ends = append(ends, fk.RefTable)
			}
		}
		if len(starts) == 0 && len(ends) == 0 {
			line := "(:" + t.Name + props(t) + ")"
			for _, r := range o.Samples[t.Name] {
				line += "\n  // e.g. " + r
			}
			nodes = append(nodes, line)
			continue
		}
		if len(starts) == 0 {
			starts = []string{""}
		}
		if len(ends) == 0 {
			ends = []string{""}
		}
		for _, a := range starts {
			for _, z := range ends {
				rels = append(rels, fmt.Sprintf("(%s)-[:%s%s]->(%s)", label(a), t.Name, props(t), label(z)))
			}
		}
	}
	return strings.Join(append(nodes, rels...), "\n")
}

func label(l string) string {
	if l == "" {
		return ""
	}
	return ":" + l
}

// renderSPARQL renders an RDF schema (one table per class whose columns
// are the predicates used on its instances, plus "*" for every predicate)
// as one line per class:
//
//	<https://brickschema.org/schema/Brick#Zone>: <…#hasPoint>, <…#isPartOf>
func renderSPARQL(tables []engine.TableInfo) string {
	var lines []string
	for _, t := range tables {
		var ps []string
		for _, c := range t.Columns {
			ps = append(ps, "<"+c.Name+">")
		}
		name := "<" + t.Name + ">"
		if t.Name == "*" {
			name = "all predicates"
		}
		lines = append(lines, name+": "+strings.Join(ps, ", "))
	}
	return strings.Join(lines, "\n")
}
