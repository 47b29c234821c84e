package metrics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sqltext"
	"github.com/evalflow/evalflow/table"
)

// RowOrder decides whether row order matters for one item.
type RowOrder uint8

const (
	// RowOrderAuto: row order matters when the gold query has an ORDER BY in
	// its outermost query (sqltext.HasTopLevelOrderBy).
	RowOrderAuto RowOrder = iota
	// RowOrderAlways: row order always matters.
	RowOrderAlways
	// RowOrderNever: row order never matters.
	RowOrderNever
	// RowOrderSubstring: test-suite's rule, 'order by' in gold.lower()
	// (sqltext.ContainsOrderBy), so an ORDER BY in a sub-query or a string
	// literal also makes order matter.
	RowOrderSubstring
)

var rowOrderNames = [...]string{"auto", "always", "never", "substring"}

// String returns the option spelling: auto, always, never or substring.
func (r RowOrder) String() string {
	if int(r) < len(rowOrderNames) {
		return rowOrderNames[r]
	}
	return fmt.Sprintf("order(%d)", r)
}

// Profile is a named execution-match comparison: how the two queries are
// rewritten before execution and how their results are compared. Profiles
// are values; the built-in ones are listed by ProfileNames and documented
// rule by rule on their constructors' variables below and in
// docs/metrics-ex.md.
type Profile struct {
	Name      string
	Semantics Semantics
	Order     RowOrder
	// Permute accepts any one-to-one mapping of prediction columns onto
	// gold columns.
	Permute bool
	// TestSuiteRewrite applies test-suite's text rewrites before execution:
	// the prediction's raw replace("value", "1") (evaluation.py),
	// sqltext.Postprocess on both queries, and sqltext.ReplaceCurYear at
	// execution. A query whose text changes is re-executed. It also makes
	// the prediction follow test-suite's execution path whatever the
	// attempt's status (exTestSuitePred).
	TestSuiteRewrite bool
	// StripDistinct removes every DISTINCT token from both queries
	// (sqltext.StripDistinct) and re-executes the queries that changed.
	StripDistinct bool
	// PythonQuickReject reproduces test-suite's quick_rej (see
	// CompareOptions).
	PythonQuickReject bool
}

// ProfileEvalflow is the default profile:
//   - bag semantics: duplicate rows must match in number;
//   - row order matters only when the gold query has an ORDER BY in its
//     outermost query (not in a sub-query, CTE, window or string literal);
//   - prediction columns may be permuted; column names are ignored;
//   - queries run as written: no DISTINCT stripping, no rewrites;
//   - two results without rows match, whatever their columns;
//   - numbers compare exactly (1 = 1.0) unless float_tolerance is set.
var ProfileEvalflow = Profile{Name: "evalflow", Semantics: Bag, Order: RowOrderAuto, Permute: true}

// ProfileTestSuite reproduces test-suite-sql-eval's eval_exec_match with its
// default flags (the official Spider/SParC/CoSQL EX):
//   - the prediction gets replace("value", "1") (a raw substring replace);
//   - both get postprocess ('> =' → '>=', '< =' → '<=', '! =' → '!=');
//   - both get remove_distinct: every DISTINCT token is dropped, including
//     COUNT(DISTINCT x), and only sqlparse's first statement is kept; the
//     rewritten queries are re-executed through Input.Exec;
//   - YEAR(CURDATE()) becomes 2020 at execution;
//   - row order matters when 'order by' is a substring of the rewritten gold,
//     lower-cased;
//   - two results without rows match; otherwise row counts and column counts
//     must be equal, quick_rej must pass, and some column permutation must
//     give equal lists (order matters) or equal multisets (bag semantics);
//   - values compare with Python ==: 1 == 1.0, '1' != 1, None == None, floats
//     exactly;
//   - the prediction's verdict comes from the rewritten text alone, as
//     test-suite never runs the raw one: a raw prediction that failed or
//     that validate refused (syntax, safety, schema) is still run
//     rewritten; the attempt keeps its own status (exTestSuitePred);
//   - several statements after rewriting score 0 (Python's sqlite3 refuses
//     them); a statement that is not read-only is never run and scores 0;
//   - a failing prediction scores 0; a failing gold is an error for the item
//     (test-suite aborts the whole run);
//   - ex is the verdict on the item's own database; the suite verdict
//     (SuiteScorer: the ex_suite column, test-suite's own verdict) needs
//     the pair to agree on every test database of the item (Input.Suite:
//     every *.sqlite* file of its directory, as test-suite's os.listdir
//     rule): the item's own first, then the others by name, stopping at the
//     first that separates them (item.Separation); the gold runs on every
//     one first, and one it fails on makes the item an error
//     (exSuiteGolds, exSuiteMatch).
var ProfileTestSuite = Profile{Name: "testsuite", Semantics: Bag, Order: RowOrderSubstring, Permute: true,
	TestSuiteRewrite: true, StripDistinct: true, PythonQuickReject: true}

// ProfileTestSuiteKeepDistinct is ProfileTestSuite with --keep_distinct:
// every rule the same except that DISTINCT is not removed.
var ProfileTestSuiteKeepDistinct = Profile{Name: "testsuite_keep_distinct", Semantics: Bag, Order: RowOrderSubstring, Permute: true,
	TestSuiteRewrite: true, PythonQuickReject: true}

// ProfileBIRD reproduces BIRD mini_dev's evaluation_ex.py,
// set(pred_rows) == set(gold_rows):
//   - set semantics: duplicates and row order are ignored;
//   - column order matters (rows are tuples), so no permutation;
//   - Python ==: 1 == 1.0, None == None;
//   - any exception of the prediction scores 0. BIRD also scores 0 when the
//     gold fails; evalflow reports an error for the item instead, so a
//     broken gold is never silently counted as a model failure.
var ProfileBIRD = Profile{Name: "bird", Semantics: Set, Order: RowOrderNever}

var exProfiles = map[string]Profile{
	ProfileEvalflow.Name:              ProfileEvalflow,
	ProfileTestSuite.Name:             ProfileTestSuite,
	ProfileTestSuiteKeepDistinct.Name: ProfileTestSuiteKeepDistinct,
	ProfileBIRD.Name:                  ProfileBIRD,
}

// LookupProfile returns the named built-in profile.
func LookupProfile(name string) (Profile, bool) {
	p, ok := exProfiles[name]
	return p, ok
}

// ProfileNames returns the built-in profile names, sorted.
func ProfileNames() []string {
	out := make([]string, 0, len(exProfiles))
	for n := range exProfiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// PrepareGold returns the gold query text the profile executes and the text
// its order rule reads.
func (p Profile) PrepareGold(q string) (exec, orderText string) {
	return p.prepare(q, false)
}

// PreparePred returns the prediction text the profile executes.
func (p Profile) PreparePred(q string) string {
	exec, _ := p.prepare(q, true)
	return exec
}

func (p Profile) prepare(q string, pred bool) (exec, orderText string) {
	if p.TestSuiteRewrite {
		if pred {
			q = strings.ReplaceAll(q, "value", "1")
		}
		q = sqltext.Postprocess(q)
	}
	if p.StripDistinct {
		q = sqltext.StripDistinct(q)
	}
	orderText = q
	if p.TestSuiteRewrite {
		q = sqltext.ReplaceCurYear(q)
	}
	return q, orderText
}

// Ordered applies the profile's order rule to the (prepared) gold text.
func (p Profile) Ordered(goldText string) bool {
	switch p.Order {
	case RowOrderAlways:
		return true
	case RowOrderNever:
		return false
	case RowOrderSubstring:
		return sqltext.ContainsOrderBy(goldText)
	default:
		return sqltext.HasTopLevelOrderBy(goldText)
	}
}

// CompareOptions returns the comparison options for one item whose prepared
// gold text is goldText.
func (p Profile) CompareOptions(goldText string, tol Tolerance) CompareOptions {
	return CompareOptions{
		Semantics:         p.Semantics,
		Ordered:           p.Ordered(goldText),
		Permute:           p.Permute,
		Tolerance:         tol,
		PythonQuickReject: p.PythonQuickReject,
	}
}

// rewrites reports whether the profile may change query text.
func (p Profile) rewrites() bool { return p.TestSuiteRewrite || p.StripDistinct }

// errNeedsExec is returned when a profile must re-run a rewritten query and
// the pipeline has no engine.
var errNeedsExec = errors.New("this profile re-executes rewritten queries (DISTINCT stripping, test-suite rewrites) and needs an engine; the score stage has none")

// exGold returns the gold result under p and the text its order rule
// reads, re-executing the gold when p rewrites it.
func exGold(ctx context.Context, p Profile, in Input) (*table.Table, string, error) {
	rec := in.Record
	if rec.GoldError != "" {
		return nil, "", fmt.Errorf("gold query failed: %s", rec.GoldError)
	}
	if rec.GoldResult == nil {
		return nil, "", errors.New("no gold result")
	}
	exec, orderText := p.PrepareGold(rec.Item.Gold)
	if sameRun(exec, rec.Item.Gold) {
		return rec.GoldResult, orderText, nil
	}
	if in.Exec == nil {
		return nil, "", errNeedsExec
	}
	t, err := in.Exec(ctx, exec)
	if err != nil {
		return nil, "", fmt.Errorf("gold query failed after %s rewriting: %v", p.Name, err)
	}
	return t, orderText, nil
}

// exPred returns the prediction result of an executed attempt under p, or
// an error when the (re-)execution failed.
func exPred(ctx context.Context, p Profile, in Input, a *item.Attempt) (*table.Table, error) {
	if !p.rewrites() {
		return a.Result, nil
	}
	exec := p.PreparePred(a.Query)
	if sameRun(exec, a.Query) {
		return a.Result, nil
	}
	if in.Exec == nil {
		return nil, errNeedsExec
	}
	return in.Exec(ctx, exec)
}

// sameRun reports whether running text gives what running orig gave: the
// texts are equal, or differ only in trailing spaces, tabs and line
// breaks, which no engine reads (remove_distinct cuts the line break
// after a final ';': "SELECT a;\n" becomes "SELECT a;").
func sameRun(text, orig string) bool {
	return text == orig || strings.TrimRight(text, " \t\r\n") == strings.TrimRight(orig, " \t\r\n")
}

// exTSText is the text test-suite runs for one attempt, prepared once
// (exTestSuiteText) and shared by the item's own database and its other
// test databases.
type exTSText struct {
	text string
	// err makes test-suite score the attempt 0 before anything runs (no
	// query, several statements).
	err error
	// empty: the text holds no statement, an empty result everywhere.
	empty bool
	// roDone and notRO cache sqltext.ReadOnly's verdict: why the text is
	// not one read-only query ("" when it is).
	roDone bool
	notRO  string
}

// exTestSuitePrep prepares attempt a's text under p.
func exTestSuitePrep(p Profile, a *item.Attempt) *exTSText {
	t := &exTSText{}
	if t.text, t.err = exTestSuiteText(p, a); t.err == nil {
		t.empty = sqltext.Empty(t.text)
	}
	return t
}

// notReadOnly says why the text is never executed ("" when it may run):
// evalflow runs only one read-only query.
func (t *exTSText) notReadOnly() string {
	if !t.roDone {
		t.roDone = true
		if ok, reason := sqltext.ReadOnly(t.text); !ok {
			t.notRO = fmt.Sprintf("not run: %s (evalflow executes only read-only queries)", reason)
		}
	}
	return t.notRO
}

// exTestSuitePred returns the result test-suite's eval_exec_match would
// compare for attempt a, whose text t prepared, or the error that makes
// test-suite score it 0. test-suite never runs the raw prediction: it runs
// the rewritten text (PreparePred), whatever happened to the raw one here.
// So under a test-suite profile the attempt's own status (a syntax error,
// a safety refusal, a schema-check failure, all kept on the attempt) does
// not decide the verdict:
//
//   - no query (generation failed, empty text, a panic): 0;
//   - the text has a statement after its first one: 0, as Python's sqlite3
//     refuses it ("You can only execute one statement at a time.") before
//     running anything; only whitespace and comments may follow the first
//     ';' (pyOneStatement);
//   - the text holds no statement at all (";" is what remove_distinct keeps
//     of ";SELECT 1"): an empty result, as sqlite3 returns;
//   - the text is the one the execute stage ran (sameRun): its outcome is
//     reused;
//   - a text that is not one read-only query (sqltext.ReadOnly) is never
//     executed: 0 (test-suite would run a write on the database file);
//   - otherwise the text runs through in.Exec (the score stage's engine,
//     read-only).
func exTestSuitePred(ctx context.Context, in Input, a *item.Attempt, t *exTSText) (*table.Table, error) {
	switch {
	case t.err != nil:
		return nil, t.err
	case t.empty:
		return &table.Table{}, nil
	case sameRun(t.text, a.Query) && a.Executed:
		if a.Failed() {
			return nil, fmt.Errorf("%s: %s", a.ErrorClass, a.ErrorMessage)
		}
		return a.Result, nil
	}
	if r := t.notReadOnly(); r != "" {
		return nil, errors.New(r)
	}
	if in.Exec == nil {
		return nil, errNeedsExec
	}
	return in.Exec(ctx, t.text)
}

// exTestSuiteText returns the text test-suite runs for attempt a, or the
// error that makes it score 0 before anything runs (exTestSuitePred).
func exTestSuiteText(p Profile, a *item.Attempt) (string, error) {
	switch a.ErrorClass {
	case item.ClassGeneration, item.ClassPanic, item.ClassCancelled:
		return "", fmt.Errorf("no query to run (%s): %s", a.ErrorClass, a.ErrorMessage)
	}
	if strings.TrimSpace(a.Query) == "" {
		return "", errors.New("the prediction is empty")
	}
	text := p.PreparePred(a.Query)
	if err := pyOneStatement(text); err != nil {
		return "", err
	}
	return text, nil
}

// exSuiteDB is one other test database of an item with the gold's result
// on it.
type exSuiteDB struct {
	TestDB
	gold *table.Table
}

// exListSuite lists the item's test suite for its suite verdict: nil when
// the profile gives none or the engine has no folder notion (Input.Suite
// unset). A suite that cannot be listed is a harness failure, reported
// through in.Harness and returned, so the item is an error.
func exListSuite(ctx context.Context, p Profile, in Input) (*TestSuite, error) {
	if !p.TestSuiteRewrite || in.Suite == nil {
		return nil, nil
	}
	ts, err := in.Suite(ctx)
	if err != nil {
		err = fmt.Errorf("listing the test databases: %w", err)
		in.harness(err)
		return nil, err
	}
	return &ts, nil
}

// exSuiteGolds runs the prepared gold text on every other test database of
// the item. A gold that fails on any of them is a harness failure:
// reported through in.Harness and returned, so the item is an error, never
// a score. test-suite asserts on a failing gold only when it reaches that
// database (it stops at the first mismatch, in os.listdir order); running
// the gold on every test database first makes a broken suite an error
// whatever the directory order.
func exSuiteGolds(ctx context.Context, p Profile, in Input, dbs []TestDB) ([]exSuiteDB, error) {
	text, _ := p.PrepareGold(in.Record.Item.Gold)
	out := make([]exSuiteDB, 0, len(dbs))
	for _, db := range dbs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, err := db.Exec(ctx, text)
		if err != nil {
			err = fmt.Errorf("gold query failed on test database %s: %v", db.Name, err)
			in.harness(err)
			return nil, err
		}
		out = append(out, exSuiteDB{TestDB: db, gold: g})
	}
	return out, nil
}

// exSuiteMatch runs the text t of an attempt that matched the gold on the
// item's own database on the other test databases in order, as
// test-suite's loop does: the first database where the prediction fails or
// its result differs from the gold's ends it with false, sep naming that
// database with both results there and note saying why. t was prepared and
// checked for the item's own database already; a text that is not one
// read-only query is never run (0, separated by the first other database),
// as on the item's own database.
func exSuiteMatch(ctx context.Context, t *exTSText, suite []exSuiteDB, opts CompareOptions) (match bool, sep *item.Separation, note string) {
	if len(suite) == 0 {
		return true, nil, ""
	}
	if t.err != nil {
		return false, &item.Separation{DB: suite[0].Name, Gold: suite[0].gold}, t.err.Error()
	}
	if !t.empty {
		if r := t.notReadOnly(); r != "" {
			return false, &item.Separation{DB: suite[0].Name, Gold: suite[0].gold}, r
		}
	}
	for _, db := range suite {
		if ctx.Err() != nil {
			return false, nil, ""
		}
		pred := &table.Table{}
		if !t.empty {
			var err error
			if pred, err = db.Exec(ctx, t.text); err != nil {
				return false, &item.Separation{DB: db.Name, Gold: db.gold},
					fmt.Sprintf("the prediction fails on test database %s: %v", db.Name, err)
			}
		}
		if v := CompareTables(db.gold, pred, opts); !v.Match {
			return false, &item.Separation{DB: db.Name, Gold: db.gold, Pred: pred},
				fmt.Sprintf("test database %s separates the prediction from the gold: %s", db.Name, v.Reason)
		}
	}
	return true, nil, ""
}

// errSeveralStatements is Python sqlite3's refusal of a text with more
// than one statement (cursor.execute prepares the first and refuses when
// anything but whitespace and comments follows it).
var errSeveralStatements = errors.New(`several statements: Python's sqlite3, which test-suite runs the query with, refuses them ("You can only execute one statement at a time.")`)

// pyOneStatement reports errSeveralStatements when cursor.execute would
// refuse text: SQLite skips leading ';' (empty statements) and prepares
// the first statement up to its ';'; after it only whitespace and comments
// may follow, so "SELECT 1;;" is refused and "SELECT 1; -- x" is not.
func pyOneStatement(text string) error {
	started, ended := false, false
	for t := range sqltext.Tokens(text) {
		if !t.Significant() {
			continue
		}
		semi := t.Kind == sqltext.Punct && t.Text == ";"
		switch {
		case ended:
			return errSeveralStatements
		case semi && started:
			ended = true
		case !semi:
			started = true
		}
	}
	return nil
}

type exMetric struct {
	p       Profile
	tol     Tolerance
	maxPerm int
}

func newEX(o Options) (ItemMetric, error) {
	name, err := o.String("compare", ProfileEvalflow.Name)
	if err != nil {
		return nil, err
	}
	if name == "bird_soft_f1" {
		return nil, errors.New(`compare = "bird_soft_f1" is a graded score, not a match: list the bird_soft_f1 metric instead`)
	}
	p, ok := LookupProfile(name)
	if !ok {
		return nil, &ChoiceError{Option: "compare", Value: name, What: "a compare profile", Valid: ProfileNames()}
	}
	m := &exMetric{p: p}
	if m.tol, err = exToleranceOption(o); err != nil {
		return nil, err
	}
	if s, err := o.String("semantics", ""); err != nil {
		return nil, err
	} else if s != "" {
		switch s {
		case "bag":
			m.p.Semantics = Bag
		case "set":
			m.p.Semantics = Set
		default:
			return nil, &ChoiceError{Option: "semantics", Value: s, What: "a row semantics", Valid: []string{"bag", "set"}}
		}
	}
	if s, err := o.String("order", ""); err != nil {
		return nil, err
	} else if s != "" {
		found := false
		for i, n := range rowOrderNames {
			if n == s {
				m.p.Order, found = RowOrder(i), true
			}
		}
		if !found {
			return nil, &ChoiceError{Option: "order", Value: s, What: "a row order", Valid: rowOrderNames[:]}
		}
	}
	if m.p.Permute, err = o.Bool("permutations", m.p.Permute); err != nil {
		return nil, err
	}
	if m.maxPerm, err = o.Int("max_permutations", DefaultMaxPermutations); err != nil {
		return nil, err
	}
	if m.maxPerm < 1 {
		return nil, fmt.Errorf(`option "max_permutations" must be at least 1, got %d`, m.maxPerm)
	}
	return m, nil
}

func exToleranceOption(o Options) (Tolerance, error) {
	f, err := o.Float("float_tolerance", 0)
	if err != nil {
		return Tolerance{}, err
	}
	if f < 0 {
		return Tolerance{}, fmt.Errorf(`option "float_tolerance" must not be negative, got %v`, f)
	}
	return Tolerance{Abs: f, Rel: f}, nil
}

func (m *exMetric) Info() Info { return exInfo }

var exInfo = Info{
	Name:        "ex",
	Description: "Execution match: the prediction's result equals the gold's under a comparison profile (evalflow, testsuite, testsuite_keep_distinct, bird).",
	Reference:   "Spider/test-suite-sql-eval exec_eval.py, BIRD mini_dev evaluation_ex.py; *Metrics Reference Documentation*, “2. Execution Accuracy (Spider/BIRD)”",
	Inputs:      "gold result, every executed attempt's result (sets Attempt.Match); score from sample 0's final attempt",
	Range:       "{0,1}",
}

// Score sets Attempt.Match on every attempt that executed or failed, and
// scores the final attempt of sample 0: the verdict on the item's own
// database.
func (m *exMetric) Score(ctx context.Context, in Input) item.Score {
	own, _ := m.score(ctx, in, false)
	return own
}

// SuiteVerdict reports whether ex gives a suite verdict: under the
// test-suite profiles.
func (m *exMetric) SuiteVerdict() bool { return m.p.TestSuiteRewrite }

// ScoreSuite is Score, and the verdict of test-suite's eval_exec_match over
// the item's whole test suite (Input.Suite): the item's own database first
// (Score's verdict), then the others by name, the first that separates the
// final attempt of sample 0 from the gold ending it with 0. It is nil
// when the item has no other test database.
func (m *exMetric) ScoreSuite(ctx context.Context, in Input) (item.Score, *item.Score) {
	return m.score(ctx, in, true)
}

// exSuiteName is the name ex's suite verdict is scored under (the score
// stage names its column after the metric's).
var exSuiteName = exInfo.Name + SuiteSuffix

func (m *exMetric) score(ctx context.Context, in Input, withSuite bool) (item.Score, *item.Score) {
	rec := in.Record
	var ts *TestSuite
	var tsErr error
	if withSuite {
		ts, tsErr = exListSuite(ctx, m.p, in)
	}
	// failed scores the item when its own verdict could not be computed:
	// the suite verdict, when the item has a suite, fails alike.
	failed := func(err error) (item.Score, *item.Score) {
		own := Failed(exInfo.Name, err)
		switch {
		case tsErr != nil:
			s := Failed(exSuiteName, tsErr)
			return own, &s
		case ts != nil && len(ts.Others) > 0:
			s := Failed(exSuiteName, err)
			return own, &s
		}
		return own, nil
	}
	gold, orderText, gerr := exGold(ctx, m.p, in)
	if gerr != nil {
		if !errors.Is(gerr, errNeedsExec) {
			// The gold failed: no attempt can match.
			for _, s := range rec.Samples {
				for _, a := range s.Attempts {
					if a.Executed || a.Failed() {
						exSetMatch(a, false)
					}
				}
			}
		}
		return failed(gerr)
	}
	opts := m.p.CompareOptions(orderText, m.tol)
	opts.MaxPermutations = m.maxPerm
	final := rec.Final()
	var finalText *exTSText // the final attempt's text under test-suite's path
	for _, s := range rec.Samples {
		for _, a := range s.Attempts {
			if err := ctx.Err(); err != nil {
				return failed(err)
			}
			switch {
			case m.p.TestSuiteRewrite && (a.Failed() || a.Executed):
				// test-suite's path: its own text, whatever the attempt's
				// status (exTestSuitePred).
				t := exTestSuitePrep(m.p, a)
				if a == final {
					finalText = t
				}
				pred, err := exTestSuitePred(ctx, in, a, t)
				switch {
				case errors.Is(err, errNeedsExec):
					return failed(err)
				case err != nil:
					exSetMatch(a, false)
				default:
					exSetMatch(a, compareTables(in.Keys, gold, pred, opts).Match)
				}
			case a.Failed():
				exSetMatch(a, false)
			case a.Executed:
				pred, err := exPred(ctx, m.p, in, a)
				switch {
				case errors.Is(err, errNeedsExec):
					return failed(err)
				case err != nil:
					exSetMatch(a, false)
				default:
					exSetMatch(a, compareTables(in.Keys, gold, pred, opts).Match)
				}
			}
		}
	}
	if final == nil {
		return failed(errNoAttempt)
	}
	if final.Match == nil {
		return failed(errors.New("the final attempt of sample 0 was not executed"))
	}
	own := exBoolScore(exInfo.Name, *final.Match)
	switch {
	case tsErr != nil:
		s := Failed(exSuiteName, tsErr)
		return own, &s
	case ts == nil || len(ts.Others) == 0:
		return own, nil
	}
	// The gold runs on every other test database, whatever the prediction
	// did: a broken suite makes the item an error.
	golds, err := exSuiteGolds(ctx, m.p, in, ts.Others)
	if err != nil {
		s := Failed(exSuiteName, err)
		return own, &s
	}
	if finalText == nil {
		// Cannot happen: a final attempt with a verdict under a test-suite
		// profile went through its path.
		s := Failed(exSuiteName, errors.New("the final attempt of sample 0 has no test-suite text"))
		return own, &s
	}
	if !*final.Match {
		// The item's own database separates them: test-suite's loop ends
		// there.
		s := exBoolScore(exSuiteName, false)
		s.Separation = &item.Separation{DB: ts.Own, Own: true}
		return own, &s
	}
	match, sep, note := exSuiteMatch(ctx, finalText, golds, opts)
	if err := ctx.Err(); err != nil {
		s := Failed(exSuiteName, err)
		return own, &s
	}
	s := exBoolScore(exSuiteName, match)
	s.Separation, s.Note = sep, note
	return own, &s
}

func exSetMatch(a *item.Attempt, v bool) { a.Match = &v }

func exBoolScore(name string, v bool) item.Score {
	if v {
		return item.Score{Name: name, Value: 1}
	}
	return item.Score{Name: name, Value: 0}
}

func init() {
	Register(Def{
		Info:    exInfo,
		Options: []string{"compare", "float_tolerance", "semantics", "order", "permutations", "max_permutations"},
		NewItem: newEX,
	})
}
