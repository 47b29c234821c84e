package metrics

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/item"
)

// TestSpiderESMConformance scores the 1,034 Spider dev items of
// ../shared/data/spider/expected/esm_per_item.jsonl through the registered
// metrics, as a score stage would, and compares every value with the
// reference's.
func TestSpiderESMConformance(t *testing.T) {
	data := filepath.Join(exSharedData(t), "spider")
	opts := Options{"tables": filepath.Join(data, "tables.json"), "databases": filepath.Join(data, "schema_only_db")}
	build := func(name string) ItemMetric {
		def, ok := Default.Lookup(name)
		if !ok {
			t.Fatalf("metric %s not registered", name)
		}
		m, err := def.NewItem(opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	esm, esm18, hard := build("spider_esm"), build("spider_esm_2018"), build("spider_hardness")

	f, err := os.Open(filepath.Join(data, "expected", "esm_per_item.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	levels := map[string]float64{"easy": 1, "medium": 2, "hard": 3, "extra": 4}
	var n, agree int
	var sum, sum18 float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var it struct {
			I        int     `json:"i"`
			DB       string  `json:"db_id"`
			Hardness string  `json:"hardness"`
			Gold     string  `json:"gold"`
			Pred     string  `json:"pred"`
			Current  float64 `json:"exact_current"`
			Rule2018 float64 `json:"exact_2018_rule"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		rec := &item.Record{Item: item.Item{ID: "x", Gold: it.Gold, DB: it.DB},
			Samples: []*item.Sample{{Attempts: []*item.Attempt{{Query: it.Pred}}}}}
		in := Input{Record: rec}
		a, b, h := esm.Score(context.Background(), in), esm18.Score(context.Background(), in), hard.Score(context.Background(), in)
		for _, s := range []item.Score{a, b, h} {
			if s.Err != "" {
				t.Fatalf("item %d %s: %s", it.I, s.Name, s.Err)
			}
		}
		n++
		sum += a.Value
		sum18 += b.Value
		if a.Value == it.Current && b.Value == it.Rule2018 && h.Value == levels[it.Hardness] && h.Note == it.Hardness {
			agree++
		} else {
			t.Errorf("item %d: got esm %v, esm_2018 %v, hardness %v %q; want %v, %v, %s", it.I, a.Value, b.Value, h.Value, h.Note, it.Current, it.Rule2018, it.Hardness)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d/%d items agree; spider_esm %d/%d, spider_esm_2018 %d/%d", agree, n, int(sum), n, int(sum18), n)
	if n != 1034 || int(sum) != 721 || int(sum18) != 750 {
		t.Errorf("totals: %d items, esm %v, esm_2018 %v; want 1034, 721 (0.697), 750 (0.725)", n, sum, sum18)
	}
}

func TestSpiderESMOptions(t *testing.T) {
	def, _ := Default.Lookup("spider_esm")
	if _, err := def.NewItem(Options{}); err == nil {
		t.Error("spider_esm without tables/databases accepted")
	}
	if _, err := def.NewItem(Options{"tables": 3.0, "databases": "x"}); err == nil {
		t.Error("numeric tables option accepted")
	}
	if _, err := def.NewItem(Options{"tables": filepath.Join(t.TempDir(), "missing.json"), "databases": "x"}); err == nil {
		t.Error("missing tables.json accepted")
	}
}

func TestSpiderESMItemCases(t *testing.T) {
	data := filepath.Join(exSharedData(t), "spider")
	def, _ := Default.Lookup("spider_esm")
	m, err := def.NewItem(Options{"tables": filepath.Join(data, "tables.json"), "databases": filepath.Join(data, "schema_only_db")})
	if err != nil {
		t.Fatal(err)
	}
	score := func(db, gold string, attempts ...string) item.Score {
		rec := &item.Record{Item: item.Item{ID: "x", Gold: gold, DB: db}}
		if attempts != nil {
			s := &item.Sample{}
			for _, q := range attempts {
				s.Attempts = append(s.Attempts, &item.Attempt{Query: q})
			}
			rec.Samples = []*item.Sample{s}
		}
		return m.Score(context.Background(), Input{Record: rec})
	}
	if s := score("concert_singer", "SELECT count(*) FROM singer", "select count(*) from singer as singer"); s.Value != 0 || s.Err != "" || s.Note == "" {
		t.Errorf("unparsable prediction: %+v, want 0 with a note", s)
	}
	if s := score("concert_singer", "SELECT count(*) FROM singer", "wrong", "select count(*) from singer"); s.Value != 1 {
		t.Errorf("final attempt: %+v, want 1", s)
	}
	if s := score("concert_singer", ""); !s.Null {
		t.Errorf("no gold: %+v, want null", s)
	}
	if s := score("concert_singer", "SELECT count(*) FROM singer"); s.Err == "" {
		t.Errorf("no attempt: %+v, want an error", s)
	}
	if s := score("no_such_db", "SELECT 1", "SELECT 1"); s.Err == "" {
		t.Errorf("unknown db: %+v, want an error", s)
	}
	if s := score("concert_singer", "SELECT nosuch FROM singer", "select 1"); s.Err == "" {
		t.Errorf("unparsable gold: %+v, want an error", s)
	}
}
