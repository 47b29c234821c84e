package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// This file implements the QAS Evaluation System, the QAS (Query Affinity Score):
// 0.40 × semantic + 0.40 × execution + 0.20 × datatype, pass at ≥ 0.70.
// The semantic component comes from an LLM judge (a score named
// qas_semantic on the record); execution and datatype are computed here.

// QAS weights and pass threshold (QAS Evaluation System, “Weighted Scoring Formula”).
const (
	QASSemanticWeight  = 0.40
	QASExecutionWeight = 0.40
	QASDatatypeWeight  = 0.20
	QASPassThreshold   = 0.70
)

// QASSemanticScore is the name of the record score the semantic component
// is read from; an LLM-judge metric writes it.
const QASSemanticScore = "qas_semantic"

// qasEps absorbs floating-point noise in the pass comparison, so that
// components summing to exactly 0.70 on paper pass.
const qasEps = 1e-9

// QASFinal is the weighted QAS of three components in [0,1].
func QASFinal(semantic, execution, datatype float64) float64 {
	return QASSemanticWeight*semantic + QASExecutionWeight*execution + QASDatatypeWeight*datatype
}

// QASPassed reports whether a final score passes (≥ threshold).
func QASPassed(final, threshold float64) bool { return final+qasEps >= threshold }

// qasValue is a result after QAS's flexible normalisation: a 1×1 table is
// its cell, a numeric string is a number.
type qasValue struct {
	kind string // "number", "string", "boolean", "null", "table"
	num  float64
	str  string
	b    bool
	t    *table.Table
}

// qasNumber parses a cell as a number: numeric normal forms and strings
// that parse as a float (after trimming and removing thousands commas).
func qasNumber(v table.Value) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case string:
		s := strings.ReplaceAll(strings.TrimSpace(x), ",", "")
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func qasScalar(v table.Value) qasValue {
	if v == nil {
		return qasValue{kind: "null"}
	}
	if f, ok := qasNumber(v); ok {
		return qasValue{kind: "number", num: f, str: table.Format(v)}
	}
	if b, ok := v.(bool); ok {
		return qasValue{kind: "boolean", b: b, str: table.Format(v)}
	}
	return qasValue{kind: "string", str: table.Format(v)}
}

// normalizeQAS applies the flexible normalisation to a result table.
func normalizeQAS(t *table.Table) qasValue {
	if t != nil && len(t.Rows) == 1 && len(t.Columns) == 1 && len(t.Rows[0]) == 1 {
		return qasScalar(t.Rows[0][0])
	}
	return qasValue{kind: "table", t: t}
}

// QASDatatype scores whether a result has the expected answer type after
// flexible normalisation: 1 when it does, 0 when it does not. Types:
// "number" (a number, a 1×1 table holding one, or a parseable string),
// "string" (any non-null scalar), "boolean" (a boolean or 1×1 table of
// one), "table" (any table), "null"/"empty" (no rows). An empty expected
// type accepts any result. The explanation says why.
func QASDatatype(result *table.Table, expected string) (float64, string) {
	if result == nil {
		return 0, "No result to validate"
	}
	v := normalizeQAS(result)
	switch strings.ToLower(strings.TrimSpace(expected)) {
	case "":
		return 1, "Result present (no expected type)"
	case "number", "numeric", "integer", "float", "count":
		if v.kind == "number" {
			return 1, "Valid numeric value"
		}
		return 0, fmt.Sprintf("Expected a number, got %s", qasDescribe(v))
	case "string", "text":
		if v.kind == "string" || v.kind == "number" || v.kind == "boolean" {
			return 1, "Valid string value"
		}
		return 0, fmt.Sprintf("Expected a string, got %s", qasDescribe(v))
	case "boolean", "bool":
		if v.kind == "boolean" || (v.kind == "string" && (strings.EqualFold(v.str, "true") || strings.EqualFold(v.str, "false"))) {
			return 1, "Valid boolean value"
		}
		return 0, fmt.Sprintf("Expected a boolean, got %s", qasDescribe(v))
	case "table", "list", "array", "rows", "dataframe":
		return 1, fmt.Sprintf("Valid table (%d rows)", result.NumRows())
	case "null", "empty", "none":
		if result.NumRows() == 0 || v.kind == "null" {
			return 1, "Valid empty result"
		}
		return 0, fmt.Sprintf("Expected an empty result, got %s", qasDescribe(v))
	}
	return 0, fmt.Sprintf("Unknown expected answer type %q", expected)
}

// QASTypeOf names the answer type of a result after normalisation, for
// items that do not declare one.
func QASTypeOf(t *table.Table) string {
	v := normalizeQAS(t)
	if v.kind == "null" {
		return "null"
	}
	return v.kind
}

func qasDescribe(v qasValue) string {
	switch v.kind {
	case "table":
		return fmt.Sprintf("a %d×%d table", v.t.NumRows(), v.t.NumCols())
	case "null":
		return "null"
	}
	return fmt.Sprintf("%s %q", v.kind, v.str)
}

// QASExecOptions are the tolerances of QASExecution.
type QASExecOptions struct {
	// Tolerance is the relative difference (to max(|expected|, 1)) under
	// which two numbers match fully.
	Tolerance float64
	// PartialWindow is the relative difference at which partial credit for
	// a number reaches 0; credit falls linearly from 1 at Tolerance.
	PartialWindow float64
}

// DefaultQASExecOptions are QASExecution's defaults.
var DefaultQASExecOptions = QASExecOptions{Tolerance: 1e-6, PartialWindow: 0.1}

// Table partial-credit weights: row count, columns, values.
const (
	qasRowsWeight   = 0.25
	qasColsWeight   = 0.25
	qasValuesWeight = 0.50
)

// QASExecution compares an actual result with the expected one and gives
// partial credit: numbers match within a tolerance and earn linear credit
// inside a window; scalars match after trimming and case folding; tables
// earn 0.25 × row-count ratio + 0.25 × column-name overlap + 0.50 × value
// F1 (rows as bags of normalised cells, order ignored). It returns the
// score in [0,1] and an explanation.
func QASExecution(actual, expected *table.Table, o QASExecOptions) (float64, string) {
	if actual == nil {
		return 0, "No actual result"
	}
	if expected == nil {
		return 0, "No expected result"
	}
	a, e := normalizeQAS(actual), normalizeQAS(expected)
	switch {
	case e.kind == "number" && a.kind == "number":
		d := math.Abs(a.num - e.num)
		rel := d / math.Max(math.Abs(e.num), 1)
		if rel <= o.Tolerance {
			return 1, fmt.Sprintf("Numeric match: %s ≈ %s", a.str, e.str)
		}
		if o.PartialWindow > o.Tolerance && rel < o.PartialWindow {
			s := 1 - (rel-o.Tolerance)/(o.PartialWindow-o.Tolerance)
			return s, fmt.Sprintf("Numeric close: %s vs %s (relative difference %.4g)", a.str, e.str, rel)
		}
		return 0, fmt.Sprintf("Numeric mismatch: %s vs %s", a.str, e.str)
	case e.kind == "table" || a.kind == "table":
		if e.kind != "table" || a.kind != "table" {
			return 0, fmt.Sprintf("Shape mismatch: expected %s, got %s", qasDescribe(e), qasDescribe(a))
		}
		return qasTables(a.t, e.t)
	case e.kind == "null" || a.kind == "null":
		if e.kind == a.kind {
			return 1, "Both null"
		}
		return 0, fmt.Sprintf("Null mismatch: expected %s, got %s", qasDescribe(e), qasDescribe(a))
	}
	if strings.EqualFold(strings.TrimSpace(a.str), strings.TrimSpace(e.str)) {
		return 1, fmt.Sprintf("Value match: %s", a.str)
	}
	return 0, fmt.Sprintf("Value mismatch: %s vs %s", a.str, e.str)
}

// qasCell is a cell's comparison key: numbers by value, text folded.
func qasCell(v table.Value) string {
	if v == nil {
		return "\x00null"
	}
	if f, ok := qasNumber(v); ok {
		return "n:" + strconv.FormatFloat(f, 'g', 12, 64)
	}
	return "s:" + strings.ToLower(strings.TrimSpace(table.Format(v)))
}

func qasTables(a, e *table.Table) (float64, string) {
	ar, er := a.NumRows(), e.NumRows()
	rows := 1.0
	if max(ar, er) > 0 {
		rows = float64(min(ar, er)) / float64(max(ar, er))
	}
	// Columns: overlap of names (case-insensitive); when no name is shared
	// the tables are aligned by position and only the count is compared.
	en := map[string]int{}
	for i, c := range e.Columns {
		en[strings.ToLower(c.Name)] = i
	}
	shared := 0
	align := make([]int, len(e.Columns)) // expected column → actual column
	for i := range align {
		align[i] = -1
	}
	for j, c := range a.Columns {
		if i, ok := en[strings.ToLower(c.Name)]; ok && align[i] < 0 {
			align[i] = j
			shared++
		}
	}
	ac, ec := a.NumCols(), e.NumCols()
	cols := 1.0
	if shared == 0 {
		for i := range align {
			if i < ac {
				align[i] = i
			}
		}
		if max(ac, ec) > 0 {
			cols = float64(min(ac, ec)) / float64(max(ac, ec))
		}
	} else {
		cols = float64(shared) / float64(ac+ec-shared)
	}
	key := func(t *table.Table, r int, pick func(i int) int) string {
		var b strings.Builder
		for i := range ec {
			j := pick(i)
			var v table.Value
			if j >= 0 && j < len(t.Rows[r]) {
				v = t.Rows[r][j]
			}
			b.WriteString(qasCell(v))
			b.WriteByte(0x1f)
		}
		return b.String()
	}
	want := map[string]int{}
	for r := range er {
		want[key(e, r, func(i int) int { return i })]++
	}
	tp := 0
	for r := range ar {
		k := key(a, r, func(i int) int { return align[i] })
		if want[k] > 0 {
			want[k]--
			tp++
		}
	}
	values := 0.0
	switch {
	case ar == 0 && er == 0:
		values = 1
	case tp > 0:
		values = 2 * float64(tp) / float64(ar+er)
	}
	s := qasRowsWeight*rows + qasColsWeight*cols + qasValuesWeight*values
	if rows == 1 && cols == 1 && values == 1 {
		return 1, fmt.Sprintf("Table match: %d rows × %d columns", ar, ac)
	}
	return s, fmt.Sprintf("Table partial: rows %d vs %d, columns %.2f, values F1 %.2f", ar, er, cols, values)
}

// qasJSONTable converts a decoded JSON expected result into a table: a
// scalar becomes 1×1, an object one row, a list of objects rows with the
// union of keys as columns (first-seen order), a list of scalars one column.
func qasJSONTable(x any) *table.Table {
	cell := func(v any) table.Value {
		switch y := v.(type) {
		case json.Number:
			if i, err := y.Int64(); err == nil {
				return i
			}
			f, _ := y.Float64()
			return f
		case float64:
			return y
		case string, bool, nil:
			return y
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	objRows := func(objs []map[string]any, order [][]string) *table.Table {
		t := &table.Table{}
		pos := map[string]int{}
		for _, ks := range order {
			for _, k := range ks {
				if _, ok := pos[k]; !ok {
					pos[k] = len(t.Columns)
					t.Columns = append(t.Columns, table.Column{Name: k})
				}
			}
		}
		for _, o := range objs {
			row := make([]table.Value, len(t.Columns))
			for k, v := range o {
				row[pos[k]] = cell(v)
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	keys := func(o map[string]any) []string {
		ks := make([]string, 0, len(o))
		for k := range o {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	switch y := x.(type) {
	case map[string]any:
		return objRows([]map[string]any{y}, [][]string{keys(y)})
	case []any:
		allObj := len(y) > 0
		for _, e := range y {
			if _, ok := e.(map[string]any); !ok {
				allObj = false
			}
		}
		if allObj {
			var objs []map[string]any
			var order [][]string
			for _, e := range y {
				objs = append(objs, e.(map[string]any))
				order = append(order, keys(e.(map[string]any)))
			}
			return objRows(objs, order)
		}
		t := &table.Table{Columns: []table.Column{{Name: "value"}}}
		for _, e := range y {
			t.Rows = append(t.Rows, []table.Value{cell(e)})
		}
		return t
	}
	return &table.Table{Columns: []table.Column{{Name: "value"}}, Rows: [][]table.Value{{cell(x)}}}
}

// qasExpected returns the expected result: the JSON in the item field
// named by field, or the gold result.
func qasExpected(rec *item.Record, field string) (*table.Table, error) {
	if field != "" {
		v, ok := rec.Item.Field(field)
		if !ok {
			return nil, fmt.Errorf("item has no field %q", field)
		}
		if s, ok := v.(string); ok {
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			var x any
			if err := d.Decode(&x); err != nil {
				// Not JSON: the plain text is the expected value.
				return &table.Table{Columns: []table.Column{{Name: "value"}}, Rows: [][]table.Value{{s}}}, nil
			}
			return qasJSONTable(x), nil
		}
		return &table.Table{Columns: []table.Column{{Name: "value"}}, Rows: [][]table.Value{{v}}}, nil
	}
	if rec.GoldError != "" {
		return nil, fmt.Errorf("gold query failed: %s", rec.GoldError)
	}
	if rec.GoldResult == nil {
		return nil, errors.New("no gold result")
	}
	return rec.GoldResult, nil
}

// qasActual returns the final attempt's result, nil when it did not run.
func qasActual(rec *item.Record) (*table.Table, error) {
	a := rec.Final()
	if a == nil {
		return nil, errors.New("no attempt to score")
	}
	if a.Failed() {
		return nil, nil
	}
	return a.Result, nil
}

// QASComponents is one item's QAS breakdown.
type QASComponents struct {
	Semantic, Execution, Datatype float64
	SemanticOK                    bool // a semantic score was available
	ExecutionWhy, DatatypeWhy     string
	SemanticWhy                   string
	Final                         float64
	Passed                        bool
	Actual, Expected              *table.Table
	ExpectedType                  string
}

type qasOpts struct {
	expectedField string
	typeField     string
	semantic      float64
	hasSemantic   bool
	exec          QASExecOptions
	threshold     float64
}

func parseQASOpts(o Options) (qasOpts, error) {
	q := qasOpts{exec: DefaultQASExecOptions}
	var err error
	if q.expectedField, err = o.String("expected_field", ""); err != nil {
		return q, err
	}
	if q.typeField, err = o.String("type_field", "expected_answer_type"); err != nil {
		return q, err
	}
	if _, ok := o["semantic"]; ok {
		if q.semantic, err = o.Float("semantic", 0); err != nil {
			return q, err
		}
		if q.semantic < 0 || q.semantic > 1 {
			return q, fmt.Errorf("option \"semantic\" must be in [0,1], got %v", q.semantic)
		}
		q.hasSemantic = true
	}
	if q.exec.Tolerance, err = o.Float("tolerance", DefaultQASExecOptions.Tolerance); err != nil {
		return q, err
	}
	if q.exec.PartialWindow, err = o.Float("partial_window", DefaultQASExecOptions.PartialWindow); err != nil {
		return q, err
	}
	if q.exec.Tolerance < 0 || q.exec.PartialWindow < 0 {
		return q, errors.New("options \"tolerance\" and \"partial_window\" must not be negative")
	}
	if q.threshold, err = o.Float("threshold", QASPassThreshold); err != nil {
		return q, err
	}
	return q, nil
}

// scoreQAS computes all components of one record.
func (q qasOpts) score(rec *item.Record) (QASComponents, error) {
	var c QASComponents
	if rec == nil {
		return c, errors.New("no record")
	}
	exp, err := qasExpected(rec, q.expectedField)
	if err != nil {
		return c, err
	}
	act, err := qasActual(rec)
	if err != nil {
		return c, err
	}
	c.Actual, c.Expected = act, exp
	c.Execution, c.ExecutionWhy = QASExecution(act, exp, q.exec)
	c.ExpectedType = QASTypeOf(exp)
	if v, ok := rec.Item.Field(q.typeField); ok && v != nil {
		c.ExpectedType = table.Format(v)
	}
	c.Datatype, c.DatatypeWhy = QASDatatype(act, c.ExpectedType)
	if s, ok := rec.Score(QASSemanticScore); ok && !s.Null && s.Err == "" {
		c.Semantic, c.SemanticOK, c.SemanticWhy = s.Value, true, "LLM judge ("+QASSemanticScore+")"
	} else if q.hasSemantic {
		c.Semantic, c.SemanticOK, c.SemanticWhy = q.semantic, true, "fixed by the semantic option"
	}
	c.Final = QASFinal(c.Semantic, c.Execution, c.Datatype)
	c.Passed = QASPassed(c.Final, q.threshold)
	return c, nil
}

// ScoreQAS computes the QAS breakdown of a record with the given metric
// options (those of qas_score), for writers such as WriteQASResult.
func ScoreQAS(rec *item.Record, o Options) (QASComponents, error) {
	q, err := parseQASOpts(o)
	if err != nil {
		return QASComponents{}, err
	}
	return q.score(rec)
}

type qasMetric struct {
	info Info
	opts qasOpts
	kind string // execution, datatype, score, pass
}

func (m *qasMetric) Info() Info { return m.info }

func (m *qasMetric) Score(_ context.Context, in Input) item.Score {
	name := m.info.Name
	c, err := m.opts.score(in.Record)
	if err != nil {
		return Failed(name, err)
	}
	switch m.kind {
	case "execution":
		return item.Score{Name: name, Value: c.Execution}
	case "datatype":
		return item.Score{Name: name, Value: c.Datatype}
	}
	if !c.SemanticOK {
		// Without the judge's semantic score the QAS is undefined.
		return item.Score{Name: name, Null: true}
	}
	if m.kind == "pass" {
		v := 0.0
		if c.Passed {
			v = 1
		}
		return item.Score{Name: name, Value: v}
	}
	return item.Score{Name: name, Value: c.Final}
}

// QASEvaluation is the qas_evaluation object of an evaluation-results.jsonl
// line (QAS Evaluation System, “Output”), field order as in the document.
type QASEvaluation struct {
	SemanticScore  float64      `json:"semantic_score"`
	ExecutionScore float64      `json:"execution_score"`
	DatatypeScore  float64      `json:"datatype_score"`
	FinalScore     float64      `json:"final_score"`
	Passed         bool         `json:"passed"`
	Breakdown      QASBreakdown `json:"breakdown"`
}

// QASBreakdown holds the three explanations.
type QASBreakdown struct {
	SemanticExplanation  string `json:"semantic_explanation"`
	ExecutionExplanation string `json:"execution_explanation"`
	DatatypeExplanation  string `json:"datatype_explanation"`
}

// QASResult is one evaluation-results.jsonl line. TestID is written as a
// JSON number when it is an integer (or a string of digits), else as a
// string; ExpectedResults and ActualResults are any JSON-encodable values
// (QASResultValue converts a table).
type QASResult struct {
	TestID          any           `json:"test_id"`
	Question        string        `json:"question"`
	AgentUsed       string        `json:"agent_used"`
	Difficulty      string        `json:"difficulty"`
	ExpectedSQL     string        `json:"expected_sql"`
	GeneratedSQL    string        `json:"generated_sql"`
	ExpectedResults any           `json:"expected_results"`
	ActualResults   any           `json:"actual_results"`
	QASEvaluation   QASEvaluation `json:"qas_evaluation"`
}

// QASResultValue converts a result table into the JSON shape the seed's
// results use: a 1×1 table is its value, otherwise a list of row objects
// keyed by column name; nil is null.
func QASResultValue(t *table.Table) any {
	if t == nil {
		return nil
	}
	if len(t.Rows) == 1 && len(t.Columns) == 1 && len(t.Rows[0]) == 1 {
		return qasJSONCell(t.Rows[0][0])
	}
	rows := make([]json.RawMessage, 0, len(t.Rows))
	for _, r := range t.Rows {
		var b bytes.Buffer
		b.WriteByte('{')
		for j, c := range t.Columns {
			if j > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(c.Name)
			b.Write(k)
			b.WriteByte(':')
			var v table.Value
			if j < len(r) {
				v = r[j]
			}
			vb, err := json.Marshal(qasJSONCell(v))
			if err != nil {
				vb, _ = json.Marshal(table.Format(v))
			}
			b.Write(vb)
		}
		b.WriteByte('}')
		rows = append(rows, json.RawMessage(b.Bytes()))
	}
	return rows
}

func qasJSONCell(v table.Value) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return table.Format(x)
		}
	case []byte:
		return string(x)
	}
	return v
}

// qasRound removes floating-point noise (0.8400000000000001 → 0.84).
func qasRound(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// NewQASResult builds the evaluation-results.jsonl line of a record from
// its QAS breakdown. agent and difficulty come from the caller (or item
// fields); the expected and generated SQL are the gold and final queries.
func NewQASResult(rec *item.Record, c QASComponents, agent, difficulty string) QASResult {
	r := QASResult{
		TestID:          rec.Item.ID,
		Question:        rec.Item.Question,
		AgentUsed:       agent,
		Difficulty:      difficulty,
		ExpectedSQL:     rec.Item.Gold,
		ExpectedResults: QASResultValue(c.Expected),
		ActualResults:   QASResultValue(c.Actual),
		QASEvaluation: QASEvaluation{
			SemanticScore:  c.Semantic,
			ExecutionScore: c.Execution,
			DatatypeScore:  c.Datatype,
			FinalScore:     c.Final,
			Passed:         c.Passed,
			Breakdown: QASBreakdown{
				SemanticExplanation:  c.SemanticWhy,
				ExecutionExplanation: c.ExecutionWhy,
				DatatypeExplanation:  c.DatatypeWhy,
			},
		},
	}
	if a := rec.Final(); a != nil {
		r.GeneratedSQL = a.Query
	}
	return r
}

// WriteQASResult writes r as one line of evaluation-results.jsonl: a
// compact JSON object with the keys and nesting of the QAS Evaluation System's “Output”, in its order,
// followed by a newline. Scores are rounded to 9 decimals to drop
// floating-point noise; HTML characters in SQL are not escaped.
func WriteQASResult(w io.Writer, r QASResult) error {
	switch id := r.TestID.(type) {
	case string:
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && strconv.FormatInt(n, 10) == id {
			r.TestID = n
		}
	case int:
		r.TestID = int64(id)
	}
	e := &r.QASEvaluation
	e.SemanticScore = qasRound(e.SemanticScore)
	e.ExecutionScore = qasRound(e.ExecutionScore)
	e.DatatypeScore = qasRound(e.DatatypeScore)
	e.FinalScore = qasRound(e.FinalScore)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("qas result %v: %w", r.TestID, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func init() {
	const doc = "*QAS Evaluation System*, "
	opts := []string{"expected_field", "type_field", "semantic", "tolerance", "partial_window", "threshold"}
	for _, d := range []struct{ name, kind, desc, ref, rng string }{
		{"qas_execution", "execution", "QAS execution similarity: data-level comparison with partial credit (numbers with tolerance; tables by row count, columns and values).", doc + "“2. Execution Similarity (40%)”", "[0,1]"},
		{"qas_datatype", "datatype", "QAS datatype validity with flexible normalisation (1×1 table ≡ value, parseable string ≡ number).", doc + "“3. Data Type Validity (20%)”", "{0,1}"},
		{"qas_score", "score", "QAS final score: 0.40 semantic (LLM judge) + 0.40 execution + 0.20 datatype.", doc + "“Weighted Scoring Formula”", "[0,1]"},
		{"qas_pass", "pass", "1 when the QAS final score is ≥ 0.70 (option threshold), else 0.", doc + "“Weighted Scoring Formula” (pass threshold)", "{0,1}"},
	} {
		info := Info{
			Name:        d.name,
			Description: d.desc,
			Reference:   d.ref,
			Inputs:      "Record.Final().Result vs Record.GoldResult (or the JSON in expected_field); expected type from the type_field item field; semantic from the record score qas_semantic, else option semantic, else Null",
			Range:       d.rng,
		}
		kind := d.kind
		Register(Def{
			Info:    info,
			Options: opts,
			NewItem: func(o Options) (ItemMetric, error) {
				q, err := parseQASOpts(o)
				if err != nil {
					return nil, err
				}
				return &qasMetric{info: info, opts: q, kind: kind}, nil
			},
		})
	}
}
