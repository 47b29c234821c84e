package cluster

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

func fullRecord() *item.Record {
	t, f := true, false
	half, zero := 0.5, 0.0
	res := &table.Table{Columns: []table.Column{{Name: "a", Type: table.TypeInt}, {Name: "b", Type: table.TypeAny}},
		Rows: [][]table.Value{{int64(1), "x"}, {nil, 2.5}, {int64(-3), []byte{0, 1}}, {int64(4), true}}, Truncated: true}
	return &item.Record{
		Seq: 7, Cell: 2,
		Item: item.Item{ID: "q7", Question: "how many?", Gold: "SELECT 1", DB: "shop",
			Fields:  []item.Field{{Name: "difficulty", Value: "easy"}, {Name: "n", Value: int64(3)}, {Name: "w", Value: 1.25}, {Name: "none", Value: nil}, {Name: "ok", Value: false}},
			Invalid: ""},
		GoldDone: true, GoldResult: res, GoldError: "gold broke",
		Samples: []*item.Sample{{Index: 0, Pending: []string{"SELECT 2"}, Attempts: []*item.Attempt{{
			Sample: 0, Index: 1, Query: "SELECT 1", Raw: "```SELECT 1```",
			Validated: true, Valid: true, Executed: true, Result: res, Match: &f,
			ErrorClass: item.ClassSchema, ErrorMessage: "no such column",
			SyntaxValid: &t, Safe: &f, SafetyReason: "DROP",
			SchemaScore: &half, SchemaReasons: []string{"x"}, PropertiesScore: &zero, PropertiesReasons: []string{"p"},
			Timings: map[string]time.Duration{"execute": 3 * time.Millisecond}, Cached: true,
			InputTokens: 10, OutputTokens: 20, Cost: 0.1 + 0.2, Latency: time.Second, CacheHit: true,
		}}}},
		Scores: []item.Score{{Name: "ex", Value: 1}, {Name: "f1", Value: math.NaN(), Null: true, Err: "judge", Note: "why", Official: true,
			Separation: &item.Separation{DB: "shop_2", Gold: res, Pred: nil}}, {Name: "suite", Separation: &item.Separation{DB: "shop", Own: true}},
			{Name: "inf", Value: math.Inf(-1)}},
		Status: "ok", Error: "e", Resumed: true,
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  *item.Record
	}{
		{"full", fullRecord()},
		{"empty", &item.Record{Item: item.Item{ID: "x"}}},
		{"invalid", &item.Record{Seq: 3, Item: item.Item{ID: "q.jsonl:4", Invalid: "q.jsonl:4: broken"}, Status: "error", Error: "q.jsonl:4: broken"}},
		{"empty fields", &item.Record{Item: item.Item{ID: "x", Fields: []item.Field{}}, Samples: []*item.Sample{{Attempts: []*item.Attempt{{}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeRecord(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.rec, got, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWireCoversEveryField fails when a field is added to what a record
// holds: wire.go must carry it (and this list be updated).
func TestWireCoversEveryField(t *testing.T) {
	want := map[reflect.Type]int{
		reflect.TypeFor[item.Record]():     11,
		reflect.TypeFor[item.Item]():       6,
		reflect.TypeFor[item.Field]():      2,
		reflect.TypeFor[item.Sample]():     3,
		reflect.TypeFor[item.Attempt]():    25,
		reflect.TypeFor[item.Score]():      7,
		reflect.TypeFor[item.Separation](): 4,
		reflect.TypeFor[table.Table]():     3,
	}
	for typ, n := range want {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, cluster/wire.go carries %d: teach toWire/fromWire the new one", typ, typ.NumField(), n)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("garbage"), {0xff, 0, 1}} {
		if _, err := DecodeRecord(b); err == nil {
			t.Errorf("DecodeRecord(%q): no error", b)
		}
	}
}
