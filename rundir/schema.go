package rundir

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// ItemSchema is items.parquet's schema: fixed leading columns, the
// dataset's pass-through columns, the fixed outcome columns, then one float
// column per metric, metric_errors and metric_notes; when a metric gives a
// test-suite verdict (SuiteColumns), the name of the database that
// separated each verdict's pair and the separating database's previews
// close the row.
func ItemSchema(pass []sinks.Column, metricCols []string) sinks.Schema {
	s := sinks.Schema{
		{Name: "seq", Type: table.TypeInt, Doc: "position in the run's item order, from 0"},
		{Name: "id", Type: table.TypeString, Doc: "item id from the dataset"},
		{Name: "question", Type: table.TypeString},
		{Name: "db", Type: table.TypeString},
		{Name: "gold", Type: table.TypeString},
	}
	s = append(s, pass...)
	s = append(s, sinks.Schema{
		{Name: "prediction", Type: table.TypeString, Doc: "final attempt's query of sample 0"},
		{Name: "status", Type: table.TypeString, Doc: "ok | timeout | unsafe | error | cancelled"},
		{Name: "error", Type: table.TypeString, Doc: "why the item failed as a whole (stage error, panic)"},
		{Name: "error_class", Type: table.TypeString, Doc: "final attempt's error class; empty when it ran"},
		{Name: "error_message", Type: table.TypeString},
		{Name: "samples", Type: table.TypeInt},
		{Name: "attempts", Type: table.TypeInt, Doc: "attempts of sample 0"},
		{Name: "valid", Type: table.TypeBool, Doc: "final attempt passed validation"},
		{Name: "executed", Type: table.TypeBool, Doc: "final attempt ran without error"},
		{Name: "gold_rows", Type: table.TypeInt},
		{Name: "pred_rows", Type: table.TypeInt},
		{Name: "gold_error", Type: table.TypeString},
		{Name: "gold_preview", Type: table.TypeString, Doc: "JSON: the gold result's first rows (docs/output.md, result previews)"},
		{Name: "pred_preview", Type: table.TypeString, Doc: "JSON: the final attempt's result's first rows, as gold_preview"},
		{Name: "duration_ms", Type: table.TypeFloat, Doc: "time spent in validate and execute over all attempts"},
	}...)
	for _, m := range metricCols {
		s = append(s, sinks.Column{Name: m, Type: table.TypeFloat, Doc: "metric " + m})
	}
	s = append(s, sinks.Column{Name: "metric_errors", Type: table.TypeString, Doc: "JSON object metric → error, for metrics that failed on this item"})
	s = append(s, sinks.Column{Name: "metric_notes", Type: table.TypeString, Doc: "JSON object metric → explanation (an LLM judge's reasoning)"})
	if suite := SuiteColumns(metricCols); len(suite) > 0 {
		for _, c := range suite {
			s = append(s, sinks.Column{Name: c + SuiteDBSuffix, Type: table.TypeString,
				Doc: "file name of the first test database that separated the prediction from the gold under " + c + "; null when none did or the item has no suite"})
		}
		s = append(s, sinks.Schema{
			{Name: SuiteGoldPreview, Type: table.TypeString, Doc: "JSON: the gold's result on the test database that separated the pair (not the item's own), as gold_preview"},
			{Name: SuitePredPreview, Type: table.TypeString, Doc: "JSON: the prediction's result there, as pred_preview; null when it failed there"},
		}...)
	}
	return s
}

// Columns of a run whose metrics give test-suite verdicts (ItemSchema).
const (
	// SuiteDBSuffix ends the column naming the database that separated a
	// test-suite verdict's pair: ex_suite_db beside ex_suite.
	SuiteDBSuffix    = "_db"
	SuiteGoldPreview = "suite_gold_preview"
	SuitePredPreview = "suite_pred_preview"
)

// SuiteColumns returns the metric columns that hold test-suite verdicts:
// <m>_suite (metrics.SuiteSuffix) beside a metric column <m>. The score
// stage writes such a column for a metric with a suite verdict (ex under
// the testsuite profiles) and refuses any other column so named.
func SuiteColumns(metricCols []string) []string {
	var out []string
	for _, c := range metricCols {
		if base, ok := strings.CutSuffix(c, metrics.SuiteSuffix); ok && slices.Contains(metricCols, base) {
			out = append(out, c)
		}
	}
	return out
}

// AttemptSchema is attempts.parquet's schema.
var AttemptSchema = sinks.Schema{
	{Name: "seq", Type: table.TypeInt},
	{Name: "id", Type: table.TypeString},
	{Name: "sample", Type: table.TypeInt},
	{Name: "attempt", Type: table.TypeInt, Doc: "0 = first generation; 1.. = refine"},
	{Name: "query", Type: table.TypeString},
	{Name: "raw", Type: table.TypeString, Doc: "generator output before query extraction"},
	{Name: "validated", Type: table.TypeBool},
	{Name: "valid", Type: table.TypeBool},
	{Name: "executed", Type: table.TypeBool},
	{Name: "match", Type: table.TypeBool, Doc: "execution match (ex metric) for this attempt; null when not scored"},
	{Name: "rows", Type: table.TypeInt},
	{Name: "truncated", Type: table.TypeBool},
	{Name: "error_class", Type: table.TypeString},
	{Name: "error_message", Type: table.TypeString},
	{Name: "validate_ms", Type: table.TypeFloat},
	{Name: "execute_ms", Type: table.TypeFloat},
	{Name: "input_tokens", Type: table.TypeInt, Doc: "tokens sent to the model for this attempt (0 for replay)"},
	{Name: "output_tokens", Type: table.TypeInt, Doc: "tokens the model returned"},
	{Name: "cost", Type: table.TypeFloat, Doc: "dollars spent on the call (model block prices; 0 for a cache hit)"},
	{Name: "latency_ms", Type: table.TypeFloat, Doc: "model call wall time, retries and limiter waits included"},
	{Name: "cache_hit", Type: table.TypeBool, Doc: "the response came from the LLM cache"},
	{Name: "cached", Type: table.TypeBool, Doc: "the stage cache answered this attempt's engine work (syntax check, execution): its durations are the lookup's"},
	{Name: "syntax_valid", Type: table.TypeBool, Doc: "the engine's syntax verdict (prepare/EXPLAIN); null when not checked"},
	{Name: "safe", Type: table.TypeBool, Doc: "the safety check's verdict; null when not checked"},
	{Name: "safety_reason", Type: table.TypeString, Doc: "why the safety check refused the query"},
	{Name: "schema_score", Type: table.TypeFloat, Doc: "schema check score in [0,1] (CyVer SchemaValidator for Cypher); null when not checked"},
	{Name: "schema_reasons", Type: table.TypeString, Doc: "JSON array of the names the schema check did not find"},
	{Name: "properties_score", Type: table.TypeFloat, Doc: "CyVer PropertiesValidator precision (Cypher); null when not checked or no property accessed"},
	{Name: "properties_reasons", Type: table.TypeString, Doc: "JSON array of the properties not found"},
}

// AggregateSchema is aggregates.parquet's schema.
var AggregateSchema = sinks.Schema{
	{Name: "stage", Type: table.TypeString},
	{Name: "group_by", Type: table.TypeString, Doc: "\"all\" or the group_by column"},
	{Name: "group", Type: table.TypeString},
	{Name: "metric", Type: table.TypeString},
	{Name: "items", Type: table.TypeInt},
	{Name: "n", Type: table.TypeInt, Doc: "items with a value (failed deterministic metrics count as 0)"},
	{Name: "mean", Type: table.TypeFloat},
	{Name: "sum", Type: table.TypeFloat},
	{Name: "errors", Type: table.TypeInt, Doc: "items where the metric failed (a failed judge: null, not in the mean)"},
	{Name: "nulls", Type: table.TypeInt},
	{Name: "error_items", Type: table.TypeInt, Doc: "items in error (the harness could not evaluate them): not in n or mean unless the metric follows an official profile"},
	{Name: "mean_without_errors", Type: table.TypeFloat, Doc: "mean over the items not in error"},
	{Name: "ci_low", Type: table.TypeFloat, Doc: "95% confidence interval of mean, lower bound (null for dataset metrics)"},
	{Name: "ci_high", Type: table.TypeFloat, Doc: "95% confidence interval of mean, upper bound"},
	{Name: "ci_method", Type: table.TypeString, Doc: "wilson (metrics declared 0/1) or bootstrap (seeded percentile; seed in manifest ci_seed)"},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func nz(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (r *Run) itemRow(rec *item.Record) []any {
	row := make([]any, 0, len(r.itemSchema))
	row = append(row, int64(rec.Seq), rec.Item.ID, rec.Item.Question, nz(rec.Item.DB), rec.Item.Gold)
	for i, c := range r.passCols {
		var v table.Value
		if src := r.passSrc[i]; i < len(rec.Item.Fields) && rec.Item.Fields[i].Name == src {
			v = rec.Item.Fields[i].Value
		} else {
			v, _ = rec.Item.Field(src)
		}
		row = append(row, coerce(v, c.Type))
	}
	var pred, class, msg any
	var valid, executed, predRows any
	attempts := int64(0)
	if f := rec.Final(); f != nil {
		pred, class, msg = f.Query, f.ErrorClass, nz(f.ErrorMessage)
		valid, executed = f.Valid, f.Executed && !f.Failed()
		if f.Result != nil {
			predRows = int64(f.Result.NumRows())
		}
		attempts = int64(len(rec.Samples[0].Attempts))
	}
	var goldRows any
	if rec.GoldResult != nil {
		goldRows = int64(rec.GoldResult.NumRows())
	}
	var dur time.Duration
	for _, s := range rec.Samples {
		for _, a := range s.Attempts {
			for _, d := range a.Timings {
				dur += d
			}
		}
	}
	row = append(row, pred, ItemStatus(rec), nz(rec.Error), class, msg, int64(len(rec.Samples)), attempts,
		valid, executed, goldRows, predRows, nz(rec.GoldError))
	if r.previews {
		// Built here, from the tables gold_rows and pred_rows count, into
		// one reused buffer: nothing runs again and nothing is kept.
		var predRes *table.Table
		if f := rec.Final(); f != nil {
			predRes = f.Result
		}
		row = append(row, previewOf(&r.pbuf, rec.GoldResult), previewOf(&r.pbuf, predRes))
	}
	row = append(row, ms(dur))
	errs, notes := map[string]string{}, map[string]string{}
	for _, m := range r.metricCols {
		s, ok := rec.Score(m)
		switch {
		case !ok || s.Null:
			row = append(row, nil)
		case rec.Status == "error" && !s.Official:
			// The harness could not evaluate the item: no value was
			// computed, so none is written (the aggregates leave it out
			// too, and avg() over items must agree with them). A score
			// that follows an official scorer's profile keeps the value
			// that profile counts (BIRD counts such items as 0).
			row = append(row, nil)
		default:
			row = append(row, s.Value)
		}
		if ok && s.Err != "" {
			errs[m] = s.Err
		}
		if ok && s.Note != "" {
			notes[m] = s.Note
		}
	}
	row = append(row, jsonOrNull(errs), jsonOrNull(notes))
	if tail := r.itemSchema[min(len(r.itemSchema), len(r.cellCols)+len(row)):]; len(tail) > 0 {
		row = r.appendSuite(row, rec, tail)
	}
	return row
}

// appendSuite appends the values of the test-suite columns that close the
// schema (ItemSchema): for each verdict, the database that separated its
// pair (when the verdict has a value written and is 0); then the previews
// of the first verdict separated by a database other than the item's own.
// It follows the columns the schema has, so a run resumed over parts
// written without them stays aligned.
func (r *Run) appendSuite(row []any, rec *item.Record, tail sinks.Schema) []any {
	var sep *item.Separation
	for _, c := range tail {
		switch {
		case c.Name == SuiteGoldPreview || c.Name == SuitePredPreview:
			if sep == nil || sep.Own {
				row = append(row, nil)
			} else if c.Name == SuiteGoldPreview {
				row = append(row, previewOf(&r.pbuf, sep.Gold))
			} else {
				row = append(row, previewOf(&r.pbuf, sep.Pred))
			}
		case strings.HasSuffix(c.Name, SuiteDBSuffix):
			s, ok := rec.Score(strings.TrimSuffix(c.Name, SuiteDBSuffix))
			if !ok || s.Null || s.Err != "" || s.Separation == nil || rec.Status == "error" && !s.Official {
				row = append(row, nil)
				continue
			}
			row = append(row, s.Separation.DB)
			if sep == nil || sep.Own {
				sep = s.Separation
			}
		default:
			row = append(row, nil)
		}
	}
	return row
}

func jsonOrNull(m map[string]string) any {
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func attemptRow(rec *item.Record, a *item.Attempt) []any {
	var match, rows, truncated any
	if a.Match != nil {
		match = *a.Match
	}
	if a.Result != nil {
		rows, truncated = int64(a.Result.NumRows()), a.Result.Truncated
	}
	return []any{int64(rec.Seq), rec.Item.ID, int64(a.Sample), int64(a.Index), a.Query, a.Raw,
		a.Validated, a.Valid, a.Executed, match, rows, truncated, a.ErrorClass, nz(a.ErrorMessage),
		ms(a.Timings["validate"]), ms(a.Timings["execute"]),
		int64(a.InputTokens), int64(a.OutputTokens), a.Cost, ms(a.Latency), a.CacheHit, a.Cached,
		optBool(a.SyntaxValid), optBool(a.Safe), nz(a.SafetyReason), optFloat(a.SchemaScore), jsonList(a.SchemaReasons),
		optFloat(a.PropertiesScore), jsonList(a.PropertiesReasons)}
}

// ItemStatus is items.parquet's status: the record's status, except that an
// item whose final attempt ran out of time is "timeout" and one refused by
// the safety check is "unsafe".
func ItemStatus(rec *item.Record) string {
	if rec.Status == "ok" {
		if f := rec.Final(); f != nil {
			switch f.ErrorClass {
			case item.ClassTimeout:
				return "timeout"
			case item.ClassSafety:
				return "unsafe"
			}
		}
	}
	return rec.Status
}

func optBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func optFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// jsonList renders reasons as a JSON array, nil when there are none.
func jsonList(xs []string) any {
	if len(xs) == 0 {
		return nil
	}
	b, _ := json.Marshal(xs)
	return string(b)
}
