package table

import (
	"math"
	"reflect"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	in := &Table{
		Columns:   []Column{{"n", TypeInt}, {"x", TypeFloat}, {"s", TypeString}, {"b", TypeBool}, {"blob", TypeBytes}, {"any", TypeAny}},
		Rows:      [][]Value{{int64(-3), 0.1, "élan\x00\n", true, []byte{0, 255}, nil}, {int64(math.MaxInt64), math.Copysign(0, -1), "", false, []byte{}, "1.50"}},
		Truncated: true,
	}
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out Table
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, &out) {
		t.Errorf("round trip:\n got %#v\nwant %#v", out, *in)
	}
	if math.Signbit(out.Rows[1][1].(float64)) != true {
		t.Error("-0 lost its sign")
	}
	nan := &Table{Columns: []Column{{"x", TypeFloat}}, Rows: [][]Value{{math.NaN()}}}
	b, _ = nan.MarshalBinary()
	if err := out.UnmarshalBinary(b); err != nil || !math.IsNaN(out.Rows[0][0].(float64)) {
		t.Errorf("NaN: %v %v", out.Rows, err)
	}
	// Every truncation of a valid encoding is refused, never a panic.
	b, _ = in.MarshalBinary()
	for i := range len(b) {
		if err := new(Table).UnmarshalBinary(b[:i]); err == nil {
			t.Errorf("a %d-byte prefix decoded without error", i)
		}
	}
	if _, err := (&Table{Columns: []Column{{"x", TypeAny}}, Rows: [][]Value{{struct{}{}}}}).MarshalBinary(); err == nil {
		t.Error("a value that is not a normal form was encoded")
	}
}

// TestBinarySize: BinarySize is never less than the encoding's length
// (the stage cache sizes its entry buffer with it), for every kind of
// value at its longest, and not absurdly more.
func TestBinarySize(t *testing.T) {
	for _, tb := range []*Table{
		{},
		{Columns: []Column{{"n", TypeInt}}, Rows: [][]Value{{int64(math.MinInt64)}, {int64(math.MaxInt64)}, {int64(0)}}},
		{Columns: []Column{{"a long column name", TypeAny}, {"b", TypeAny}}, Rows: [][]Value{
			{"élan\x00", []byte{0, 1, 2}}, {nil, true}, {false, math.Inf(-1)}, {string(make([]byte, 300)), make([]byte, 20000)},
		}},
	} {
		b, err := tb.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if n := tb.BinarySize(); n < len(b) || n > 11*len(b)+64 {
			t.Errorf("BinarySize %d for an encoding of %d bytes", n, len(b))
		}
	}
}

func FuzzCodec(f *testing.F) {
	b, _ := (&Table{Columns: []Column{{"a", TypeInt}}, Rows: [][]Value{{int64(1)}, {"x"}}}).MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var tb Table
		if tb.UnmarshalBinary(data) != nil {
			return
		}
		again, err := tb.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var tb2 Table
		if err := tb2.UnmarshalBinary(again); err != nil || !reflect.DeepEqual(tb.Columns, tb2.Columns) || len(tb.Rows) != len(tb2.Rows) {
			t.Fatalf("re-encoding changed the table: %v", err)
		}
	})
}
