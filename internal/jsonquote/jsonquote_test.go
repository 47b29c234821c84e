package jsonquote

import (
	"bytes"
	"encoding/json"
	"testing"
)

var seeds = []string{"", "SELECT 1", `a "b" \c`, "x < 1 AND y > 2 & z", "\x00\x01\b\f\n\r\t\x1f\x7f",
	"é ü 中文", "\xff\xfe bad", "\u2028\u2029", "a\u2028b", "😀", "\xed\xa0\x80"}

// want is encoding/json's quoting of s.
func want(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		for _, html := range []bool{true, false} {
			if got, w := string(Append(nil, s, html)), want(t, s, html); got != w {
				t.Errorf("%q escapeHTML=%v: got %s, want %s", s, html, got, w)
			}
		}
		m, _ := json.Marshal(s)
		if got := string(Append(nil, s, true)); got != string(m) {
			t.Errorf("%q: got %s, json.Marshal %s", s, got, m)
		}
	}
}

// FuzzAppend: byte for byte encoding/json's, either way, after whatever
// the buffer already holds.
func FuzzAppend(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			if got, w := string(Append([]byte("prefix"), s, html)), "prefix"+want(t, s, html); got != w {
				t.Fatalf("%q escapeHTML=%v: got %s, want %s", s, html, got, w)
			}
		}
	})
}
