package dataset

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

func TestFastMatchesSlow(t *testing.T) {
	cases := []string{
		`{}`, `{"a":1}`, `{"a":1.5,"b":"x\"y\u00e9","c":[1,2.5,"s",{"k":null}],"d":{"z":1,"y":[true]},"e":true,"f":false,"g":null}`,
		` { "a" : -12 , "b":1e3, "c":"", "d" : 9223372036854775808 } `, `{"a":1,"a":2}`, `{"é":"\\"}`,
		`{"a":"\b\f\n\r\t\/\\ \u0041\u00e9\u20ac \ud83d\ude00 \ud800 x"}`, `{"q":"SELECT * FROM t WHERE s = \"texas\""}`,
	}
	for _, p := range []string{"../../shared/data/geoquery/conformance/items.jsonl", "../../shared/data/geoquery/conformance/verdicts.jsonl"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			cases = append(cases, sc.Text())
		}
		f.Close()
	}
	for _, c := range cases {
		a, errA := decodeObjectSlow([]byte(c))
		b, errB := decodeObjectFast([]byte(c))
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nslow %#v %v\nfast %#v %v", c, a, errA, b, errB)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":1`, `"x"`} {
		_, errA := decodeObjectSlow([]byte(bad))
		_, errB := decodeObjectFast([]byte(bad))
		if (errA == nil) != (errB == nil) {
			t.Errorf("%s: slow %v fast %v", bad, errA, errB)
		}
	}
}

// FuzzFastMatchesSlow: the one-pass decoder must agree with encoding/json's
// token decoder on every input, valid or not.
func FuzzFastMatchesSlow(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,{"b":"\u00e9"}],"c":-1.5e3}`, `{"a":"x\"y"}`, `[1]`, `{"a":}`, `{"a":"\t\u0041\udc00\ud83d\ude00"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		a, errA := decodeObjectSlow([]byte(c))
		b, errB := decodeObjectFast([]byte(c))
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q: slow err %v, fast err %v", c, errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("%q:\nslow %#v\nfast %#v", c, a, b)
		}
	})
}

// TestUnescapeFastPath: escapes outside the surrogate range are decoded by
// unescape itself (not handed to encoding/json), to the same text.
func TestUnescapeFastPath(t *testing.T) {
	for _, body := range []string{`\"texas\"`, `a\\b\/c`, `\b\f\n\r\t`, `\u0000\u0041\u00E9\u20ac\uFFFF`, `é\u00e9é`, `\u2028`} {
		got, ok := unescape([]byte(body))
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if !ok || got != want {
			t.Errorf("unescape(%s) = %q, %v; want %q, true", body, got, ok, want)
		}
	}
	for _, body := range []string{`\ud83d\ude00`, `\ud800`, `x\uDC00`} {
		if _, ok := unescape([]byte(body)); ok {
			t.Errorf("unescape(%s): a surrogate must go to encoding/json", body)
		}
	}
}

// BenchmarkDecodeObject decodes a GeoQuery item line (its gold quotes a
// string, so it holds \" escapes) and a line without escapes.
func BenchmarkDecodeObject(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"escaped", `{"id": "geo-17-3", "question": "what is the capital of the state with the largest population", "gold": "SELECT CAPITAL FROM STATE WHERE POPULATION = (SELECT MAX(POPULATION) FROM STATE) AND STATE_NAME <> \"alaska\"", "db": "geography", "difficulty": "medium"}`},
		{"plain", `{"id": "geo-17-3", "question": "what is the capital of the state with the largest population", "gold": "SELECT CAPITAL FROM STATE WHERE POPULATION = (SELECT MAX(POPULATION) FROM STATE)", "db": "geography", "difficulty": "medium"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := decodeObjectFast(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValidObject: what validObject accepts json.Valid accepts, and the
// common dataset lines are accepted by validObject itself (not left to
// json.Valid).
func TestValidObject(t *testing.T) {
	for _, c := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":0,"c":1E9,"d":-12}`, `{"a":"x\"y\u00e9\\/\b\f\n\r\t"}`,
		`{"a":true,"b":false,"c":null}`, `{"a":[1,{"b":"c"}],"d":{"e":[]}}`, "{\"a\":\"\xff\"}\n", `{"é":"ü"}`,
	} {
		if !validObject([]byte(c)) {
			t.Errorf("validObject(%s) = false, want true", c)
		}
		if !json.Valid([]byte(c)) {
			t.Fatalf("test case %s is not valid JSON", c)
		}
	}
	for _, c := range []string{
		``, ` `, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}x`, `{"a":1}{}`, `{a:1}`, `{"a":01}`, `{"a":1.}`,
		`{"a":.5}`, `{"a":+1}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":"\x"}`, `{"a":"\u12G4"}`,
		`{"a":"\u12"}`, "{\"a\":\"\n\"}", `{"a":[1,]}`, `{"a":{"b"}}`, `{"a":[}`, `{"a":"x}`, `{"a" 1}`, `{"a":1 "b":2}`,
	} {
		if validObject([]byte(c)) {
			t.Errorf("validObject(%q) = true, want false", c)
		}
	}
}

// FuzzValidObject: validObject never accepts what json.Valid rejects.
func FuzzValidObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,{"b":"\u00e9"}],"c":-1.5e3}`, `{"a":"x\"y"}`, `{"a":01}`, `{"a":1.}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if validObject([]byte(c)) && !json.Valid([]byte(c)) {
			t.Fatalf("validObject accepts %q, json.Valid does not", c)
		}
	})
}
