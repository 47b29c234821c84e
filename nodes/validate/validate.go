// Package validate is the validate stage: before a query runs it checks that
// it is a single read-only query (safety), that the engine accepts it
// (syntax, by preparing the statement without running it), and optionally
// that the names it uses exist in the database's introspected schema
// (schema, and for Cypher CyVer's properties precision).
//
//	stage "validate" {
//	  input      = stage.generate
//	  engine     = engine.main
//	  language   = "sql"  # sql | cypher | sparql | pandas; default from the engine kind
//	  safety     = true   # check.Safe: reject writes, DDL, admin, stacked statements, file/network access
//	  syntax     = true   # prepare (EXPLAIN) on the engine
//	  schema     = false  # score names against the engine's Describe (cached per database)
//	  properties = false  # Cypher: CyVer's properties precision
//	  min_schema_score     = 0  # below it the attempt fails with class "schema"
//	  min_properties_score = 0  # likewise for the properties precision
//	}
//
// Every check's verdict is recorded on the attempt (Attempt.Safe,
// SyntaxValid, SchemaScore, PropertiesScore with their reasons) whatever
// the others said. The first failure sets the attempt's error class, in
// this order: syntax (the engine's prepare), safety, schema, properties. So
// a malformed query is classed "syntax" even when it would also fail the
// safety check (Attempt.Safe still says it is unsafe); preparing never
// executes anything, so an unsafe statement is still stopped before
// execute. The schema and properties scores fail the attempt only below
// their thresholds (docs/validation.md).
//
// Only attempts not yet validated are checked, so refine can call Process
// again after appending an attempt.
package validate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/check"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
)

func init() {
	nodes.Register(nodes.Kind{Name: "validate", DefaultConcurrency: 4, Inputs: []string{"generate"}, Factory: New})
}

var schema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "engine"}, {Name: "language"}, {Name: "safety"}, {Name: "syntax"}, {Name: "schema"}, {Name: "properties"},
	{Name: "min_schema_score"}, {Name: "min_properties_score"},
}}

// Validate checks attempts. It is safe for concurrent use: the settings
// are fixed by New, and the schema cache is guarded by mu.
type Validate struct {
	Name   string
	Engine *nodes.Engine
	// Language is check.SQL, check.Cypher or check.SPARQL.
	Language           string
	Safety             bool
	Syntax             bool
	Schema             bool
	Properties         bool
	MinSchemaScore     float64
	MinPropertiesScore float64

	// deferCheck is set when an execute stage on Engine runs the attempts
	// this stage validates right after it (ExecutedNext): the syntax check
	// is then left to it (nodes.Engine.DeferCheck), so each query is
	// parsed once.
	deferCheck bool

	mu      sync.Mutex
	schemas map[string]*schemaEntry // by database location
}

// ExecutedNext tells v that an execute stage on engine e runs every
// attempt v passes right after v (execute.New calls it while the plan is
// built, before anything runs). When e is v's engine, it is not bounded by
// an engine concurrency of its own, and v's checks end with the syntax
// check (no schema or properties check), v leaves the syntax check of a
// query the safety check passed to the execute stage, which checks the
// query from the parse it runs it from (nodes.Engine.DeferCheck): every
// verdict, error class, count and cache entry stays what it was, only the
// second parse is saved.
func (v *Validate) ExecutedNext(e *nodes.Engine) {
	if e != nil && e == v.Engine && e.Block != nil && e.Block.Concurrency == 0 && !v.Schema && !v.Properties {
		v.deferCheck = true
	}
}

// schemaEntry is one database's schema, described once; done is closed when
// s and err are set.
type schemaEntry struct {
	done chan struct{}
	s    *engine.Schema
	err  error
}

// New builds a validate stage.
// MaxCalls is one syntax check per sample's attempt when the engine checks
// syntax.
func (v *Validate) MaxCalls(samples int) (int, int) {
	if v.Syntax && v.Engine != nil {
		if _, ok := v.Engine.Exec.(engine.Preparer); ok {
			return 0, samples
		}
	}
	return 0, 0
}

func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := dsl.DecodeAttrs(b.Body, schema, b.Ctx, b.DeclRange)
	v := &Validate{Name: b.Name, Safety: a.Bool("safety", true), Syntax: a.Bool("syntax", true),
		Schema: a.Bool("schema", false), Properties: a.Bool("properties", false),
		MinSchemaScore: a.Float("min_schema_score", 0), MinPropertiesScore: a.Float("min_properties_score", 0)}
	name, d := nodes.RefAttr(a, "engine", "engine")
	a.Diags = append(a.Diags, d...)
	if name == "" && len(env.Engines) == 1 {
		for n := range env.Engines {
			name = n
		}
	}
	if name != "" {
		v.Engine = env.Engines[name]
	}
	errAt := func(attr, summary, detail string) {
		r := b.DeclRange.Ptr()
		if e := a.Expr(attr); e != nil {
			rr := e.Range()
			r = &rr
		}
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: r})
	}
	def := check.SQL
	if v.Engine != nil {
		if l, ok := v.Engine.Exec.(engine.Languager); ok {
			def = l.Language()
		}
	}
	v.Language = strings.ToLower(a.String("language", def))
	switch v.Language {
	case check.SQL, check.Cypher, check.SPARQL, check.Pandas:
	default:
		a.Diags = append(a.Diags, dsl.InvalidChoice(env.Pipeline.Variables, a.Expr("language"), b.DeclRange, "Unknown query language",
			"a query language", v.Language, []string{check.SQL, check.Cypher, check.SPARQL, check.Pandas}))
	}
	if v.Schema && v.Language == check.Pandas && !a.Diags.HasErrors() {
		errAt("schema", "Schema check needs a query language", "schema = true checks SQL, Cypher or SPARQL names; pandas code is checked by running it (KeyError is classed schema).")
	}
	for _, th := range []struct {
		attr string
		val  float64
	}{{"min_schema_score", v.MinSchemaScore}, {"min_properties_score", v.MinPropertiesScore}} {
		if th.val < 0 || th.val > 1 {
			errAt(th.attr, "Threshold out of range", fmt.Sprintf("%s = %v; a score threshold is between 0 and 1.", th.attr, th.val))
		}
	}
	if v.Properties && v.Language != check.Cypher && !a.Diags.HasErrors() {
		errAt("properties", "Properties check needs Cypher", "properties = true applies to Cypher queries only (CyVer's PropertiesValidator); set language = \"cypher\" or remove it.")
	}
	if v.Syntax && v.Engine == nil && !a.Diags.HasErrors() {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing engine",
			Detail: "A validate stage with syntax = true needs engine = engine.NAME (or set syntax = false).", Subject: b.DeclRange.Ptr()})
	}
	if (v.Schema || v.Properties) && !a.Diags.HasErrors() {
		attr := "schema"
		if !v.Schema {
			attr = "properties"
		}
		switch {
		case v.Engine == nil:
			errAt(attr, "Missing engine", fmt.Sprintf("A validate stage with %s = true needs engine = engine.NAME to describe the database.", attr))
		case v.Engine.Exec != nil:
			if _, ok := v.Engine.Exec.(engine.Describer); !ok {
				errAt(attr, "Engine cannot describe its schema", fmt.Sprintf("engine.%s (kind %q) has no schema introspection; set %s = false.", v.Engine.Block.Name, v.Engine.Block.Kind, attr))
			}
		}
	}
	return v, a.Diags
}

// Process validates the latest attempt of every sample.
func (v *Validate) Process(ctx context.Context, rec *item.Record) error {
	for _, s := range rec.Samples {
		at := s.Final()
		if at == nil || at.Validated || at.Failed() {
			continue
		}
		start := time.Now()
		err := v.check(ctx, rec, at)
		at.Time("validate", time.Since(start))
		if err != nil {
			return err
		}
	}
	return nil
}

func bp(b bool) *bool       { return &b }
func fp(f float64) *float64 { return &f }

func (v *Validate) check(ctx context.Context, rec *item.Record, at *item.Attempt) error {
	at.Validated = true
	var safeErr string
	if v.Safety {
		ok, reason := check.Safe(v.Language, at.Query)
		at.Safe, at.SafetyReason = bp(ok), reason
		if !ok {
			safeErr = reason
		}
	}
	if v.Syntax && v.Engine != nil {
		if _, ok := v.Engine.Exec.(engine.Preparer); ok {
			q, err := v.Engine.Query(&rec.Item, at.Query)
			if err != nil {
				at.SetError(item.ClassExecution, err.Error())
				return nodes.HarnessError(err)
			}
			var cached bool
			if v.deferCheck && safeErr == "" {
				// The execute stage runs this query next: it checks it
				// from the parse it runs it from, and calls syntax with the
				// check's error before anything else.
				var deferred bool
				err, _, cached, deferred = v.Engine.DeferCheck(ctx, at, q, func(ctx context.Context, err error) error {
					herr := v.syntax(ctx, rec, at, err, safeErr)
					at.Valid = !at.Failed()
					return herr
				})
				if deferred {
					at.Valid = true // until the check says otherwise
					return nil
				}
			} else {
				err, _, cached = v.Engine.Prepare(ctx, q)
			}
			at.Cached = at.Cached || cached
			if err := v.syntax(ctx, rec, at, err, safeErr); err != nil {
				return err
			}
			if at.ErrorClass == item.ClassCancelled {
				return nil
			}
		}
	}
	if safeErr != "" {
		at.SetError(item.ClassSafety, safeErr)
	}
	if (v.Schema || v.Properties) && v.Engine != nil && ctx.Err() == nil {
		if err := v.checkSchema(ctx, rec, at); err != nil {
			return err
		}
	}
	at.Valid = !at.Failed()
	return nil
}

// syntax records the verdict of the engine's syntax check (err is what
// Prepare returned) on at, safeErr being the safety check's reason for
// refusing it, and returns the harness error that makes the item an error
// (the engine or database could not be reached).
func (v *Validate) syntax(ctx context.Context, rec *item.Record, at *item.Attempt, err error, safeErr string) error {
	if err == nil {
		at.SyntaxValid = bp(true)
		return nil
	}
	if engine.Unavailable(err) {
		at.SetError(item.ClassExecution, err.Error())
		return nodes.HarnessError(fmt.Errorf("engine.%s, item %q: %w", v.Engine.Block.Name, rec.Item.ID, err))
	}
	// The engine classifies its own errors: a missing database
	// file stays "execution", it is not the query's syntax.
	class := engine.ClassOf(err)
	if class == item.ClassNone {
		class = item.ClassSyntax
	}
	if ctx.Err() != nil {
		class = item.ClassCancelled
	}
	switch class {
	case item.ClassSyntax:
		at.SyntaxValid = bp(false)
	case item.ClassSchema, item.ClassSafety:
		at.SyntaxValid = bp(true) // it parsed; a name is unknown, or the plan writes
	}
	if class == item.ClassCancelled {
		at.SetError(class, err.Error())
		return nil
	}
	// A safety refusal by the engine gives way to the safety check's own
	// reason (check, after this), which says more.
	if class != item.ClassSafety || safeErr == "" {
		at.SetError(class, err.Error())
	}
	return nil
}

// checkSchema records the schema and properties scores and fails the
// attempt below the thresholds.
func (v *Validate) checkSchema(ctx context.Context, rec *item.Record, at *item.Attempt) error {
	db, err := v.Engine.Locate(&rec.Item)
	if err != nil {
		at.SetError(item.ClassExecution, err.Error())
		return nodes.HarnessError(err)
	}
	s, err := v.describe(ctx, db)
	if err != nil {
		// Describing the schema is the harness's work, not the query's:
		// its failure makes the item an error.
		class := engine.ClassOf(err)
		if class == item.ClassNone || class == item.ClassSyntax || class == item.ClassSchema {
			class = item.ClassExecution
		}
		at.SetError(class, "describing the database for the schema check: "+err.Error())
		if class == item.ClassCancelled {
			return nil
		}
		return nodes.HarnessError(fmt.Errorf("engine.%s, item %q: describing the database for the schema check: %w", v.Engine.Block.Name, rec.Item.ID, err))
	}
	if at.SyntaxValid != nil && !*at.SyntaxValid && strings.EqualFold(v.Language, check.Cypher) {
		// A Cypher query that does not parse cannot be checked against
		// the schema: it scores 0, never CyVer's nothing-extracted 1.
		sc := check.Unparsable("the syntax check failed")
		if v.Schema {
			at.SchemaScore, at.SchemaReasons = fp(sc.Value), sc.Reasons
		}
		if v.Properties {
			at.PropertiesScore, at.PropertiesReasons = fp(sc.Value), sc.Reasons
		}
		return nil
	}
	if v.Schema {
		sc := check.Schema(v.Language, at.Query, s)
		at.SchemaScore, at.SchemaReasons = fp(sc.Value), sc.Reasons
		if sc.Value < v.MinSchemaScore {
			at.SetError(item.ClassSchema, fmt.Sprintf("schema score %.3g is below min_schema_score %.3g: %s",
				sc.Value, v.MinSchemaScore, strings.Join(sc.Reasons, "; ")))
		}
	}
	if v.Properties {
		if p, ok := check.Properties(v.Language, at.Query, s); ok {
			at.PropertiesScore, at.PropertiesReasons = fp(p.Value), p.Reasons
			if p.Value < v.MinPropertiesScore {
				at.SetError(item.ClassSchema, fmt.Sprintf("properties score %.3g is below min_properties_score %.3g: %s",
					p.Value, v.MinPropertiesScore, strings.Join(p.Reasons, "; ")))
			}
		}
	}
	return nil
}

// describe returns db's schema, describing it once per location; callers
// for the same location wait for the first. A failed Describe is not
// cached, so a cancelled one does not poison later items.
func (v *Validate) describe(ctx context.Context, db string) (*engine.Schema, error) {
	d, ok := v.Engine.Exec.(engine.Describer)
	if !ok {
		return nil, fmt.Errorf("engine.%s cannot describe its schema", v.Engine.Block.Name)
	}
	for {
		v.mu.Lock()
		if v.schemas == nil {
			v.schemas = map[string]*schemaEntry{}
		}
		e, found := v.schemas[db]
		if !found {
			e = &schemaEntry{done: make(chan struct{})}
			v.schemas[db] = e
		}
		v.mu.Unlock()
		if !found {
			e.s, e.err = d.Describe(ctx, db)
			if e.err != nil {
				v.mu.Lock()
				delete(v.schemas, db)
				v.mu.Unlock()
			}
			close(e.done)
			return e.s, e.err
		}
		select {
		case <-e.done:
			if e.err == nil {
				return e.s, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The describing caller failed (perhaps its own context ended): try again.
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Describe lists the checks, for `evalflow plan`.
func (v *Validate) Describe() []string {
	eng := "none"
	if v.Engine != nil {
		eng = "engine." + v.Engine.Block.Name
	}
	lines := []string{fmt.Sprintf("checks: safety=%t syntax=%t on %s", v.Safety, v.Syntax, eng)}
	if v.Schema || v.Properties {
		lines = append(lines, fmt.Sprintf("%s schema=%t (min %g) properties=%t (min %g)", v.Language, v.Schema, v.MinSchemaScore, v.Properties, v.MinPropertiesScore))
	}
	return lines
}
