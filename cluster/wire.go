package cluster

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// EncodeRecord encodes a finished record for a result message: JSON of the
// wire structs below, s2-compressed. Every field of item.Record and what it
// holds is carried (TestWireCoversEveryField fails when one is added), tables
// in table's exact binary codec, so DecodeRecord returns an equal record.
func EncodeRecord(rec *item.Record) ([]byte, error) {
	w, err := toWire(rec)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return s2.Encode(nil, b), nil
}

// DecodeRecord decodes what EncodeRecord wrote.
func DecodeRecord(b []byte) (*item.Record, error) {
	raw, err := s2.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var w wireRecord
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return fromWire(&w)
}

type wireRecord struct {
	Seq       int          `json:"seq"`
	Cell      int          `json:"cell"`
	Item      wireItem     `json:"item"`
	GoldDone  bool         `json:"gold_done,omitempty"`
	Gold      []byte       `json:"gold,omitempty"` // table codec
	GoldError string       `json:"gold_error,omitempty"`
	Samples   []wireSample `json:"samples,omitempty"`
	Scores    []wireScore  `json:"scores,omitempty"`
	Status    string       `json:"status,omitempty"`
	Error     string       `json:"error,omitempty"`
	Resumed   bool         `json:"resumed,omitempty"`
}

type wireItem struct {
	ID       string `json:"id"`
	Question string `json:"question,omitempty"`
	Gold     string `json:"gold,omitempty"`
	DB       string `json:"db,omitempty"`
	// Fields is a one-row table (columns named after the fields) in the
	// table codec, which keeps every value's type exactly.
	Fields  []byte `json:"fields,omitempty"`
	NFields int    `json:"n_fields,omitempty"`
	Invalid string `json:"invalid,omitempty"`
}

type wireSample struct {
	Index    int           `json:"index"`
	Attempts []wireAttempt `json:"attempts,omitempty"`
	Pending  []string      `json:"pending,omitempty"`
}

type wireAttempt struct {
	Sample            int              `json:"sample"`
	Index             int              `json:"index"`
	Query             string           `json:"query,omitempty"`
	Raw               string           `json:"raw,omitempty"`
	Validated         bool             `json:"validated,omitempty"`
	Valid             bool             `json:"valid,omitempty"`
	Executed          bool             `json:"executed,omitempty"`
	Result            []byte           `json:"result,omitempty"` // table codec
	Match             *bool            `json:"match,omitempty"`
	ErrorClass        string           `json:"error_class,omitempty"`
	ErrorMessage      string           `json:"error_message,omitempty"`
	SyntaxValid       *bool            `json:"syntax_valid,omitempty"`
	Safe              *bool            `json:"safe,omitempty"`
	SafetyReason      string           `json:"safety_reason,omitempty"`
	SchemaScore       *wireFloat       `json:"schema_score,omitempty"`
	SchemaReasons     []string         `json:"schema_reasons,omitempty"`
	PropertiesScore   *wireFloat       `json:"properties_score,omitempty"`
	PropertiesReasons []string         `json:"properties_reasons,omitempty"`
	Timings           map[string]int64 `json:"timings,omitempty"` // nanoseconds
	Cached            bool             `json:"cached,omitempty"`
	InputTokens       int              `json:"input_tokens,omitempty"`
	OutputTokens      int              `json:"output_tokens,omitempty"`
	Cost              wireFloat        `json:"cost"`
	Latency           int64            `json:"latency,omitempty"`
	CacheHit          bool             `json:"cache_hit,omitempty"`
}

type wireScore struct {
	Name     string    `json:"name"`
	Value    wireFloat `json:"value"`
	Null     bool      `json:"null,omitempty"`
	Err      string    `json:"err,omitempty"`
	Note     string    `json:"note,omitempty"`
	Official bool      `json:"official,omitempty"`
	// Separation's tables in the table codec.
	Separation *wireSeparation `json:"separation,omitempty"`
}

type wireSeparation struct {
	DB   string `json:"db"`
	Own  bool   `json:"own,omitempty"`
	Gold []byte `json:"gold,omitempty"`
	Pred []byte `json:"pred,omitempty"`
}

// wireFloat is a float64 that survives JSON exactly: finite values as
// Go's shortest round-trip decimal, NaN and infinities as strings.
type wireFloat float64

func (f wireFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		// NaN payloads are not kept; every NaN evalflow makes is the same.
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *wireFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = wireFloat(math.NaN())
		return nil
	case `"+Inf"`:
		*f = wireFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = wireFloat(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = wireFloat(v)
	return err
}

func floatPtr(p *float64) *wireFloat {
	if p == nil {
		return nil
	}
	f := wireFloat(*p)
	return &f
}

func fromFloatPtr(p *wireFloat) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

func encodeTable(t *table.Table) ([]byte, error) {
	if t == nil {
		return nil, nil
	}
	return t.MarshalBinary()
}

func decodeTable(b []byte) (*table.Table, error) {
	if b == nil {
		return nil, nil
	}
	t := &table.Table{}
	if err := t.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return t, nil
}

func toWire(rec *item.Record) (*wireRecord, error) {
	w := &wireRecord{Seq: rec.Seq, Cell: rec.Cell, GoldDone: rec.GoldDone, GoldError: rec.GoldError,
		Status: rec.Status, Error: rec.Error, Resumed: rec.Resumed}
	it := rec.Item
	w.Item = wireItem{ID: it.ID, Question: it.Question, Gold: it.Gold, DB: it.DB, Invalid: it.Invalid, NFields: len(it.Fields)}
	if it.Fields != nil {
		ft := &table.Table{Columns: make([]table.Column, len(it.Fields)), Rows: [][]table.Value{make([]table.Value, len(it.Fields))}}
		for i, f := range it.Fields {
			ft.Columns[i] = table.Column{Name: f.Name}
			ft.Rows[0][i] = f.Value
		}
		b, err := ft.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("item %q fields: %w", it.ID, err)
		}
		w.Item.Fields = b
	}
	var err error
	if w.Gold, err = encodeTable(rec.GoldResult); err != nil {
		return nil, fmt.Errorf("item %q gold result: %w", it.ID, err)
	}
	for _, s := range rec.Samples {
		ws := wireSample{Index: s.Index, Pending: s.Pending}
		for _, a := range s.Attempts {
			wa := wireAttempt{Sample: a.Sample, Index: a.Index, Query: a.Query, Raw: a.Raw,
				Validated: a.Validated, Valid: a.Valid, Executed: a.Executed, Match: a.Match,
				ErrorClass: a.ErrorClass, ErrorMessage: a.ErrorMessage,
				SyntaxValid: a.SyntaxValid, Safe: a.Safe, SafetyReason: a.SafetyReason,
				SchemaScore: floatPtr(a.SchemaScore), SchemaReasons: a.SchemaReasons,
				PropertiesScore: floatPtr(a.PropertiesScore), PropertiesReasons: a.PropertiesReasons,
				Cached: a.Cached, InputTokens: a.InputTokens, OutputTokens: a.OutputTokens,
				Cost: wireFloat(a.Cost), Latency: int64(a.Latency), CacheHit: a.CacheHit}
			if wa.Result, err = encodeTable(a.Result); err != nil {
				return nil, fmt.Errorf("item %q attempt %d result: %w", it.ID, a.Index, err)
			}
			if a.Timings != nil {
				wa.Timings = make(map[string]int64, len(a.Timings))
				for k, d := range a.Timings {
					wa.Timings[k] = int64(d)
				}
			}
			ws.Attempts = append(ws.Attempts, wa)
		}
		w.Samples = append(w.Samples, ws)
	}
	for _, s := range rec.Scores {
		ws := wireScore{Name: s.Name, Value: wireFloat(s.Value), Null: s.Null, Err: s.Err, Note: s.Note, Official: s.Official}
		if sp := s.Separation; sp != nil {
			ws.Separation = &wireSeparation{DB: sp.DB, Own: sp.Own}
			if ws.Separation.Gold, err = encodeTable(sp.Gold); err == nil {
				ws.Separation.Pred, err = encodeTable(sp.Pred)
			}
			if err != nil {
				return nil, fmt.Errorf("item %q score %s: %w", it.ID, s.Name, err)
			}
		}
		w.Scores = append(w.Scores, ws)
	}
	return w, nil
}

func fromWire(w *wireRecord) (*item.Record, error) {
	rec := &item.Record{Seq: w.Seq, Cell: w.Cell, GoldDone: w.GoldDone, GoldError: w.GoldError,
		Status: w.Status, Error: w.Error, Resumed: w.Resumed}
	wi := w.Item
	rec.Item = item.Item{ID: wi.ID, Question: wi.Question, Gold: wi.Gold, DB: wi.DB, Invalid: wi.Invalid}
	if wi.Fields != nil {
		ft, err := decodeTable(wi.Fields)
		if err != nil || len(ft.Rows) != 1 || len(ft.Columns) != wi.NFields {
			return nil, fmt.Errorf("result: item %q: corrupt fields", wi.ID)
		}
		rec.Item.Fields = make([]item.Field, len(ft.Columns))
		for i, c := range ft.Columns {
			rec.Item.Fields[i] = item.Field{Name: c.Name, Value: ft.Rows[0][i]}
		}
	}
	var err error
	if rec.GoldResult, err = decodeTable(w.Gold); err != nil {
		return nil, fmt.Errorf("result: item %q gold: %w", wi.ID, err)
	}
	for _, ws := range w.Samples {
		s := &item.Sample{Index: ws.Index, Pending: ws.Pending}
		for _, wa := range ws.Attempts {
			a := &item.Attempt{Sample: wa.Sample, Index: wa.Index, Query: wa.Query, Raw: wa.Raw,
				Validated: wa.Validated, Valid: wa.Valid, Executed: wa.Executed, Match: wa.Match,
				ErrorClass: wa.ErrorClass, ErrorMessage: wa.ErrorMessage,
				SyntaxValid: wa.SyntaxValid, Safe: wa.Safe, SafetyReason: wa.SafetyReason,
				SchemaScore: fromFloatPtr(wa.SchemaScore), SchemaReasons: wa.SchemaReasons,
				PropertiesScore: fromFloatPtr(wa.PropertiesScore), PropertiesReasons: wa.PropertiesReasons,
				Cached: wa.Cached, InputTokens: wa.InputTokens, OutputTokens: wa.OutputTokens,
				Cost: float64(wa.Cost), Latency: time.Duration(wa.Latency), CacheHit: wa.CacheHit}
			if a.Result, err = decodeTable(wa.Result); err != nil {
				return nil, fmt.Errorf("result: item %q attempt %d: %w", wi.ID, wa.Index, err)
			}
			if wa.Timings != nil {
				a.Timings = make(map[string]time.Duration, len(wa.Timings))
				for k, d := range wa.Timings {
					a.Timings[k] = time.Duration(d)
				}
			}
			s.Attempts = append(s.Attempts, a)
		}
		rec.Samples = append(rec.Samples, s)
	}
	for _, s := range w.Scores {
		sc := item.Score{Name: s.Name, Value: float64(s.Value), Null: s.Null, Err: s.Err, Note: s.Note, Official: s.Official}
		if ws := s.Separation; ws != nil {
			sc.Separation = &item.Separation{DB: ws.DB, Own: ws.Own}
			if sc.Separation.Gold, err = decodeTable(ws.Gold); err == nil {
				sc.Separation.Pred, err = decodeTable(ws.Pred)
			}
			if err != nil {
				return nil, fmt.Errorf("result: item %q score %s: %w", wi.ID, s.Name, err)
			}
		}
		rec.Scores = append(rec.Scores, sc)
	}
	return rec, nil
}
