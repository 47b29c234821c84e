package sqltext

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLexRoundTrip(t *testing.T) {
	for _, s := range []string{
		"SELECT a FROM t WHERE b = 'it''s' -- c\n;",
		`SELECT "x""y", [z], ` + "`w`" + ` /* c */ FROM t`,
		"SELECT 'unterminated",
		"SELECT 1.5e3, .5, 12abc, x$y FROM t",
	} {
		var b strings.Builder
		for _, tok := range Lex(s) {
			b.WriteString(tok.Text)
		}
		if b.String() != s {
			t.Errorf("Lex(%q) round trip = %q", s, b.String())
		}
	}
}

func TestHasTopLevelOrderBy(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"SELECT a FROM t ORDER BY a", true},
		{"select a from t order\n  by a desc limit 1", true},
		{"SELECT a FROM t ORDER /* x */ BY a", true},
		{"SELECT a FROM t WHERE a IN (SELECT b FROM u ORDER BY b LIMIT 1)", false},
		{"SELECT a FROM t WHERE b = 'order by'", false},
		{`SELECT "order by" FROM t`, false},
		{"SELECT a FROM t -- ORDER BY a", false},
		{"WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", false},
		{"SELECT rank() OVER (ORDER BY a) FROM t", false},
		{"SELECT a FROM t UNION SELECT a FROM u ORDER BY 1", true},
		{"SELECT a FROM t; SELECT a FROM t ORDER BY a", false},
		{"SELECT a AS ordered FROM t GROUP BY a", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			if got := HasTopLevelOrderBy(tt.sql); got != tt.want {
				t.Errorf("HasTopLevelOrderBy(%q) = %v, want %v", tt.sql, got, tt.want)
			}
		})
	}
}

func TestContainsOrderBy(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"SELECT a FROM t ORDER BY a", true},
		{"SELECT a FROM t WHERE b = 'Order By'", true},
		{"SELECT a FROM (SELECT a FROM t order by a)", true},
		{"SELECT a FROM t ORDER  BY a", false},
		{"SELECT a FROM t ORDER\nBY a", false},
	}
	for _, tt := range tests {
		if got := ContainsOrderBy(tt.sql); got != tt.want {
			t.Errorf("ContainsOrderBy(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

func TestStripDistinct(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"select distinct", "SELECT DISTINCT a FROM t", "SELECT  a FROM t"},
		{"count distinct", "SELECT COUNT( DISTINCT x ) FROM t", "SELECT COUNT(  x ) FROM t"},
		{"count distinct no space", "SELECT COUNT(DISTINCT x) FROM t", "SELECT COUNT( x) FROM t"},
		{"distinct as function", "SELECT DISTINCT(a) FROM t", "SELECT (a) FROM t"},
		{"lower case", "select distinct a from t", "select  a from t"},
		{"string kept", "SELECT a FROM t WHERE b = 'distinct'", "SELECT a FROM t WHERE b = 'distinct'"},
		{"double quoted kept", `SELECT "distinct" FROM t`, `SELECT "distinct" FROM t`},
		{"comment kept", "SELECT a /* distinct */ FROM t", "SELECT a /* distinct */ FROM t"},
		{"line comment kept", "SELECT a -- distinct\nFROM t", "SELECT a -- distinct\nFROM t"},
		{"part of word kept", "SELECT distinct_a, adistinct FROM t", "SELECT distinct_a, adistinct FROM t"},
		{"dotted column removed", "SELECT t.distinct FROM t", "SELECT t. FROM t"},
		{"first statement only", "SELECT DISTINCT a FROM t;  SELECT b FROM u", "SELECT  a FROM t;  "},
		{"line comment after semicolon kept", "SELECT a; -- c\nSELECT b", "SELECT a; -- c\n"},
		{"block comment after semicolon starts next", "SELECT a; /* c */ SELECT b", "SELECT a; "},
		{"semicolon in parens", "SELECT (a;b) FROM t", "SELECT (a;b) FROM t"},
		{"backslash escape", `SELECT 'a\'distinct' FROM t`, `SELECT 'a\'distinct' FROM t`},
		{"unterminated quote", "SELECT 'x DISTINCT y", "SELECT 'x  y"},
		{"unterminated comment", "SELECT /* DISTINCT y", "SELECT /*  y"},
		{"empty", "", ""},
		{"spaces", "   ", "   "},
		{"long s kept", "SELECT DIſTINCT a FROM t", "SELECT DIſTINCT a FROM t"},
		{"mixed case", "SELECT DiStInCt a FROM t", "SELECT  a FROM t"},
		{"semicolon in string", "SELECT 'a;b' FROM t", "SELECT 'a;b' FROM t"},
		{"trailing semicolon", "SELECT a FROM t;", "SELECT a FROM t;"},
		{"trailing semicolon and spaces", "SELECT a FROM t ; \n\t", "SELECT a FROM t ; "},
		{"trailing semicolon and comment", "SELECT a FROM t; /* c */", "SELECT a FROM t; "},
		{"two semicolons", "SELECT a FROM t;;", "SELECT a FROM t;"},
		{"second statement dropped", "SELECT a FROM t; SELECT b", "SELECT a FROM t; "},
		// Computed by sqlparse 0.4.2's remove_distinct, as the cases of
		// TestStripDistinctMatchesSqlparse.
		{"line break after semicolon not kept", "SELECT a FROM t;\n", "SELECT a FROM t;"},
		{"spaces up to the line break kept", "SELECT a; \t\r\n x", "SELECT a; \t"},
		{"name after a dot ends before $", "t.distinct$x", "t.$x"},
		{"command kept", `\distinct`, `\distinct`},
		{"hash name kept", "#distinct", "#distinct"},
		{"float then word", "12e5distinct", "12e5"},
		{"dollar quoted kept", "SELECT $$distinct$$", "SELECT $$distinct$$"},
		{"placeholder with long s", "%ſdistinct", "%ſ"},
		{"operator run before dashes", "SELECT a FROM t /--x;y", "SELECT a FROM t /--x;"},
		{"doubled quote at the end", "';'distinCt'", "';''"},
		{"not idempotent, as remove_distinct", "&DiStInCt--;IF", "&--;IF"},
		{"not idempotent, second pass", "&--;IF", "&--;"},
		{"dollar tags by lower case: σ is not ς", "SELECT $aσ$ distinct $aς$ distinct", "SELECT $aσ$  $aς$ "},
		{"dollar tags by lower case: µ is not μ", "SELECT $aµ$ distinct $aμ$ distinct", "SELECT $aµ$  $aμ$ "},
		{"dollar tags by lower case: İ is i", "SELECT $İ$ distinct $i$ distinct", "SELECT $İ$ distinct $i$ "},
		{"dollar tags by lower case: Kelvin sign is k", "SELECT $\u212a$ distinct $k$ distinct", "SELECT $\u212a$ distinct $k$ "},
		{"a letter after Unicode 14 ends the word", "SELECT distinct\U00031350 FROM t", "SELECT \U00031350 FROM t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, StripDistinct(tt.in)); diff != "" {
				t.Errorf("StripDistinct(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestStripDistinctMatchesSqlparse holds StripDistinct to what sqlparse
// 0.4.2's remove_distinct returns for 2,000 random texts that reach every
// rule of its lexer and statement splitter (testdata/sqlparse_cases.py,
// which wrote testdata/sqlparse_cases.jsonl).
// SQLPARSE_CASES names another file of such cases (the script's other
// modes write them).
func TestStripDistinctMatchesSqlparse(t *testing.T) {
	path, least := "testdata/sqlparse_cases.jsonl", 2000
	if p := os.Getenv("SQLPARSE_CASES"); p != "" {
		path, least = p, 1
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, bad := 0, 0
	for sc.Scan() {
		var c struct{ In, Want string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		if got := StripDistinct(c.In); got != c.Want {
			if bad++; bad <= 10 {
				t.Errorf("StripDistinct(%q) = %q, sqlparse %q", c.In, got, c.Want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < least || bad > 0 {
		t.Errorf("%d of %d cases differ from sqlparse", bad, n)
	}
}

// TestPhraseHeads holds phraseHead, which gates the keyword phrases, to
// their lists.
func TestPhraseHeads(t *testing.T) {
	rules := [][][]string{phrasesIn, phrasesKeyword, phrasesLike}
	for _, g := range phrasesAfter {
		rules = append(rules, g.phrases)
	}
	want := map[string]bool{"at": true, "with": true} // TZCast
	for _, rule := range rules {
		for _, p := range rule {
			want[p[0]] = true
		}
	}
	for w := range want {
		if !phraseHead(w) {
			t.Errorf("phraseHead(%q) = false: the phrases starting with it are never tried", w)
		}
	}
	for _, w := range []string{"begin", "declare", "if", "for", "while", "case", "end"} {
		want[w] = true // word's upperIs
	}
	for w := range want {
		for _, v := range []string{w, strings.ToUpper(w), "ſ" + w[1:], "ı" + w[1:], "İ" + w[1:], "\u212a" + w[1:]} {
			if foldsTo(v, w) && !headStart[v[0]] {
				t.Errorf("headStart[%q] = false: %q is never looked up", v[0], v)
			}
		}
	}
	for _, w := range []string{"select", "where", "distinct", "i", ""} {
		if phraseHead(w) {
			t.Errorf("phraseHead(%q) = true", w)
		}
	}
}

// TestAfter14 fails when Go's Unicode version changes: after14 lists the
// letters and numbers Go's Unicode has and Python 3.11's 14.0 does not
// (made by comparing every code point's \w and \d in /usr/bin/python3
// with unicode.IsLetter, IsNumber and IsDigit), and must be made again.
func TestAfter14(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Fatalf("unicode.Version is %s: make sqltext's after14 again for it (see its comment)", unicode.Version)
	}
	for r, want := range map[rune]bool{'a': true, 'é': true, 'ж': true, '٣': true, 0x31350: false, 0x11f50: false, '$': false} {
		if got := pyWord(r); got != want {
			t.Errorf("pyWord(%U) = %v, want %v", r, got, want)
		}
	}
	if pyDigit(0x11f50) || !pyDigit('٣') {
		t.Errorf("pyDigit: Kawi digit zero is not a digit to Python 3.11, Arabic-Indic three is")
	}
}

// foldsTo reports whether v folds to w as foldPrefix folds.
func foldsTo(v, w string) bool { return foldPrefix(v, 0, w) == len(v) }

func TestPostprocess(t *testing.T) {
	got := Postprocess("a > = 1 AND b < = 2 AND c ! = 3 AND d = 'x > = y'")
	want := "a >= 1 AND b <= 2 AND c != 3 AND d = 'x >= y'"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Postprocess (-want +got):\n%s", diff)
	}
}

func TestReplaceCurYear(t *testing.T) {
	got := ReplaceCurYear("SELECT a FROM t WHERE y = year ( curdate ( ) ) AND 1")
	want := "SELECT a FROM t WHERE y = 2020AND 1"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReplaceCurYear (-want +got):\n%s", diff)
	}
}

func TestReadOnly(t *testing.T) {
	tests := []struct {
		sql    string
		ok     bool
		reason string
	}{
		{"SELECT 1", true, ""},
		{"  select a from t;  ", true, ""},
		{"-- hi\nSELECT a FROM t; -- done", true, ""},
		{"/* c */ SELECT a FROM t;;", true, ""},
		{"VALUES (1), (2)", true, ""},
		{"WITH c AS (SELECT 1) SELECT * FROM c", true, ""},
		{"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 5) SELECT n FROM c", true, ""},
		{"SELECT ';' FROM t", true, ""},
		{"SELECT a FROM t WHERE b = 'x; DROP TABLE t'", true, ""},
		{"SELECT update_time, deleted FROM t", true, ""},
		{"", false, "the query is empty"},
		{" ; -- nothing", false, "the query is empty"},
		{"SELECT 1; SELECT 2", false, "statement 2 of 2: multiple statements are not allowed"},
		{"SELECT 1; DROP TABLE t; SELECT 2", false, "statement 2 of 3: multiple statements are not allowed"},
		{"DELETE FROM t", false, "DELETE is not a read-only query"},
		{"insert into t values (1)", false, "INSERT is not a read-only query"},
		{"UPDATE t SET a = 1", false, "UPDATE is not a read-only query"},
		{"DROP TABLE t", false, "DROP is not a read-only query"},
		{"CREATE TABLE t (a)", false, "CREATE is not a read-only query"},
		{"ALTER TABLE t ADD b", false, "ALTER is not a read-only query"},
		{"ATTACH 'x.db' AS x", false, "ATTACH is not a read-only query"},
		{"PRAGMA writable_schema = 1", false, "PRAGMA is not a read-only query"},
		{"WITH c AS (SELECT 1) DELETE FROM t", false, "WITH … DELETE is not a read-only query"},
		{"WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", false, "WITH … INSERT is not a read-only query"},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", false, "DELETE inside parentheses modifies data; only read-only queries are allowed"},
		{"SELECT * INTO u FROM t", false, "SELECT … INTO writes a table; only read-only queries are allowed"},
		{"(SELECT 1)", false, `the query starts with "(", not with a keyword such as SELECT`},
		{"WITH c AS (SELECT 1)", false, "WITH has no main SELECT statement"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			ok, reason := ReadOnly(tt.sql)
			if ok != tt.ok || reason != tt.reason {
				t.Errorf("ReadOnly(%q) = %v, %q; want %v, %q", tt.sql, ok, reason, tt.ok, tt.reason)
			}
		})
	}
}

func FuzzSQLText(f *testing.F) {
	for _, s := range []string{
		"SELECT DISTINCT a FROM t ORDER BY a",
		"SELECT COUNT(DISTINCT x) FROM t WHERE y = 'distinct' -- distinct\n",
		`SELECT "a""b", [c], ` + "`d`" + ` FROM t; DELETE FROM t`,
		"WITH c AS (SELECT 1) SELECT * FROM c",
		"SELECT 'a\\'distinct' /* x",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for _, tok := range Lex(s) {
			b.WriteString(tok.Text)
		}
		if b.String() != s {
			t.Fatalf("Lex does not round-trip %q", s)
		}
		HasTopLevelOrderBy(s)
		ReadOnly(s)
		// remove_distinct is not idempotent (dropping a word can make
		// "&--" one operator: TestStripDistinct), so StripDistinct is held
		// to sqlparse by TestStripDistinctMatchesSqlparse; here, its fast
		// path to its lexing path.
		if got, lexed := StripDistinct(s), stripDistinct(s); got != lexed {
			t.Fatalf("StripDistinct(%q) = %q without lexing, %q lexed", s, got, lexed)
		}
	})
}

func TestEmpty(t *testing.T) {
	for _, s := range []string{"", "  ", "-- nothing", "/* x */ ;", ";;"} {
		if !Empty(s) {
			t.Errorf("Empty(%q) = false", s)
		}
	}
	for _, s := range []string{"SELECT 1", "-- c\nx", "'str'"} {
		if Empty(s) {
			t.Errorf("Empty(%q) = true", s)
		}
	}
}

func TestReplaceCurYearFastPath(t *testing.T) {
	for _, s := range []string{
		"SELECT a FROM t", "", "SELECT CurDate()", "select year(curdate()) , 1", "YEAR ( CURDATE ( ) )x",
		"SELECT year(curdat())", "YEAR(CURDATE())YEAR(curdate())", "curdatecurdate", "xCURDATE",
	} {
		want := curYear().ReplaceAllString(s, "2020")
		if got := ReplaceCurYear(s); got != want {
			t.Errorf("ReplaceCurYear(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestTokensAndReadOnlyTokens: AppendTokens appends Lex's tokens;
// ReadOnlyTokens on them (a word renamed included) is ReadOnly of the
// text they spell.
func TestTokensAndReadOnlyTokens(t *testing.T) {
	for _, s := range []string{"SELECT 1", "SELECT (replace(a, 'x', 'y')) FROM t", "DELETE FROM t", "WITH c AS (SELECT 1) SELECT * FROM c; ", ""} {
		var it []Token
		for tok := range Tokens(s) {
			it = append(it, tok)
		}
		if diff := cmp.Diff(Lex(s), it, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Tokens(%q) (-Lex +got):\n%s", s, diff)
		}
		buf := AppendTokens([]Token{{Text: "keep"}}, s)
		if diff := cmp.Diff(Lex(s), buf[1:], cmpopts.EquateEmpty()); diff != "" || buf[0].Text != "keep" {
			t.Errorf("AppendTokens(%q) (-Lex +got):\n%s", s, diff)
		}
		ok1, r1 := ReadOnly(s)
		if ok2, r2 := ReadOnlyTokens(buf[1:]); ok1 != ok2 || r1 != r2 {
			t.Errorf("ReadOnlyTokens(%q) = %v %q, ReadOnly %v %q", s, ok2, r2, ok1, r1)
		}
	}
	toks := Lex("SELECT (replace(a, 'x', 'y')) FROM t")
	for i := range toks {
		if toks[i].IsWord("replace") {
			toks[i].Text = "fn_" + toks[i].Text
		}
	}
	if ok, reason := ReadOnlyTokens(toks); !ok {
		t.Errorf("renamed writer word: %s", reason)
	}
}

// TestNoAllocs: the checks that keep no token do not allocate.
func TestNoAllocs(t *testing.T) {
	q := `WITH bench_p1 AS (SELECT 1) SELECT DISTINCT c.name FROM city AS c WHERE c.state = "texas" ORDER BY c.population`
	for name, f := range map[string]func(){
		"Empty":                           func() { Empty(q) },
		"ReadOnly":                        func() { ReadOnly(q) },
		"HasTopLevelOrderBy":              func() { HasTopLevelOrderBy(q) },
		"ReplaceCurYear":                  func() { ReplaceCurYear(q) },
		"StripDistinct, nothing to strip": func() { StripDistinct("SELECT a FROM t") },
		"Tokens": func() {
			for range Tokens(q) {
			}
		},
	} {
		if n := testing.AllocsPerRun(20, f); n > 0 && !raceEnabled {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

// wordEndRef is wordEnd as it was before its ASCII table: the definition
// the table must keep.
func wordEndRef(s string, j int) int {
	for j < len(s) {
		r, size := decodeRune(s, j)
		if !isWordRune(r) && r != '$' && r != '#' {
			break
		}
		j += size
	}
	return j
}

func TestWordEndTable(t *testing.T) {
	for _, s := range []string{
		"abc_12$x#y z", "état.col", "naïve)", "a\u0301b c", "x\xffy", "日本語 t", "a-b", "ab\u00a0c", "x٣y", "",
	} {
		for j := range len(s) + 1 {
			if got, want := wordEnd(s, j), wordEndRef(s, j); got != want {
				t.Errorf("wordEnd(%q, %d) = %d, want %d", s, j, got, want)
			}
		}
	}
	for c := range 256 {
		s := "a" + string([]byte{byte(c)}) + "b"
		if got, want := wordEnd(s, 0), wordEndRef(s, 0); got != want {
			t.Errorf("wordEnd(%q, 0) = %d, want %d", s, got, want)
		}
	}
}

func FuzzWordEnd(f *testing.F) {
	f.Add("SELECT état_1$ FROM t#x")
	f.Fuzz(func(t *testing.T, s string) {
		for j := range len(s) + 1 {
			if got, want := wordEnd(s, j), wordEndRef(s, j); got != want {
				t.Fatalf("wordEnd(%q, %d) = %d, want %d", s, j, got, want)
			}
		}
	})
}

// benchQueries are GeoQuery-like texts (spider/GeoQuery style: upper-case
// keywords, aliases, nested selects, string literals).
var benchQueries = []string{
	`SELECT CITYalias0.CITY_NAME FROM CITY AS CITYalias0 WHERE CITYalias0.POPULATION = ( SELECT MAX( CITYalias1.POPULATION ) FROM CITY AS CITYalias1 WHERE CITYalias1.STATE_NAME = "texas" ) AND CITYalias0.STATE_NAME = "texas" ;`,
	`SELECT DISTINCT RIVERalias0.RIVER_NAME FROM RIVER AS RIVERalias0 WHERE RIVERalias0.TRAVERSE IN ( SELECT STATEalias0.STATE_NAME FROM STATE AS STATEalias0 WHERE STATEalias0.AREA > 100000 ) ;`,
	`select count(*) from highlow where lowest_elevation < 0 and state_name <> 'california'`,
	`SELECT T1.name, avg(T2.stars) FROM restaurant AS T1 JOIN review AS T2 ON T1.id = T2.rid GROUP BY T1.name ORDER BY 2 DESC LIMIT 10`,
}

func BenchmarkLex(b *testing.B) {
	n := 0
	for _, q := range benchQueries {
		n += len(q)
	}
	b.SetBytes(int64(n))
	var toks []Token
	for b.Loop() {
		for _, q := range benchQueries {
			toks = appendTokens(toks[:0], q)
		}
	}
}

// BenchmarkStripDistinct has StripDistinct (lexing only text that may
// change) against its lexing path alone, over benchQueries (one holds
// DISTINCT).
func BenchmarkStripDistinct(b *testing.B) {
	for _, f := range []struct {
		name string
		f    func(string) string
	}{{"StripDistinct", StripDistinct}, {"lexed", stripDistinct}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				for _, q := range benchQueries {
					f.f(q)
				}
			}
		})
	}
}

// BenchmarkStripDistinctAdversarial lexes 200 KB texts built to make a
// lexer search the rest of the text at every token (sqlparse's own does:
// its time grows with the square of their length): unique dollar tags
// that never close, unclosed comments, lone quotes. Linear: tens of
// milliseconds each (the dollar tags took 6.4 s before their closings
// were indexed).
func BenchmarkStripDistinctAdversarial(b *testing.B) {
	var tags strings.Builder
	for i := 0; tags.Len() < 200_000; i++ {
		fmt.Fprintf(&tags, " $t%d$", i)
	}
	for _, c := range []struct{ name, text string }{
		{"dollar tags", "SELECT distinct" + tags.String()},
		{"unclosed comments", "SELECT distinct " + strings.Repeat("/* ", 200_000/3)},
		{"lone quotes", "SELECT distinct " + strings.Repeat("' a ", 200_000/4)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				StripDistinct(c.text)
			}
		})
	}
}

func BenchmarkReadOnly(b *testing.B) {
	for b.Loop() {
		for _, q := range benchQueries {
			ReadOnly(q)
		}
	}
}
