// Package item holds the identity of a dataset item and the state that flows
// with it through a pipeline's stages.
//
// Ownership: a *Record is handed from stage to stage through channels; the
// stage worker holding it is its only writer, so Record needs no lock. Stages
// that fan work out for one record (refine's sub-chain, parallel metrics)
// must join before handing it on.
package item

import (
	"time"

	"github.com/evalflow/evalflow/table"
)

// Item is one dataset row. ID is its stable identity: caches, resumes and
// run-to-run comparisons key on it, so loaders never invent IDs silently
// (a missing id is an error unless the dataset block maps one).
type Item struct {
	ID       string
	Question string
	Gold     string
	DB       string
	// Fields are the pass-through columns, in dataset order.
	Fields []Field
	// Invalid is set (FILE:LINE: message) when the dataset row could not be
	// read as an item (empty or duplicate id, not an object, two values on
	// one line). The planner runs no stage on it: the item is an `error`
	// with this message, so the row is reported, never dropped.
	Invalid string
}

// Field is one pass-through column value of an item.
type Field struct {
	Name  string
	Value table.Value
}

// Field returns the named pass-through value and whether it exists.
func (it *Item) Field(name string) (table.Value, bool) {
	for _, f := range it.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// Error classes recorded on attempts and items. They are part of the output
// contract (docs/output.md).
const (
	ClassNone        = ""
	ClassGeneration  = "generation" // no query could be produced
	ClassSyntax      = "syntax"     // the engine rejected the query text
	ClassSafety      = "safety"     // not a single read-only query
	ClassSchema      = "schema"     // unknown table/column/label
	ClassExecution   = "execution"  // runtime error on the engine
	ClassTimeout     = "timeout"    // interrupted after the engine timeout
	ClassGold        = "gold"       // the gold query itself failed
	ClassPanic       = "panic"      // a component panicked on this item
	ClassCancelled   = "cancelled"  // the run was cancelled before this finished
	ClassUnsupported = "dialect_unsupported"
)

// Attempt is one query attempt of one sample. Attempt 0 is the first
// generation; refine adds attempts 1..max_iterations.
type Attempt struct {
	Sample int
	Index  int
	// Query is the query that was validated and executed; Raw is what the
	// generator returned before extraction (equal for replay).
	Query string
	Raw   string

	Validated bool // validate ran on this attempt
	Valid     bool // validate passed
	Executed  bool // execute ran
	Result    *table.Table
	// Match is the score stage's execution-match verdict for this attempt,
	// nil until scored.
	Match *bool

	ErrorClass   string
	ErrorMessage string

	// Verdicts of the validate stage's checks (docs/validation.md); nil
	// when that check did not run on this attempt.
	//
	// SyntaxValid is the engine's syntax (prepare/EXPLAIN) verdict.
	SyntaxValid *bool
	// Safe is the safety check's verdict; SafetyReason says why not.
	Safe         *bool
	SafetyReason string
	// SchemaScore is the schema check's score in [0,1] (CyVer's
	// SchemaValidator for Cypher); SchemaReasons lists what was not found.
	SchemaScore   *float64
	SchemaReasons []string
	// PropertiesScore is CyVer's PropertiesValidator precision (Cypher),
	// nil also when the query accesses no property; PropertiesReasons
	// lists the properties not found.
	PropertiesScore   *float64
	PropertiesReasons []string

	// Durations by stage name (validate, execute, ...).
	Timings map[string]time.Duration
	// Cached is set when the stage cache answered this attempt's engine
	// work (its syntax check or execution): its durations are the cache
	// lookup's, not the query's.
	Cached bool

	// Model call of an LLM generator (zero for replay): tokens sent and
	// received, dollars spent (0 for a cache hit), wall time of the call
	// with retries and limiter waits, and whether the cache answered it.
	InputTokens  int
	OutputTokens int
	Cost         float64
	Latency      time.Duration
	CacheHit     bool
}

// Failed reports whether the attempt ended in an error of any class.
func (a *Attempt) Failed() bool { return a.ErrorClass != ClassNone }

// SetError records the first error on the attempt; later errors do not
// overwrite the cause.
func (a *Attempt) SetError(class, msg string) {
	if a.ErrorClass == ClassNone {
		a.ErrorClass, a.ErrorMessage = class, msg
	}
}

// Time adds d to the attempt's timing for stage.
func (a *Attempt) Time(stage string, d time.Duration) {
	if a.Timings == nil {
		a.Timings = map[string]time.Duration{}
	}
	a.Timings[stage] += d
}

// Sample is one independent generation for an item (pass@k draws n of
// them) with its ordered attempts.
type Sample struct {
	Index    int
	Attempts []*Attempt
	// Pending holds further attempts a replay source supplied, which refine
	// consumes in order.
	Pending []string
}

// Final returns the sample's last attempt, or nil when there is none.
func (s *Sample) Final() *Attempt {
	if len(s.Attempts) == 0 {
		return nil
	}
	return s.Attempts[len(s.Attempts)-1]
}

// Score is one metric value for an item. Err is set (and Value is 0) when the
// metric failed on this item; other metrics are unaffected
// (metric-calculators, “Error Reporting” requirement).
type Score struct {
	Name  string
	Value float64
	Null  bool // no value: the metric does not apply to this item
	Err   string
	// Note is the metric's explanation of its value, when it has one (an
	// LLM judge's reasoning); items.parquet keeps it in metric_notes.
	Note string
	// Official is set when the value follows an official scorer's compare
	// profile (testsuite, bird, buildingqa, …): an item whose status is
	// `error` still counts in that metric's mean with this value, so the
	// profile's totals reproduce the official script's. Under evalflow's
	// own profiles errored items are left out of the mean.
	Official bool
	// Separation, on a test-suite verdict (ex_suite: the pair run on every
	// test database of the item's folder), is the first database that
	// separated the prediction from the gold, with both results there; nil
	// when none did.
	Separation *Separation
}

// Separation is the database where a test suite told a prediction from its
// gold (Score.Separation).
type Separation struct {
	// DB is the database file's base name.
	DB string
	// Own is set when DB is the item's own database: its results are the
	// item's (GoldResult and the final attempt's), so Gold and Pred are nil.
	Own bool
	// Gold and Pred are the gold's and the prediction's results on DB, of
	// the texts the compare profile ran; Pred is nil when the prediction
	// failed there (the score's Note says why).
	Gold, Pred *table.Table
}

// Record is the state of one item inside a run.
type Record struct {
	Seq  int // position in the dataset after -limit/-sample, 0-based (in a sweep: across cells)
	Item Item
	// Cell indexes the sweep cell the record belongs to (0 outside a
	// sweep).
	Cell int

	// Gold result, computed once per item however many samples or attempts.
	GoldDone   bool
	GoldResult *table.Table
	GoldError  string

	Samples []*Sample
	Scores  []Score

	// Status is "ok" when every stage ran, "error" when a stage failed for
	// the item as a whole (Error says why), "cancelled" when the run stopped
	// before the item finished.
	Status string
	Error  string

	// Resumed marks an item an earlier run of the same directory finished:
	// it keeps its place in the order but no stage runs on it.
	Resumed bool
}

// SetScore adds or replaces a score by name.
func (r *Record) SetScore(s Score) {
	for i := range r.Scores {
		if r.Scores[i].Name == s.Name {
			r.Scores[i] = s
			return
		}
	}
	r.Scores = append(r.Scores, s)
}

// Score returns the named score.
func (r *Record) Score(name string) (Score, bool) {
	for _, s := range r.Scores {
		if s.Name == name {
			return s, true
		}
	}
	return Score{}, false
}

// Final returns the final attempt of sample 0, the one items.parquet reports.
func (r *Record) Final() *Attempt {
	if len(r.Samples) == 0 {
		return nil
	}
	return r.Samples[0].Final()
}
