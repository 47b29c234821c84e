package metrics

// The exact-match shortcut of metric-calculators' LLM-judge query correctness
// (“Query Correctness Metric” requirement): identical queries score 1.0 with the reasoning "Queries are
// identical" and no model call. JudgeShortcut is what the LLM judge calls
// first; query_exact_match is the shortcut alone as a metric (1 or 0).
//
// Normalisation, outside string literals and quoted identifiers only:
// leading and trailing whitespace and trailing semicolons removed, every
// whitespace run collapsed to one space, spaces next to ( ) , ; removed;
// with fold_case also upper/lower case folded. Literals and quoted names are
// kept byte for byte, so 'Abc' and 'abc' differ.

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"github.com/evalflow/evalflow/item"
)

// NormalizeQuery returns the normal form JudgeShortcut compares.
func NormalizeQuery(q string, foldCase bool) string {
	var b strings.Builder
	pendingSpace := false
	var last rune = -1
	tight := func(r rune) bool { return r == '(' || r == ')' || r == ',' || r == ';' }
	rs := []rune(q)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if unicode.IsSpace(r) {
			pendingSpace = true
			continue
		}
		if pendingSpace && last >= 0 && !tight(last) && !tight(r) {
			b.WriteByte(' ')
		}
		pendingSpace = false
		if r == '\'' || r == '"' || r == '`' {
			j := i + 1
			for j < len(rs) {
				if rs[j] == r {
					if j+1 < len(rs) && rs[j+1] == r {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(rs))
			b.WriteString(string(rs[i:end]))
			last = rs[end-1]
			i = end - 1
			continue
		}
		if foldCase {
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
		last = r
	}
	return strings.TrimRight(b.String(), "; ")
}

// JudgeShortcut reports whether generated and expected are the same query
// after NormalizeQuery; when they are it returns score 1 and the seed's
// reasoning, and the judge must not call a model.
func JudgeShortcut(generated, expected string, foldCase bool) (score float64, reasoning string, ok bool) {
	if NormalizeQuery(generated, foldCase) == NormalizeQuery(expected, foldCase) {
		return 1, "Queries are identical", true
	}
	return 0, "", false
}

type exactMatchMetric struct{ foldCase bool }

func (exactMatchMetric) Info() Info { return exactMatchInfo }

func (m exactMatchMetric) Score(_ context.Context, in Input) item.Score {
	const name = "query_exact_match"
	if in.Record == nil {
		return Failed(name, errors.New("no record"))
	}
	gold, pred, s, ok := queryPair(name, in.Record)
	if !ok {
		return s
	}
	v, _, _ := JudgeShortcut(pred, gold, m.foldCase)
	return item.Score{Name: name, Value: v}
}

var exactMatchInfo = Info{
	Name:        "query_exact_match",
	Description: "Whether the final query equals the gold query after whitespace/semicolon normalisation (the LLM judge's shortcut).",
	Reference:   "*metric-calculators*, “Query Correctness Metric” requirement, scenario “Score exact match”",
	Inputs:      "Record.Final().Query, Record.Item.Gold",
	Range:       "{0,1}",
}

func init() {
	Register(Def{
		Info:    exactMatchInfo,
		Options: []string{"fold_case"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := o.Bool("fold_case", false)
			if err != nil {
				return nil, err
			}
			return exactMatchMetric{foldCase: f}, nil
		},
	})
}
