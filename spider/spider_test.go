package spider

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected tokens, parse outcomes and scores below were produced by process_sql.py
// (taoyds/spider b7b5b8c) with NLTK 3.8's NLTKWordTokenizer on one line.
func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // nil: error
	}{
		{"aliases and !=", "SELECT T1.name FROM singer AS T1 JOIN song AS T2 ON T1.singer_id = T2.singer_id WHERE T2.x != 5",
			[]string{"select", "t1.name", "from", "singer", "as", "t1", "join", "song", "as", "t2", "on", "t1.singer_id", "=", "t2.singer_id", "where", "t2.x", "!=", "5"}},
		{"apostrophe in single quotes", "select name from singer where name = 'O'Brien'", nil},
		{"apostrophe in double quotes", `select name from singer where name = "it's"`, nil},
		{"unspaced operators stay glued to values", "select a>=1, b<=2, c<>3, d!=4 from t",
			[]string{"select", "a", ">", "=1", ",", "b", "<", "=2", ",", "c", "<", ">", "3", ",", "d", "!", "=4", "from", "t"}},
		{"semicolon and star", "SELECT count(*) FROM singer;", []string{"select", "count", "(", "*", ")", "from", "singer", ";"}},
		{"= is not split", "select x from t where a=b", []string{"select", "x", "from", "t", "where", "a=b"}},
		{"comma before a digit is kept", "select x from t where y in (1,2)", []string{"select", "x", "from", "t", "where", "y", "in", "(", "1,2", ")"}},
		{"nltk contractions", "select name from singer cannot gonna wanna",
			[]string{"select", "name", "from", "singer", "can", "not", "gon", "na", "wan", "na"}},
		{"quoted values keep case, final period", `select 'a' , "B" from t.`, []string{"select", `"a"`, ",", `"B"`, "from", "t", "."}},
		{"leading =", "= select", []string{"=", "select"}},
		{"like value", "select name from singer where name like '%a%' or age between 1 and 2",
			[]string{"select", "name", "from", "singer", "where", "name", "like", `"%a%"`, "or", "age", "between", "1", "and", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tokenize(tc.in)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("want an error, got %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func concertSinger(t testing.TB) *Schema {
	t.Helper()
	data := sharedData(t)
	s, err := loadCatalog(t, data).Schema("concert_singer")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func col(c string) *ColUnit { return &ColUnit{Col: c} }

func TestParse(t *testing.T) {
	s := concertSinger(t)
	for _, tc := range []struct {
		name, in string
		want     *SQL // nil: parse error
	}{
		{"alias join", "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id WHERE T2.concert_id != 5",
			&SQL{
				TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}, {Type: "table_unit", Table: "__singer_in_concert__"}},
				FromConds: Condition{{Unit: &CondUnit{Op: 2, VU: ValUnit{C1: col("__singer.singer_id__")},
					V1: Value{Kind: ValCol, Col: ColUnit{Col: "__singer_in_concert.singer_id__"}}}}},
				Select: []SelItem{{VU: ValUnit{C1: col("__singer.name__")}}},
				Where:  Condition{{Unit: &CondUnit{Op: 7, VU: ValUnit{C1: col("__singer_in_concert.concert_id__")}, V1: Value{Kind: ValNum, Num: 5}}}},
			}},
		{"nested query value", "select name from singer where age > (select avg(age) from singer)",
			&SQL{
				TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}},
				Select:     []SelItem{{VU: ValUnit{C1: col("__singer.name__")}}},
				Where: Condition{{Unit: &CondUnit{Op: 3, VU: ValUnit{C1: col("__singer.age__")}, V1: Value{Kind: ValSQL, SQL: &SQL{
					TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}},
					Select:     []SelItem{{Agg: 5, VU: ValUnit{C1: col("__singer.age__")}}},
				}}}}},
			}},
		{"two conditions without a connector", `select name from singer where name = 'x' age > 3`,
			&SQL{
				TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}},
				Select:     []SelItem{{VU: ValUnit{C1: col("__singer.name__")}}},
				Where: Condition{
					{Unit: &CondUnit{Op: 2, VU: ValUnit{C1: col("__singer.name__")}, V1: Value{Kind: ValStr, Str: `"x"`}}},
					{Unit: &CondUnit{Op: 3, VU: ValUnit{C1: col("__singer.age__")}, V1: Value{Kind: ValNum, Num: 3}}},
				},
			}},
		{"trailing and", "select name from singer where age = 1 and",
			&SQL{
				TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}},
				Select:     []SelItem{{VU: ValUnit{C1: col("__singer.name__")}}},
				Where:      Condition{{Unit: &CondUnit{Op: 2, VU: ValUnit{C1: col("__singer.age__")}, V1: Value{Kind: ValNum, Num: 1}}}, {Conn: "and"}},
			}},
		{"count star", "SELECT count(*) FROM singer", &SQL{
			TableUnits: []TableUnit{{Type: "table_unit", Table: "__singer__"}},
			Select:     []SelItem{{Agg: 3, VU: ValUnit{C1: col("__all__")}}},
		}},
		{"glued >=", "select name from singer where age>=1", nil},
		{"comma join", "select T1.name from singer as T1, concert as T2", nil},
		{"alias equal to a table", "select name from singer as singer", nil},
		{"non-integer limit", "select name from singer order by age desc, name limit 1.5", nil},
		{"limit without value", "select name from singer limit", nil},
		{"trailing tokens", "select name from singer garbage tokens", nil},
		{"unknown column", "select name from singer where nosuchcol = 1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(s, tc.in)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("want a parse error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	s := concertSinger(t)
	for _, tc := range []struct {
		name, gold, pred string
		hardness         string
		current, rule18  bool
		predErr          bool
	}{
		{"wrong single table", "SELECT count(*) FROM singer", "select count(*) from stadium", "easy", false, true, false},
		{"values and case ignored", "SELECT name FROM singer WHERE age > 30", "select Name from singer where Age > 99", "easy", true, true, false},
		{"unparsable prediction is the empty query", "SELECT name FROM singer", "select name from singer as singer", "easy", false, false, true},
		{"column order ignored", "SELECT name , age FROM singer", "select age, name from singer", "medium", true, true, false},
		{"ON conditions are not compared", "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id",
			"SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T2.singer_id = T2.singer_id", "easy", true, true, false},
		{"distinct ignored", "SELECT DISTINCT country FROM singer", "select country from singer", "easy", true, true, false},
		{"nested hardness", "SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)", "select name from singer where age > (select avg(age) from singer)", "hard", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur, err := Score(s, tc.gold, tc.pred, RuleCurrent)
			if err != nil {
				t.Fatal(err)
			}
			old, err := Score(s, tc.gold, tc.pred, Rule2018)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{cur.Hardness, cur.Exact, old.Exact, cur.PredErr != nil}
			want := []any{tc.hardness, tc.current, tc.rule18, tc.predErr}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[hardness current 2018 predErr] (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Score(s, "SELECT nosuchcol FROM singer", "select 1", RuleCurrent); !errors.Is(err, ErrReference) {
		t.Errorf("an unparsable gold: want ErrReference, got %v", err)
	}
	if _, err := ExactMatch(EmptySQL(), EmptySQL(), "2019"); err == nil {
		t.Error("unknown rule accepted")
	}
}

func TestEmptyPartialTableIUEN(t *testing.T) {
	// A level without any item prints zeros; a level whose items have no
	// IUEN at all prints IUEN F1 = 1.000 (acc == rec == 0 → f1 := 1).
	s := concertSinger(t)
	ev := NewEvaluator(RuleCurrent, nil)
	if _, err := ev.Add(s, "SELECT count(*) FROM singer", "select count(*) from singer"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ev.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	var iuen string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "IUEN") {
			iuen = l
		}
	}
	want := "IUEN                 1.000                0.000                0.000                0.000                1.000               "
	if iuen != want {
		t.Errorf("last IUEN row:\n got %q\nwant %q", iuen, want)
	}
	if got := ev.Exact("all"); got != 1 {
		t.Errorf("exact(all) = %v, want 1", got)
	}
}

func BenchmarkExactMatch(b *testing.B) {
	data := sharedData(b)
	items := loadESM(b, data)
	cat := loadCatalog(b, data)
	type pair struct{ g, p *SQL }
	var pairs []pair
	for _, it := range items {
		s, err := cat.Schema(it.DB)
		if err != nil {
			b.Fatal(err)
		}
		g, err := Parse(s, it.Gold)
		if err != nil {
			b.Fatal(err)
		}
		p, err := Parse(s, it.Pred)
		if err != nil {
			p = EmptySQL()
		}
		gn, _ := Normalize(s, g)
		pn, _ := Normalize(s, p)
		pairs = append(pairs, pair{gn, pn})
	}
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pairs {
			if _, err := ExactMatch(p.g, p.p, RuleCurrent); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestForeignKeyMapsUnknownFile(t *testing.T) {
	if _, err := ForeignKeyMaps(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing tables.json accepted")
	}
}
