package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// This file implements the New Evaluation Metrics Guide (text-to-pandas code evaluation): prompt
// understanding (40/30/30), requirement coverage (30/30/20/20), error
// recovery ability (50/30/20) and the overall weighted score. They are
// static heuristics over the question text and the generated pandas code;
// docs/metrics.md lists every pattern.

// PromptUnderstanding is the breakdown of pandas_prompt_understanding; the
// JSON names follow the guide's “Output Format” sections.
type PromptUnderstanding struct {
	Score                 float64  `json:"understanding_score"`
	ColumnExtraction      float64  `json:"column_extraction_score"`
	NLParsing             float64  `json:"nl_parsing_score"`
	StatisticalUnderstand float64  `json:"statistical_understanding_score"`
	ExtractedColumns      []string `json:"extracted_columns"`
	MentionedColumns      []string `json:"mentioned_columns"`
	StatisticalOperations []string `json:"statistical_operations"`
}

// RequirementCoverage is the breakdown of pandas_requirement_coverage.
// Coverages are fractions in [0,1]; Score weights them 30/30/20/20.
type RequirementCoverage struct {
	Score               float64  `json:"coverage_score"`
	Filter              float64  `json:"filter_conditions_coverage"`
	Groupby             float64  `json:"groupby_columns_coverage"`
	Sorting             float64  `json:"sorting_coverage"`
	Join                float64  `json:"join_conditions_coverage"`
	MissingRequirements []string `json:"missing_requirements"`
}

// The guide's weights.
const (
	pandasColumnWeight = 0.4
	pandasNLWeight     = 0.3
	pandasStatWeight   = 0.3

	pandasFilterWeight  = 0.3
	pandasGroupbyWeight = 0.3
	pandasSortWeight    = 0.2
	pandasJoinWeight    = 0.2

	pandasRecoverySuccessWeight = 0.5
	pandasFixQualityWeight      = 0.3
	pandasAttemptsWeight        = 0.2
)

// PandasUnderstandingScore sums the three prompt-understanding parts
// (each already weighted: 0–0.4, 0–0.3, 0–0.3).
func PandasUnderstandingScore(column, nl, stat float64) float64 { return column + nl + stat }

// PandasCoverageScore weights four coverage fractions 30/30/20/20.
func PandasCoverageScore(filter, groupby, sorting, join float64) float64 {
	return pandasFilterWeight*filter + pandasGroupbyWeight*groupby + pandasSortWeight*sorting + pandasJoinWeight*join
}

// PandasRecoveryScore weights recovery success rate (50%), error fix
// quality (30%) and attempts made, min(attempts/3, 1) (20%).
func PandasRecoveryScore(successRate, fixQuality float64, attempts int) float64 {
	return pandasRecoverySuccessWeight*successRate + pandasFixQualityWeight*fixQuality + pandasAttemptsWeight*min(float64(attempts)/3.0, 1.0)
}

// PandasOverallScore is the guide's overall score: 25% correctness, 20%
// quality, 15% performance, 15% understanding, 15% coverage, 10% recovery.
func PandasOverallScore(correctness, quality, performance, understanding, coverage, recovery float64) float64 {
	return correctness*0.25 + quality*0.20 + performance*0.15 + understanding*0.15 + coverage*0.15 + recovery*0.10
}

func pandasRE(s string) *lazyRegexp { return lazyRE(s) }

var (
	pandasStringLit = pandasRE(`'([^'\\\n]*)'|"([^"\\\n]*)"`)
	pandasAttr      = pandasRE(`\.([A-Za-z_]\w*)\b`)

	pandasStatOps = []struct {
		name     string
		question *lazyRegexp
		code     *lazyRegexp
	}{
		{"mean", pandasRE(`\b(mean|average|avg)\b`), pandasRE(`\.mean\(`)},
		{"sum", pandasRE(`\b(sum|total)\b`), pandasRE(`\.sum\(`)},
		{"max", pandasRE(`\b(max|maximum|highest)\b`), pandasRE(`\.(max|nlargest|idxmax)\(`)},
		{"min", pandasRE(`\b(min|minimum|lowest)\b`), pandasRE(`\.(min|nsmallest|idxmin)\(`)},
		{"count", pandasRE(`\b(count|how many|number of)\b`), pandasRE(`\.(count|size|value_counts|nunique)\(|\blen\(`)},
		{"groupby", pandasRE(`\b(group(ed)? by|per|for each|by each)\b`), pandasRE(`\.(groupby|pivot_table)\(`)},
	}

	pandasTopQ     = pandasRE(`\b(top|largest|highest|biggest)\s+\d+\b|\btop\b`)
	pandasBottomQ  = pandasRE(`\b(bottom|smallest|lowest)\s+\d+\b|\bbottom\b`)
	pandasTopCode  = pandasRE(`\.nlargest\(|\.head\(|\.sort_values\([^)]*ascending\s*=\s*False`)
	pandasSortCall = pandasRE(`\.sort_values\(([^)]*)\)`)
	pandasBottomC  = pandasRE(`\.nsmallest\(|\.tail\(`)
	pandasFilterQ  = pandasRE(`\b(where|filter(ed)?|only|greater than|less than|more than|fewer than|above|below|at least|at most|equal to|equals|between|older than|younger than|excluding|except)\b`)
	pandasAndOr    = pandasRE(`\b(and|or)\b`)
	pandasFilterC  = pandasRE(`\.query\(|\.loc\[|\.where\(|\[[^\n]*(==|!=|>=|<=|>|<|\.isin\(|\.between\(|\.str\.)`)
	pandasCompareC = pandasRE(`==|!=|>=|<=|>|<|\.isin\(|\.between\(|\.str\.(contains|startswith|endswith|match)\(|\.(isna|isnull|notna|notnull)\(`)
	pandasGroupQ   = pandasRE(`\b(?:group(?:ed)?\s+by|for\s+each|per)\s+([a-z0-9_ ,]+?)(?:[.?!;:]|$|\b(?:where|with|sorted|ordered|having|then|in|show|list|return|display|and\s+(?:show|sort|order|list|return|find|display|calculate|compute|get|count))\b)`)
	pandasGroupC   = pandasRE(`\.groupby\(([^)]*)\)|\.pivot_table\(([^)]*)\)`)
	pandasSortQ    = pandasRE(`\b(sort(ed)?|order(ed)?|ascending|descending|top|bottom|largest|smallest)\b`)
	pandasSortC    = pandasRE(`\.(sort_values|sort_index|nlargest|nsmallest)\(`)
	pandasJoinQ    = pandasRE(`\b(join(ed)?|merge(d)?|combine(d)?|match(ing)?)\b`)
	pandasJoinC    = pandasRE(`\.(merge|join|concat)\(`)
)

// pandasNorm lower-cases and turns spaces and dashes into underscores.
func pandasNorm(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// pandasLiterals returns the string literals of code, in order.
func pandasLiterals(code string) []string {
	var out []string
	for _, m := range pandasStringLit.FindAllStringSubmatch(code, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else if m[2] != "" {
			out = append(out, m[2])
		}
	}
	return out
}

// pandasMentioned reports whether column c is mentioned in the question:
// as a whole word (plural -s/-es allowed), with underscores read as spaces.
func pandasMentioned(question, c string) bool {
	q := " " + strings.ToLower(question) + " "
	for _, form := range []string{strings.ToLower(c), strings.ReplaceAll(strings.ToLower(c), "_", " ")} {
		if form == "" {
			continue
		}
		r, err := regexp.Compile(`\b` + regexp.QuoteMeta(form) + `(s|es)?\b`)
		if err == nil && r.MatchString(q) {
			return true
		}
	}
	return false
}

func pandasAddUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// pandasColumnsUsed returns the columns the code uses: known columns that
// appear as string literals or attribute accesses; with no known columns,
// every identifier-like string literal.
func pandasColumnsUsed(code string, known []string) []string {
	byNorm := map[string]string{}
	for _, c := range known {
		byNorm[strings.ToLower(c)] = c
	}
	var out []string
	for _, lit := range pandasLiterals(code) {
		if len(known) == 0 {
			if pandasIdentLike(lit) {
				out = pandasAddUnique(out, lit)
			}
			continue
		}
		if c, ok := byNorm[strings.ToLower(lit)]; ok {
			out = pandasAddUnique(out, c)
		}
	}
	for _, m := range pandasAttr.FindAllStringSubmatch(code, -1) {
		if c, ok := byNorm[strings.ToLower(m[1])]; ok {
			out = pandasAddUnique(out, c)
		}
	}
	return out
}

var (
	pandasIdentRE    = pandasRE(`^[A-Za-z_][\w ]{0,63}$`)
	pandasDescending = pandasRE(`ascending\s*=\s*False`)
	pandasListSep    = pandasRE(`,|\band\b`)
)

func pandasIdentLike(s string) bool { return pandasIdentRE.MatchString(s) }

// pandasSortAscending reports whether code sorts ascending somewhere.
func pandasSortAscending(code string) bool {
	for _, m := range pandasSortCall.FindAllStringSubmatch(code, -1) {
		if !pandasDescending.MatchString(m[1]) {
			return true
		}
	}
	return false
}

// ScorePromptUnderstanding scores how well code reflects the question's
// intent. known lists the dataframe's columns (may be empty: the code's
// string literals are then the vocabulary).
func ScorePromptUnderstanding(question, code string, known []string) PromptUnderstanding {
	q := strings.ToLower(question)
	var r PromptUnderstanding
	r.ExtractedColumns = pandasColumnsUsed(code, known)
	vocab := known
	if len(vocab) == 0 {
		vocab = r.ExtractedColumns
	}
	for _, c := range vocab {
		if pandasMentioned(q, c) {
			r.MentionedColumns = pandasAddUnique(r.MentionedColumns, c)
		}
	}
	// Column extraction: share of mentioned columns the code uses.
	r.ColumnExtraction = pandasColumnWeight
	if len(r.MentionedColumns) > 0 {
		hit := 0
		for _, c := range r.MentionedColumns {
			for _, e := range r.ExtractedColumns {
				if strings.EqualFold(c, e) {
					hit++
					break
				}
			}
		}
		r.ColumnExtraction = pandasColumnWeight * float64(hit) / float64(len(r.MentionedColumns))
	}
	// NL parsing: each applicable pattern must be reflected in the code.
	applicable, matched := 0, 0
	if pandasTopQ.MatchString(q) {
		applicable++
		if pandasTopCode.MatchString(code) {
			matched++
		}
	}
	if pandasBottomQ.MatchString(q) {
		applicable++
		if pandasBottomC.MatchString(code) || pandasSortAscending(code) {
			matched++
		}
	}
	if pandasFilterQ.MatchString(q) {
		applicable++
		if pandasFilterC.MatchString(code) {
			matched++
		}
	}
	r.NLParsing = pandasNLWeight
	if applicable > 0 {
		r.NLParsing = pandasNLWeight * float64(matched) / float64(applicable)
	}
	// Statistical understanding: each operation the question asks for
	// must appear in the code.
	required, found := 0, 0
	r.StatisticalOperations = []string{}
	for _, op := range pandasStatOps {
		inCode := op.code.MatchString(code)
		if inCode {
			r.StatisticalOperations = append(r.StatisticalOperations, op.name)
		}
		if op.question.MatchString(q) {
			required++
			if inCode {
				found++
			}
		}
	}
	r.StatisticalUnderstand = pandasStatWeight
	if required > 0 {
		r.StatisticalUnderstand = pandasStatWeight * float64(found) / float64(required)
	}
	if r.ExtractedColumns == nil {
		r.ExtractedColumns = []string{}
	}
	if r.MentionedColumns == nil {
		r.MentionedColumns = []string{}
	}
	r.Score = PandasUnderstandingScore(r.ColumnExtraction, r.NLParsing, r.StatisticalUnderstand)
	return r
}

// pandasGroupMentions returns the columns named after "group by", "for
// each" or "per" in the question.
func pandasGroupMentions(q string) []string {
	var out []string
	for _, m := range pandasGroupQ.FindAllStringSubmatch(q, -1) {
		for _, part := range pandasListSep.Split(m[1], -1) {
			part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "the "))
			if part != "" {
				out = pandasAddUnique(out, part)
			}
		}
	}
	return out
}

// ScoreRequirementCoverage checks that every requirement of the question
// (filters, groupby columns, sorting, joins) appears in the code.
func ScoreRequirementCoverage(question, code string, known []string) RequirementCoverage {
	q := strings.ToLower(question)
	r := RequirementCoverage{Filter: 1, Groupby: 1, Sorting: 1, Join: 1, MissingRequirements: []string{}}

	// Filters: one condition for the first filter keyword plus one per
	// and/or after it, against comparison operations in the code.
	if loc := pandasFilterQ.FindStringIndex(q); loc != nil {
		conds := 1 + len(pandasAndOr.FindAllStringIndex(q[loc[1]:], -1))
		ops := len(pandasCompareC.FindAllStringIndex(code, -1))
		if ops < conds {
			r.Filter = float64(ops) / float64(conds)
			r.MissingRequirements = append(r.MissingRequirements, fmt.Sprintf("Filter conditions missing: %d of %d found", ops, conds))
		}
	}

	// Groupby columns.
	if mentions := pandasGroupMentions(q); len(mentions) > 0 {
		calls := pandasGroupC.FindAllStringSubmatch(code, -1)
		if len(calls) == 0 {
			r.Groupby = 0
			r.MissingRequirements = append(r.MissingRequirements, "Groupby operation missing")
		} else {
			var cols []string
			for _, c := range calls {
				cols = append(cols, pandasLiterals(c[1]+c[2])...)
			}
			hit := 0
			for _, m := range mentions {
				nm := pandasNorm(m)
				ok := false
				for _, c := range cols {
					nc := pandasNorm(c)
					if nc == nm || strings.Contains(nm, nc) || strings.Contains(nc, nm) {
						ok = true
						break
					}
				}
				if ok {
					hit++
				} else {
					r.MissingRequirements = append(r.MissingRequirements, "Groupby column missing: "+m)
				}
			}
			r.Groupby = float64(hit) / float64(len(mentions))
		}
	}

	if pandasSortQ.MatchString(q) && !pandasSortC.MatchString(code) {
		r.Sorting = 0
		r.MissingRequirements = append(r.MissingRequirements, "Sorting operation missing")
	}

	// Join keywords are ambiguous ("match", "combine"): a missing join
	// keeps half credit, as in the guide's example.
	if pandasJoinQ.MatchString(q) && !pandasJoinC.MatchString(code) {
		r.Join = 0.5
		r.MissingRequirements = append(r.MissingRequirements, "Join/merge operation missing")
	}
	r.Score = PandasCoverageScore(r.Filter, r.Groupby, r.Sorting, r.Join)
	return r
}

// Error classes of the guide (“Error Classification”), in classification order.
const (
	PandasColumnError    = "column_error"
	PandasSyntaxError    = "syntax_error"
	PandasTypeError      = "type_error"
	PandasIndexError     = "index_error"
	PandasAttributeError = "attribute_error"
	PandasValueError     = "value_error"
	PandasOtherError     = "other_error"
)

var pandasErrorRules = []struct {
	class    string
	pandasRE *lazyRegexp
}{
	{PandasColumnError, pandasRE(`(?i)keyerror|column|not in index`)},
	{PandasSyntaxError, pandasRE(`(?i)syntaxerror|invalid syntax|indentationerror`)},
	{PandasTypeError, pandasRE(`(?i)typeerror|dtype`)},
	{PandasIndexError, pandasRE(`(?i)indexerror|out of range|out of bounds`)},
	{PandasAttributeError, pandasRE(`(?i)attributeerror|has no attribute`)},
	{PandasValueError, pandasRE(`(?i)valueerror`)},
}

// ClassifyPandasError maps an error message to one of the guide's seven
// classes; the first matching rule wins. With an empty message the
// attempt's error class decides (syntax → syntax_error, schema →
// column_error).
func ClassifyPandasError(msg, class string) string {
	for _, r := range pandasErrorRules {
		if r.pandasRE.MatchString(msg) {
			return r.class
		}
	}
	if strings.TrimSpace(msg) == "" {
		switch class {
		case item.ClassSyntax:
			return PandasSyntaxError
		case item.ClassSchema:
			return PandasColumnError
		}
	}
	return PandasOtherError
}

// RecoveryAttempt is one entry of recovery_details.
type RecoveryAttempt struct {
	AttemptNumber int     `json:"attempt_number"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	FixQuality    float64 `json:"fix_quality"`
}

// ErrorRecovery is the breakdown of pandas_error_recovery.
type ErrorRecovery struct {
	HasError              bool              `json:"has_error"`
	ErrorMessage          string            `json:"error_message"`
	RecoveryAttemptsCount int               `json:"recovery_attempts_count"`
	RecoverySuccess       bool              `json:"recovery_success"`
	RecoverySuccessRate   float64           `json:"recovery_success_rate"`
	ErrorFixQuality       float64           `json:"error_fix_quality"`
	RecoveryScore         float64           `json:"recovery_score"`
	RecoveryDetails       []RecoveryAttempt `json:"recovery_details"`
}

// ScoreErrorRecovery scores a sample's attempts: attempt 0 is the original
// code, the following ones (at most maxAttempts) are recoveries. A
// recovery's fix quality is 1.0 when it runs, 0.5 when its error class
// differs from the previous attempt's (progress), 0.1 when it is the same.
// error_fix_quality is the mean fix quality over recoveries.
func ScoreErrorRecovery(attempts []*item.Attempt, maxAttempts int) ErrorRecovery {
	var r ErrorRecovery
	r.RecoveryDetails = []RecoveryAttempt{}
	if len(attempts) == 0 || !attempts[0].Failed() {
		return r
	}
	r.HasError = true
	r.ErrorMessage = attempts[0].ErrorMessage
	prev := ClassifyPandasError(attempts[0].ErrorMessage, attempts[0].ErrorClass)
	rec := attempts[1:]
	if maxAttempts >= 0 && len(rec) > maxAttempts {
		rec = rec[:maxAttempts]
	}
	var quality float64
	ok := 0
	for i, a := range rec {
		d := RecoveryAttempt{AttemptNumber: i + 1}
		if !a.Failed() {
			d.Success, d.FixQuality = true, 1.0
			ok++
		} else {
			msg := a.ErrorMessage
			d.Error = &msg
			cls := ClassifyPandasError(a.ErrorMessage, a.ErrorClass)
			d.FixQuality = 0.1
			if cls != prev {
				d.FixQuality = 0.5
			}
			prev = cls
		}
		quality += d.FixQuality
		r.RecoveryDetails = append(r.RecoveryDetails, d)
		if d.Success {
			// A recovery that runs ends the loop.
			break
		}
	}
	r.RecoveryAttemptsCount = len(r.RecoveryDetails)
	r.RecoverySuccess = ok > 0
	if n := r.RecoveryAttemptsCount; n > 0 {
		r.RecoverySuccessRate = float64(ok) / float64(n)
		r.ErrorFixQuality = quality / float64(n)
	}
	r.RecoveryScore = PandasRecoveryScore(r.RecoverySuccessRate, r.ErrorFixQuality, r.RecoveryAttemptsCount)
	return r
}

// pandasColumnsField reads the dataframe's columns from an item field: a
// list, a JSON list, or a comma-separated string.
func pandasColumnsField(it *item.Item, field string) ([]string, error) {
	if field == "" {
		return nil, nil
	}
	v, ok := it.Field(field)
	if !ok || v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out, nil
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var out []string
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				return nil, fmt.Errorf("field %q: %w", field, err)
			}
			return out, nil
		}
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("field %q must be a list of column names, got %T", field, v)
}

type pandasOpts struct {
	columnsField   string
	maxAttempts    int
	correctness    string
	quality        string
	performance    string
	noErrorScore   float64
	defaultQuality float64
	hasQuality     bool
	defaultPerf    float64
	hasPerf        bool
}

func parsePandasOpts(o Options) (pandasOpts, error) {
	var p pandasOpts
	var err error
	if p.columnsField, err = o.String("columns_field", "columns"); err != nil {
		return p, err
	}
	if p.maxAttempts, err = o.Int("max_recovery_attempts", 2); err != nil {
		return p, err
	}
	if p.correctness, err = o.String("correctness_score", "ex"); err != nil {
		return p, err
	}
	if p.quality, err = o.String("quality_score", "pandas_quality"); err != nil {
		return p, err
	}
	if p.performance, err = o.String("performance_score", "pandas_performance"); err != nil {
		return p, err
	}
	if p.noErrorScore, err = o.Float("recovery_when_no_error", 1); err != nil {
		return p, err
	}
	if _, ok := o["quality"]; ok {
		p.hasQuality = true
		if p.defaultQuality, err = o.Float("quality", 0); err != nil {
			return p, err
		}
	}
	if _, ok := o["performance"]; ok {
		p.hasPerf = true
		if p.defaultPerf, err = o.Float("performance", 0); err != nil {
			return p, err
		}
	}
	return p, nil
}

type pandasMetric struct {
	info Info
	opts pandasOpts
	kind string // understanding, coverage, recovery, overall
}

func (m *pandasMetric) Info() Info { return m.info }

// pandasRecordScore reads a score another metric wrote on the record.
func pandasRecordScore(rec *item.Record, name string) (float64, error) {
	s, ok := rec.Score(name)
	switch {
	case !ok:
		return 0, fmt.Errorf("score %q is not on the record: run that metric first or set the option naming it", name)
	case s.Err != "":
		return 0, fmt.Errorf("score %q failed: %s", name, s.Err)
	case s.Null:
		return 0, fmt.Errorf("score %q is null", name)
	}
	return s.Value, nil
}

func (m *pandasMetric) Score(_ context.Context, in Input) item.Score {
	name := m.info.Name
	rec := in.Record
	if rec == nil {
		return Failed(name, errors.New("no record"))
	}
	var attempts []*item.Attempt
	if len(rec.Samples) > 0 {
		attempts = rec.Samples[0].Attempts
	}
	a := rec.Final()
	if a == nil {
		return Failed(name, errors.New("no attempt to score"))
	}
	known, err := pandasColumnsField(&rec.Item, m.opts.columnsField)
	if err != nil {
		return Failed(name, err)
	}
	recovery := func() (float64, bool) {
		r := ScoreErrorRecovery(attempts, m.opts.maxAttempts)
		return r.RecoveryScore, r.HasError
	}
	switch m.kind {
	case "understanding":
		return item.Score{Name: name, Value: ScorePromptUnderstanding(rec.Item.Question, a.Query, known).Score}
	case "coverage":
		return item.Score{Name: name, Value: ScoreRequirementCoverage(rec.Item.Question, a.Query, known).Score}
	case "recovery":
		v, hasErr := recovery()
		if !hasErr {
			return item.Score{Name: name, Null: true}
		}
		return item.Score{Name: name, Value: v}
	}
	correct, err := pandasRecordScore(rec, m.opts.correctness)
	if err != nil {
		return Failed(name, err)
	}
	quality := m.opts.defaultQuality
	if !m.opts.hasQuality {
		if quality, err = pandasRecordScore(rec, m.opts.quality); err != nil {
			return Failed(name, err)
		}
	}
	perf := m.opts.defaultPerf
	if !m.opts.hasPerf {
		if perf, err = pandasRecordScore(rec, m.opts.performance); err != nil {
			return Failed(name, err)
		}
	}
	rv, hasErr := recovery()
	if !hasErr {
		rv = m.opts.noErrorScore
	}
	u := ScorePromptUnderstanding(rec.Item.Question, a.Query, known).Score
	c := ScoreRequirementCoverage(rec.Item.Question, a.Query, known).Score
	return item.Score{Name: name, Value: PandasOverallScore(correct, quality, perf, u, c, rv)}
}

func init() {
	const doc = "*New Evaluation Metrics Guide*, "
	defs := []struct{ name, kind, desc, ref, inputs string }{
		{"pandas_prompt_understanding", "understanding", "Prompt understanding: column extraction (0.4) + natural-language pattern parsing (0.3) + statistical operations (0.3).", doc + "“1. Prompt Understanding (Natural-Language Intent Accuracy)”",
			"Record.Item.Question and Record.Final().Query; dataframe columns from the item field named by columns_field"},
		{"pandas_requirement_coverage", "coverage", "Requirement coverage: filter conditions (30%), groupby columns (30%), sorting (20%), joins (20%) present in the code.", doc + "“2. Requirement Coverage”",
			"Record.Item.Question and Record.Final().Query"},
		{"pandas_error_recovery", "recovery", "Error recovery ability: recovery success rate (50%), error fix quality (30%), attempts made (20%); Null when the first attempt ran.", doc + "“3. Error Recovery Ability”",
			"Record.Samples[0].Attempts (attempt 0 = original code, later ones = recoveries) and their error messages"},
		{"pandas_overall", "overall", "Overall weighted score of the pandas evaluation: 25% correctness, 20% quality, 15% performance, 15% understanding, 15% coverage, 10% recovery.", doc + "“Overall Score Calculation”",
			"record scores named by correctness_score / quality_score / performance_score (or options quality / performance), plus the three pandas metrics"},
	}
	opts := []string{"columns_field", "max_recovery_attempts", "correctness_score", "quality_score", "performance_score", "quality", "performance", "recovery_when_no_error"}
	for _, d := range defs {
		info := Info{Name: d.name, Description: d.desc, Reference: d.ref, Inputs: d.inputs, Range: "[0,1]"}
		kind := d.kind
		Register(Def{
			Info:    info,
			Options: opts,
			NewItem: func(o Options) (ItemMetric, error) {
				p, err := parsePandasOpts(o)
				if err != nil {
					return nil, err
				}
				return &pandasMetric{info: info, opts: p, kind: kind}, nil
			},
		})
	}
}
