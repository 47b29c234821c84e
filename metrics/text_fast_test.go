package metrics

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// kgSpecialRE is kg-axel's special-character pattern as a regexp, the
// reference replaceSpecials is held to.
var kgSpecialRE = regexp.MustCompile(`\(|\)|:|\{|\}|->|<-|-|\[|\]|,|\.|\*|/|<|>`)

// formatQueryKeywordsRef is FormatQueryKeywords as it was written first
// (regexp, FieldsFunc + Join, rune-wise keyword scan).
func formatQueryKeywordsRef(q string, removeSpecial bool) string {
	var s string
	if removeSpecial {
		s = kgSpecialRE.ReplaceAllString(q, " ")
	} else {
		s = kgSpecialRE.ReplaceAllString(q, " $0 ")
	}
	return upperKeywordsRunes(strings.Join(strings.FieldsFunc(s, isPySpace), " "))
}

func formatQueryRef(q string) string {
	return strings.Join(strings.FieldsFunc(kgSpecialRE.ReplaceAllString(q, " $0 "), isPySpace), " ")
}

// TestFormatQueryFast holds the regexp-free formatting to the reference on
// fixed and random texts: ASCII, keywords in every case, specials, Unicode
// spaces and case folds (ſ, ı, İ, K), invalid UTF-8.
func TestFormatQueryFast(t *testing.T) {
	cases := []string{
		"", " ", "SELECT 1", "select count(*) from t where a->b and c<-d",
		"MATCH (n:Person)-[:KNOWS]->(m) RETURN n.name, m.name ORDER BY n.name LIMIT 5",
		"match (n) where n.x in [1,2] return distinct tofloat(n.y) as y order  by y desc",
		"ordering inside insert_x _in in1 IN; OR(AND)", "order\tby\nx", "ORDER  BY x",
		"\u00a0MATCH\u2003(n)\u001c return n", "ſet ıs İn KASE", "\xff\xfeMATCH \xc3(", "a<->b<--c-->d",
		"retuRN NULL is not null", "withwith with_ with", "caseCASE case", "a...b,,c**d//e",
	}
	alphabet := []string{"match", "MATCH", "Order", "order by", "ORDER BY", "in", "IN", "as", "x", "_", "1",
		" ", "  ", "\t", "\n", "(", ")", ":", "{", "}", "->", "<-", "-", "[", "]", ",", ".", "*", "/", "<", ">",
		"ſ", "ı", "İ", "\u212a", "é", "\u00a0", "\u2003", "\x1d", "\xff", "\xc3", "toFloat", "size", "SIZE", "when", "ends"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, q := range cases {
		for _, rm := range []bool{false, true} {
			if got, want := FormatQueryKeywords(q, rm), formatQueryKeywordsRef(q, rm); got != want {
				t.Fatalf("FormatQueryKeywords(%q, %v) = %q, want %q", q, rm, got, want)
			}
		}
		if got, want := FormatQuery(q), formatQueryRef(q); got != want {
			t.Fatalf("FormatQuery(%q) = %q, want %q", q, got, want)
		}
		if utf8.ValidString(q) {
			if got, want := upperKeywords(q), upperKeywordsRunes(q); got != want {
				t.Fatalf("upperKeywords(%q) = %q, want %q", q, got, want)
			}
		}
	}
}

func FuzzFormatQueryFast(f *testing.F) {
	f.Add("MATCH (n)-[:R]->(m) RETURN n ORDER BY n.x", false)
	f.Fuzz(func(t *testing.T, q string, rm bool) {
		if got, want := FormatQueryKeywords(q, rm), formatQueryKeywordsRef(q, rm); got != want {
			t.Fatalf("FormatQueryKeywords(%q, %v) = %q, want %q", q, rm, got, want)
		}
		if got, want := upperKeywords(q), upperKeywordsRunes(q); got != want {
			t.Fatalf("upperKeywords(%q) = %q, want %q", q, got, want)
		}
	})
}

func BenchmarkQueryJaroWinkler(b *testing.B) {
	gold := "SELECT name FROM singer WHERE age > 30 ORDER BY name"
	pred := "select name from singer where age>30 order by name desc"
	for b.Loop() {
		QueryJaroWinkler(gold, pred, FormatKGAxel)
	}
}

func BenchmarkQueryJaroWinklerRef(b *testing.B) {
	gold := "SELECT name FROM singer WHERE age > 30 ORDER BY name"
	pred := "select name from singer where age>30 order by name desc"
	for b.Loop() {
		JaroWinkler(formatQueryKeywordsRef(gold, false), formatQueryKeywordsRef(pred, false))
	}
}
