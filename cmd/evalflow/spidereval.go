package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/evalflow/evalflow/spider"
)

// cmdSpiderEval is Spider's evaluation.py --etype match without Python:
// the same files (gold lines "SQL<TAB>db_id", one predicted SQL per line),
// the same schemas (<db>/<db>.sqlite under -db, foreign keys from -table)
// and the same printed output — each unparsable prediction's
// "eval_err_num", each mismatch, then the exact-match and partial-match
// table by hardness. -rule 2018 reproduces the published
// eval_result_example.txt (package spider says how the rules differ).
func cmdSpiderEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("spider-eval", "spider-eval -gold GOLD.txt -pred PRED.txt -db DIR -table tables.json [-rule current|2018]", stderr)
	gold := fs.String("gold", "", "gold file: one \"SQL<TAB>db_id\" per line (Spider's gold_example.txt / dev_gold.sql)")
	pred := fs.String("pred", "", "predictions: one SQL per line, in the gold file's order")
	db := fs.String("db", "", "database directory holding <db_id>/<db_id>.sqlite (the schemas are read from these files)")
	table := fs.String("table", "", "Spider's tables.json (foreign keys)")
	rule := fs.String("rule", "current", "exact-match rule: current (today's evaluation.py) or 2018 (the published eval_result_example.txt)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 0 || *gold == "" || *pred == "" || *db == "" || *table == "" {
		if err == nil {
			fmt.Fprintln(stderr, "evalflow spider-eval: -gold, -pred, -db and -table are required")
			fs.Usage()
		}
		return exitConfig
	}
	var r spider.Rule
	switch *rule {
	case "current":
		r = spider.RuleCurrent
	case "2018":
		r = spider.Rule2018
	default:
		fmt.Fprintf(stderr, "evalflow spider-eval: -rule %q: want current or 2018\n", *rule)
		return exitConfig
	}
	golds, err := readSpiderLines(*gold)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow spider-eval: %v\n", err)
		return exitRun
	}
	preds, err := readSpiderLines(*pred)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow spider-eval: %v\n", err)
		return exitRun
	}
	// evaluation.py zips the two lists: a shorter prediction file silently
	// drops gold items there; here it is an error.
	if len(golds) != len(preds) {
		fmt.Fprintf(stderr, "evalflow spider-eval: %s has %d non-empty lines, %s has %d: every gold line needs its prediction\n", *gold, len(golds), *pred, len(preds))
		return exitRun
	}
	cat, err := spider.LoadSchemas(*table, *db)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow spider-eval: %v\n", err)
		return exitRun
	}
	// The report is kept until every item is scored: a bad line stops the
	// command with nothing on stdout that looks like a partial result.
	var out bytes.Buffer
	ev := spider.NewEvaluator(r, &out)
	for i, g := range golds {
		if err := ctx.Err(); err != nil {
			return exitCancelled
		}
		if g.len() < 2 {
			fmt.Fprintf(stderr, "evalflow spider-eval: %s line %d: want \"SQL<TAB>db_id\"\n", *gold, g.line)
			return exitRun
		}
		s, err := cat.Schema(g.fields[1])
		if err != nil {
			fmt.Fprintf(stderr, "evalflow spider-eval: %s line %d: %v\n", *gold, g.line, err)
			return exitRun
		}
		if _, err := ev.Add(s, g.fields[0], preds[i].fields[0]); err != nil {
			fmt.Fprintf(stderr, "evalflow spider-eval: item %d (%s line %d): %v\n", i, *gold, g.line, err)
			return exitRun
		}
	}
	if err := ev.WriteTable(&out); err != nil {
		fmt.Fprintf(stderr, "evalflow spider-eval: %v\n", err)
		return exitRun
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "evalflow spider-eval: %v\n", err)
		return exitRun
	}
	return exitOK
}

type spiderLine struct {
	line   int
	fields []string
}

func (l spiderLine) len() int { return len(l.fields) }

// readSpiderLines reads a file as evaluation.py does: each line stripped,
// blank lines skipped, fields split at tabs.
func readSpiderLines(path string) ([]spiderLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []spiderLine
	for i, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, spiderLine{line: i + 1, fields: strings.Split(l, "\t")})
		}
	}
	return out, nil
}
