package examples

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// buildEvalflow builds the real CLI (./cmd/evalflow) into a temporary
// directory and returns its path. It reuses the Go build cache, so after
// the first build it only links.
func buildEvalflow(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "evalflow")
	cmd := exec.Command(gobin, "build", "-o", bin, "./cmd/evalflow")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/evalflow: %v\n%s", err, out)
	}
	return bin
}

// readmeQuickstart returns, from README.md, the quickstart command of the
// indented block at the top (its arguments after "evalflow") and the
// sample summary of the "The quickstart" section (the indented lines from
// the one starting "run ").
func readmeQuickstart(t *testing.T) (args []string, sample []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		if !strings.HasPrefix(line, "    ") {
			if len(sample) > 0 && strings.TrimSpace(line) != "" {
				section = "" // the sample block ended
			}
			continue
		}
		code := strings.TrimPrefix(line, "    ")
		switch {
		case section == "" && args == nil && strings.Contains(code, " run examples/quickstart"):
			cmd := strings.TrimSpace(strings.SplitN(code, "#", 2)[0])
			_, rest, ok := strings.Cut(cmd, "evalflow ")
			if !ok {
				t.Fatalf("README top command %q does not run evalflow", cmd)
			}
			args = strings.Fields(rest)
		case section == "The quickstart" && (len(sample) > 0 || strings.HasPrefix(code, "run ")):
			sample = append(sample, code)
		}
	}
	if args == nil {
		t.Fatal("README.md: no `evalflow run examples/quickstart` command in the indented block at the top")
	}
	if len(sample) == 0 {
		t.Fatal(`README.md: no sample summary (an indented block starting "run ") in "## The quickstart"`)
	}
	return args, sample
}

var (
	// The first summary line: run <id>  <status>  <counts>  <duration>.
	runLine = regexp.MustCompile(`^run (\S+)  (.*)  ([0-9.]+(?:ns|µs|ms|s|m[0-9.]*s?|h\S*))$`)
	runID   = regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]{8}$`)
)

// normalizeSummary turns a summary into the lines that must match: the run
// line without its id and duration, the "wrote" line without the
// directory, every other line in full (trailing spaces aside).
func normalizeSummary(t *testing.T, what string, lines []string) []string {
	t.Helper()
	var out []string
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			continue
		}
		switch {
		case i == 0:
			m := runLine.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: first line %q is not `run ID  STATUS  COUNTS  DURATION`", what, l)
			}
			if !runID.MatchString(m[1]) {
				t.Errorf("%s: run id %q is not YYYYMMDDTHHMMSSZ-xxxxxxxx", what, m[1])
			}
			l = "run <id>  " + m[2] + "  <duration>"
		case strings.HasPrefix(strings.TrimSpace(l), "wrote "):
			l = "  wrote <dir>"
		}
		out = append(out, l)
	}
	return out
}

// TestReadmeQuickstart runs the README's quickstart command with the real
// CLI and requires its summary to equal the README's sample, run id,
// duration and run directory aside: the status and counts, every metric
// line (`name mean CI n errors`) in full and the final-attempt errors.
func TestReadmeQuickstart(t *testing.T) {
	args, sample := readmeQuickstart(t)
	if len(args) < 2 || args[0] != "run" {
		t.Fatalf("README top command: evalflow %s: want `evalflow run examples/quickstart`", strings.Join(args, " "))
	}
	bin := buildEvalflow(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, append(args, "-out", out)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "EVALFLOW_CACHE_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("evalflow %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	got := normalizeSummary(t, "evalflow's summary", strings.Split(stdout.String(), "\n"))
	want := normalizeSummary(t, "README.md's sample", sample)

	var metrics int
	for _, l := range got {
		if f := strings.Fields(l); len(f) >= 2 && regexp.MustCompile(`^[0-9.]+$`).MatchString(f[1]) {
			metrics++
		}
	}
	if metrics == 0 {
		t.Errorf("the summary has no metric line (`name mean …`):\n%s", stdout.String())
	}
	if d := diffLines(want, got); d != "" {
		t.Errorf("README.md's quickstart sample is not what `evalflow %s` prints (-README +evalflow):\n%s\nUpdate the sample in README.md.",
			strings.Join(args, " "), d)
	}
	for _, f := range []string{"manifest.json", "items.parquet", "attempts.parquet", "aggregates.parquet", "summary.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("README says the run directory holds %s: %v", f, err)
		}
	}
}

// diffLines is a line diff good enough for short summaries: lines only in
// want with -, only in got with +, in order.
func diffLines(want, got []string) string {
	if strings.Join(want, "\n") == strings.Join(got, "\n") {
		return ""
	}
	var b strings.Builder
	n := max(len(want), len(got))
	for i := range n {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w == g {
			b.WriteString("  " + w + "\n")
			continue
		}
		if i < len(want) {
			b.WriteString("- " + w + "\n")
		}
		if i < len(got) {
			b.WriteString("+ " + g + "\n")
		}
	}
	return b.String()
}

func TestNormalizeSummary(t *testing.T) {
	in := []string{
		"run 20261122T034535Z-695ddf1e  complete  30 items (28 ok, 1 timeout, 1 unsafe, 0 error, 0 cancelled)  2.481s",
		"  ex                         0.6000  [0.4232, 0.7541]       30       0",
		"  wrote runs/20261122T034535Z-695ddf1e",
	}
	got := normalizeSummary(t, "test", in)
	want := []string{
		"run <id>  complete  30 items (28 ok, 1 timeout, 1 unsafe, 0 error, 0 cancelled)  <duration>",
		"  ex                         0.6000  [0.4232, 0.7541]       30       0",
		"  wrote <dir>",
	}
	if d := diffLines(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A changed count or metric must show.
	other := append([]string{}, want...)
	other[1] = "  ex                         0.6333  [0.4232, 0.7541]       30       0"
	if diffLines(want, other) == "" {
		t.Error("diffLines missed a changed metric line")
	}
}
