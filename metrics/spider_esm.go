package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/spider"
)

// Spider exact-set-match (package spider): spider_esm (today's
// evaluation.py), spider_esm_2018 (the 2018 rule behind the published
// eval_result_example.txt) and spider_hardness (the gold's hardness level).
// All three need the options tables (path of Spider's tables.json, for the
// foreign keys) and databases (the directory holding <db>/<db>.sqlite or
// <db>.sqlite, read for table and column names only).

var (
	spiderESMInfo = Info{
		Name:        "spider_esm",
		Description: "Spider exact-set-match: both queries parsed into Spider's SQL structure, values and DISTINCT ignored, foreign-key columns folded; 1 when every clause component and the FROM tables match.",
		Reference:   "taoyds/spider evaluation.py eval_exact_match (--etype match), current rule",
		Inputs:      "gold query, sample 0's final query, item db (schema from <databases>/<db>/<db>.sqlite, foreign keys from tables.json)",
		Range:       "{0,1}",
	}
	spiderESM2018Info = Info{
		Name:        "spider_esm_2018",
		Description: "Spider exact-set-match under the 2018 rule: the FROM tables are compared only when the gold has more than one table unit (reproduces the published eval_result_example.txt).",
		Reference:   "taoyds/spider evaluation.py eval_exact_match as of the initial commit 62399af (len(table_units) > 1)",
		Inputs:      spiderESMInfo.Inputs,
		Range:       "{0,1}",
	}
	spiderHardnessInfo = Info{
		Name:        "spider_hardness",
		Description: "Spider hardness of the gold query as a level number: 1 easy, 2 medium, 3 hard, 4 extra (the name is in the score's note).",
		Reference:   "taoyds/spider evaluation.py Evaluator.eval_hardness",
		Inputs:      "gold query, item db (schema as for spider_esm)",
		Range:       "{1,2,3,4}",
	}
)

// spiderOptions are the option names the three metrics accept.
var spiderOptions = []string{"tables", "databases"}

func init() {
	Register(Def{Info: spiderESMInfo, Options: spiderOptions, NewItem: func(o Options) (ItemMetric, error) {
		return newSpiderMetric(spiderESMInfo, o, spider.RuleCurrent)
	}})
	Register(Def{Info: spiderESM2018Info, Options: spiderOptions, NewItem: func(o Options) (ItemMetric, error) {
		return newSpiderMetric(spiderESM2018Info, o, spider.Rule2018)
	}})
	Register(Def{Info: spiderHardnessInfo, Options: spiderOptions, NewItem: func(o Options) (ItemMetric, error) {
		return newSpiderMetric(spiderHardnessInfo, o, "")
	}})
}

// spiderMetric scores one item with package spider. rule is empty for
// spider_hardness. The catalog caches schemas and is safe for concurrent
// use.
type spiderMetric struct {
	info    Info
	rule    spider.Rule
	catalog *spider.Catalog
}

func newSpiderMetric(info Info, o Options, rule spider.Rule) (ItemMetric, error) {
	tables, err := o.String("tables", "")
	if err != nil {
		return nil, err
	}
	dbs, err := o.String("databases", "")
	if err != nil {
		return nil, err
	}
	if tables == "" || dbs == "" {
		return nil, fmt.Errorf("%s needs tables = <path of Spider's tables.json> and databases = <directory of <db>/<db>.sqlite>", info.Name)
	}
	cat, err := spider.LoadSchemas(tables, dbs)
	if err != nil {
		return nil, err
	}
	return &spiderMetric{info: info, rule: rule, catalog: cat}, nil
}

func (m *spiderMetric) Info() Info { return m.info }

// spiderLevels numbers the hardness levels for spider_hardness.
var spiderLevels = map[string]float64{"easy": 1, "medium": 2, "hard": 3, "extra": 4}

// Score follows evaluate(): gold and prediction are stripped; a prediction
// that does not parse is scored as the empty query (0, with the parse error
// in the note), not skipped; a gold that does not parse, where
// evaluation.py stops the run, is this item's error.
func (m *spiderMetric) Score(ctx context.Context, in Input) item.Score {
	name := m.info.Name
	if in.Record == nil {
		return Failed(name, errors.New("no record"))
	}
	if in.Record.Item.Gold == "" {
		return item.Score{Name: name, Null: true}
	}
	schema, err := m.catalog.Schema(in.Record.Item.DB)
	if err != nil {
		return Failed(name, err)
	}
	gold := strings.TrimSpace(in.Record.Item.Gold)
	if m.rule == "" {
		g, err := spider.Parse(schema, gold)
		if err != nil {
			return Failed(name, fmt.Errorf("gold query does not parse as Spider SQL: %v", err))
		}
		h, err := spider.Hardness(g)
		if err != nil {
			return Failed(name, err)
		}
		return item.Score{Name: name, Value: spiderLevels[h], Note: h}
	}
	a := in.Record.Final()
	if a == nil {
		return Failed(name, errNoAttempt)
	}
	res, err := spider.Score(schema, gold, strings.TrimSpace(a.Query), m.rule)
	if err != nil {
		return Failed(name, err)
	}
	s := item.Score{Name: name}
	if res.Exact {
		s.Value = 1
	}
	if res.PredErr != nil {
		s.Note = "prediction does not parse as Spider SQL (scored as the empty query): " + res.PredErr.Error()
	}
	return s
}
