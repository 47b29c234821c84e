package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpiderEval runs evalflow spider-eval on Spider's published example
// pair: stdout equals evaluation.py's whole printed output byte for byte,
// today's rule and the 2018 rule behind the published
// eval_result_example.txt. Uneven files and unknown databases are errors,
// never a table.
func TestSpiderEval(t *testing.T) {
	data, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", "spider"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(data); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("shared data missing at %s (CI needs ../shared beside the checkout)", data)
		}
		t.Skip("no ../shared/data")
	}
	ex := filepath.Join(data, "evaluation_examples")
	args := []string{"spider-eval", "-gold", filepath.Join(ex, "gold_example.txt"), "-pred", filepath.Join(ex, "pred_example.txt"),
		"-db", filepath.Join(data, "schema_only_db"), "-table", filepath.Join(data, "tables.json")}
	for _, tc := range []struct {
		rule, want string
	}{
		{"current", filepath.Join(data, "expected", "eval_result_current_rule.txt")},
		{"2018", filepath.Join(ex, "eval_result_example.txt")},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), append(args, "-rule", tc.rule), &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			want, err := os.ReadFile(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("output differs from %s (%d vs %d bytes)", tc.want, out.Len(), len(want))
			}
		})
	}
	// One prediction short: an error naming both counts, nothing printed.
	preds, _ := os.ReadFile(filepath.Join(ex, "pred_example.txt"))
	lines := strings.Split(strings.TrimRight(string(preds), "\n"), "\n")
	short := filepath.Join(t.TempDir(), "short.txt")
	os.WriteFile(short, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"), 0o644)
	var out, errb bytes.Buffer
	bad := append([]string{}, args...)
	bad[4] = short
	if code := run(context.Background(), bad, &out, &errb); code != exitRun || out.Len() != 0 || !strings.Contains(errb.String(), "1034") {
		t.Errorf("short predictions: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	// A bad gold line after good ones: an error naming the line, and no
	// partial report on stdout.
	golds, _ := os.ReadFile(filepath.Join(ex, "gold_example.txt"))
	gl := strings.Split(strings.TrimRight(string(golds), "\n"), "\n")
	gl[5] = strings.ReplaceAll(gl[5], "\t", " ")
	badGold := filepath.Join(t.TempDir(), "gold.txt")
	os.WriteFile(badGold, []byte(strings.Join(gl, "\n")+"\n"), 0o644)
	out.Reset()
	errb.Reset()
	bad = append([]string{}, args...)
	bad[2] = badGold
	if code := run(context.Background(), bad, &out, &errb); code != exitRun || out.Len() != 0 || !strings.Contains(errb.String(), "line 6") {
		t.Errorf("gold line without a tab: exit %d, stdout %d bytes, stderr %q", code, out.Len(), errb.String())
	}
	if code := run(context.Background(), []string{"spider-eval", "-gold", "x"}, &out, &errb); code != exitConfig {
		t.Errorf("missing flags: exit %d, want %d", code, exitConfig)
	}
}
