package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/item"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)}
}

// testProgress is a display driven by the test: a fake clock, no ticking
// goroutine, output in a buffer.
func testProgress(mode progressMode, interval time.Duration, width int, cols ...string) (*progress, *fakeClock, *bytes.Buffer) {
	clock := newFakeClock()
	var buf bytes.Buffer
	p := newProgress(&buf, cols, progressOptions{mode: mode, interval: interval,
		width: func() int { return width }, now: clock.now, manual: true})
	return p, clock, &buf
}

func rec(status string, scores ...item.Score) *item.Record {
	return &item.Record{Status: status, Scores: scores}
}

func ex(v float64) item.Score { return item.Score{Name: "ex", Value: v} }

func TestProgressPlainLine(t *testing.T) {
	tests := []struct {
		name string
		snap progressSnapshot
		want string
	}{{
		name: "known total",
		snap: progressSnapshot{done: 120, total: 400, rate: 41.2, rateOK: true, pass: "ex", passMean: 0.6123},
		want: "progress: 120/400 items (30%) · 41.2 items/s · ETA 6.8s · ex 0.612 · errors 0",
	}, {
		name: "rate not known yet",
		snap: progressSnapshot{done: 3, total: 400, pass: "ex", passMean: math.NaN()},
		want: "progress: 3/400 items (0%) · — items/s · ETA — · ex — · errors 0",
	}, {
		name: "stalled: no ETA",
		snap: progressSnapshot{done: 3, total: 400, rate: 0, rateOK: true, pass: "ex", passMean: 1},
		want: "progress: 3/400 items (0%) · 0.00 items/s · ETA — · ex 1.000 · errors 0",
	}, {
		name: "streamed: total unknown",
		snap: progressSnapshot{done: 1500, total: -1, rate: 250, rateOK: true, pass: "em", passMean: 0.25},
		want: "progress: 1500 items · 250 items/s · ETA — · em 0.250 · errors 0",
	}, {
		name: "resumed, other statuses, long ETA",
		snap: progressSnapshot{done: 1040, total: 20000, resumed: 1000, rate: 0.5, rateOK: true, pass: "ex", passMean: 0.5,
			errors: 3, other: []statusCount{{"timeout", 2}, {"unsafe", 1}}},
		want: "progress: 1040/20000 items (5%, 1000 resumed) · 0.50 items/s · ETA 10h32m · ex 0.500 · errors 3 · timeout 2 · unsafe 1",
	}, {
		name: "no metric",
		snap: progressSnapshot{done: 10, total: 10, rate: 5, rateOK: true},
		want: "progress: 10/10 items (100%) · 5.0 items/s · ETA 0s · errors 0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.snap.plain(); got != tt.want {
				t.Errorf("plain()\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestProgressLiveWidth(t *testing.T) {
	s := progressSnapshot{done: 120, total: 400, rate: 41.2, rateOK: true, pass: "ex", passMean: 0.612,
		other: []statusCount{{"timeout", 2}}, elapsed: 12345 * time.Millisecond}
	// What goes as the terminal narrows: the bar shrinks to minBar, then
	// the elapsed time goes, the other statuses, the bar, items/s, the
	// ETA, the pass rate and errors; then the line is cut.
	stages := []string{
		"120/400 (30%) · 41.2 items/s · ETA 6.8s · ex 0.612 · errors 0 · timeout 2 · 12s",
		"120/400 (30%) · 41.2 items/s · ETA 6.8s · ex 0.612 · errors 0 · timeout 2",
		"120/400 (30%) · 41.2 items/s · ETA 6.8s · ex 0.612 · errors 0",
		"120/400 (30%) · ETA 6.8s · ex 0.612 · errors 0",
		"120/400 (30%) · ex 0.612 · errors 0",
		"120/400 (30%) · errors 0",
		"120/400 (30%)",
	}
	withBar := func(inner int, text string) string { return bar(120, 400, inner) + " " + text }
	fit := func(text string) int { return runeLen(text) + 1 } // the last column stays empty
	barFit := func(text string) int { return fit(text) + 3 + minBar }
	tests := []struct {
		width int
		want  string
	}{
		{200, "[===========>                            ] " + stages[0]},
		{barFit(stages[0]) + 5, "[===>           ] " + stages[0]},
		{barFit(stages[0]), withBar(minBar, stages[0])},
		{barFit(stages[0]) - 1, withBar(minBar+5, stages[1])}, // " · 12s" went
		{barFit(stages[1]), withBar(minBar, stages[1])},
		{barFit(stages[1]) - 1, withBar(minBar+11, stages[2])}, // " · timeout 2" went
		{barFit(stages[2]), withBar(minBar, stages[2])},
		{barFit(stages[2]) - 1, stages[2]},
		{fit(stages[2]), stages[2]},
		{fit(stages[2]) - 1, stages[3]},
		{fit(stages[3]), stages[3]},
		{fit(stages[3]) - 1, stages[4]},
		{fit(stages[4]), stages[4]},
		{fit(stages[4]) - 1, stages[5]},
		{fit(stages[5]), stages[5]},
		{fit(stages[5]) - 1, stages[6]},
		{fit(stages[6]), stages[6]},
		{fit(stages[6]) - 1, "120/400 (30%"},
		{5, "120/"},
		{1, ""},
		{0, ""},
	}
	for _, tt := range tests {
		if got := s.live(tt.width); got != tt.want {
			t.Errorf("live(%d)\n got %q\nwant %q", tt.width, got, tt.want)
		}
	}
	for w := 2; w <= 200; w++ {
		if n := runeLen(s.live(w)); n >= w {
			t.Fatalf("live(%d) is %d columns wide: %q", w, n, s.live(w))
		}
	}
	// Unknown total: no bar, and the count says items.
	if got := (progressSnapshot{done: 7, total: -1, passMean: math.NaN()}).live(200); got != "7 items · — items/s · ETA — · errors 0 · 0s" {
		t.Errorf("streamed: %q", got)
	}
}

func TestProgressBar(t *testing.T) {
	tests := []struct {
		done, total int64
		inner       int
		want        string
	}{
		{0, 10, 10, "[          ]"},
		{1, 10, 10, "[>         ]"},
		{5, 10, 10, "[====>     ]"},
		{10, 10, 10, "[==========]"},
		{12, 10, 10, "[==========]"},
		{1, 3, 12, "[===>        ]"},
	}
	for _, tt := range tests {
		if got := bar(tt.done, tt.total, tt.inner); got != tt.want {
			t.Errorf("bar(%d, %d, %d) = %q, want %q", tt.done, tt.total, tt.inner, got, tt.want)
		}
	}
}

// lines returns the non-empty lines written so far.
func lines(buf *bytes.Buffer) []string {
	return strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' })
}

func TestProgressRate(t *testing.T) {
	t.Run("steady", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, 5*time.Second, 0, "ex")
		p.start(100)
		for range 5 {
			clock.advance(time.Second)
			for i := range 10 {
				p.add(rec("ok", ex(float64(i%2))))
			}
			p.tick()
		}
		want := []string{"progress: 50/100 items (50%) · 10.0 items/s · ETA 5.0s · ex 0.500 · errors 0"}
		if diff := cmp.Diff(want, lines(buf)); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
	t.Run("resumed and cache-warm start", func(t *testing.T) {
		// 40 items kept from an earlier run, then 100/s for 3s (cache
		// hits), then 1/s: after rateWindow the rate is the slow one, and
		// the kept items never count in it.
		p, clock, buf := testProgress(progressLog, 20*time.Second, 0, "em", "ex")
		for range 40 {
			p.keep(rec("ok", ex(1)))
		}
		p.start(400)
		for s := 1; s <= 20; s++ {
			clock.advance(time.Second)
			n := 1
			if s <= 3 {
				n = 100
			}
			for range n {
				p.add(rec("ok", ex(0)))
			}
			p.tick()
		}
		// 357 done, 43 left at 1.0/s; ex's mean is 40/357.
		want := []string{"progress: 357/400 items (89%, 40 resumed) · 1.0 items/s · ETA 43s · ex 0.112 · errors 0"}
		if diff := cmp.Diff(want, lines(buf)); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
	t.Run("statuses", func(t *testing.T) {
		// errors counts status error only; an errored item stays out of
		// the mean; the other statuses are named, as items.parquet has
		// them: an ok item whose final attempt timed out is a timeout.
		p, clock, buf := testProgress(progressLog, time.Second, 0, "ex")
		p.start(-1)
		final := func(class string) *item.Record {
			r := rec("ok", ex(0))
			r.Samples = []*item.Sample{{Attempts: []*item.Attempt{{ErrorClass: "syntax"}, {ErrorClass: class}}}}
			return r
		}
		for _, r := range []*item.Record{
			rec("ok", ex(1)), rec("error", ex(0)), final(item.ClassTimeout),
			rec("cancelled"), final(item.ClassSafety), rec("timeout", ex(0)),
		} {
			p.add(r)
		}
		clock.advance(time.Second)
		p.tick()
		// Five in the rate: a cancelled item did not finish.
		want := []string{"progress: 6 items · 5.0 items/s · ETA — · ex 0.250 · errors 1 · timeout 2 · unsafe 1 · cancelled 1"}
		if diff := cmp.Diff(want, lines(buf)); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
	t.Run("first declared metric without ex", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, time.Second, 0, "em", "f1")
		p.start(2)
		p.add(rec("ok", item.Score{Name: "f1", Value: 0.5}, item.Score{Name: "em", Value: 1}))
		clock.advance(time.Second)
		p.tick()
		want := []string{"progress: 1/2 items (50%) · 1.0 items/s · ETA 1.0s · em 1.000 · errors 0"}
		if diff := cmp.Diff(want, lines(buf)); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

func TestProgressLogCadence(t *testing.T) {
	t.Run("a line every interval and a last one", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, 10*time.Second, 0)
		p.start(100)
		for range 35 {
			clock.advance(time.Second)
			p.add(rec("ok"))
			p.tick()
		}
		p.stop()
		p.stop() // a second stop does nothing
		var counts []string
		for _, l := range lines(buf) {
			counts = append(counts, strings.Fields(l)[1])
		}
		if diff := cmp.Diff([]string{"10/100", "20/100", "30/100", "35/100"}, counts); diff != "" {
			t.Errorf("(-want +got)\n%s\n%s", diff, buf)
		}
	})
	t.Run("no repeated last line", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, 10*time.Second, 0)
		p.start(10)
		for range 10 {
			p.add(rec("ok"))
		}
		clock.advance(10 * time.Second)
		p.tick()
		clock.advance(time.Second)
		p.stop()
		if n := len(lines(buf)); n != 1 {
			t.Errorf("%d lines, want 1:\n%s", n, buf)
		}
	})
	t.Run("a short run prints nothing", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, 10*time.Second, 0)
		p.start(9)
		for range 9 {
			clock.advance(time.Second)
			p.add(rec("ok"))
			p.tick()
		}
		clock.advance(900 * time.Millisecond)
		p.stop()
		if buf.Len() != 0 {
			t.Errorf("a run shorter than the interval printed %q", buf)
		}
	})
	t.Run("a late tick does not bunch lines", func(t *testing.T) {
		p, clock, buf := testProgress(progressLog, 10*time.Second, 0)
		clock.advance(25 * time.Second)
		p.tick() // one line, not two
		clock.advance(5 * time.Second)
		p.tick() // 30s: not yet (next is due at 35s)
		clock.advance(5 * time.Second)
		p.tick()
		if n := len(lines(buf)); n != 2 {
			t.Errorf("%d lines, want 2:\n%s", n, buf)
		}
	})
}

func TestProgressQuiet(t *testing.T) {
	p, clock, buf := testProgress(progressOff, time.Second, 80, "ex")
	p.start(3)
	for range 3 {
		clock.advance(5 * time.Second)
		p.add(rec("ok", ex(1)))
		p.tick()
	}
	p.writer().Write([]byte("evalflow run: warning: w\n"))
	p.stop()
	if got := buf.String(); got != "evalflow run: warning: w\n" {
		t.Errorf("-quiet wrote %q", got)
	}
	// The means are kept all the same, for the summary.
	if rows := p.overall(0); len(rows) != 1 || rows[0].Mean != 1 || rows[0].N != 3 {
		t.Errorf("overall: %+v", rows)
	}
}

func TestProgressLive(t *testing.T) {
	p, clock, buf := testProgress(progressLive, 0, 100, "ex")
	p.start(4)
	clock.advance(time.Second)
	p.add(rec("ok", ex(1)))
	p.tick()
	// 100 columns: 63 of text, a space and a bar of 33 inside brackets.
	line1 := "\r\x1b[K[=======>" + strings.Repeat(" ", 25) + "] 1/4 (25%) · 1.0 items/s · ETA 3.0s · ex 1.000 · errors 0 · 1.0s"
	if got := buf.String(); got != line1 {
		t.Fatalf("first draw:\n got %q\nwant %q", got, line1)
	}
	// A warning from another goroutine clears the line and is written
	// whole; the next tick draws the line again below it.
	buf.Reset()
	p.writer().Write([]byte("evalflow run: x.jsonl:3: bad row\n"))
	p.writer().Write([]byte("second\n")) // the line is already cleared
	if got, want := buf.String(), "\r\x1b[Kevalflow run: x.jsonl:3: bad row\nsecond\n"; got != want {
		t.Errorf("warning:\n got %q\nwant %q", got, want)
	}
	buf.Reset()
	clock.advance(time.Second)
	p.add(rec("error"))
	p.tick()
	line2 := "\r\x1b[K[" + strings.Repeat("=", 15) + ">" + strings.Repeat(" ", 17) + "] 2/4 (50%) · 1.0 items/s · ETA 2.0s · ex 1.000 · errors 1 · 2.0s"
	if got := buf.String(); got != line2 {
		t.Errorf("redraw:\n got %q\nwant %q", got, line2)
	}
	// stop leaves the last line on screen, ended.
	buf.Reset()
	p.stop()
	if got := buf.String(); got != line2+"\n" {
		t.Errorf("stop:\n got %q\nwant %q", got, line2+"\n")
	}
	buf.Reset()
	p.tick()
	p.writer().Write([]byte("summary\n"))
	if got := buf.String(); got != "summary\n" {
		t.Errorf("after stop: %q", got)
	}
}

func TestProgressLiveSilentWhenNeverDrawn(t *testing.T) {
	// A run that ends before the first tick (or returns early) leaves no
	// line behind.
	p, _, buf := testProgress(progressLive, 0, 100, "ex")
	p.start(1)
	p.add(rec("ok", ex(1)))
	p.stop()
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf)
	}
}

// TestProgressConcurrent runs the real ticker while goroutines add items
// and write warnings (for -race); whatever the timing, every line written
// is whole: a progress line or a warning.
func TestProgressConcurrent(t *testing.T) {
	for _, mode := range []progressMode{progressLive, progressLog} {
		var buf bytes.Buffer
		p := newProgress(&buf, []string{"ex"}, progressOptions{mode: mode, interval: time.Millisecond, width: func() int { return 120 }})
		p.start(400)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 100 {
					p.add(rec("ok", ex(float64(i%2))))
					if i%25 == 0 {
						fmt.Fprintf(p.writer(), "evalflow run: warning %d/%d\n", g, i)
					}
					time.Sleep(2 * time.Millisecond) // a run of ~0.2s: a few ticks
				}
			})
		}
		wg.Wait()
		p.stop()
		warnings, last := 0, ""
		for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			for _, part := range strings.Split(l, "\r\x1b[K") {
				switch {
				case part == "":
				case strings.HasPrefix(part, "evalflow run: warning "):
					warnings++
				case mode == progressLive && strings.HasPrefix(part, "[") && strings.Contains(part, "] "):
					last = part
				case mode == progressLog && strings.HasPrefix(part, "progress: "):
					last = part
				default:
					t.Errorf("mode %d: garbled %q", mode, part)
				}
			}
		}
		if warnings != 16 {
			t.Errorf("mode %d: %d warnings, want 16:\n%s", mode, warnings, buf.String())
		}
		// The display ends with the whole run, if it showed anything.
		if last != "" && !strings.Contains(last, "400/400") {
			t.Errorf("mode %d: last line %q", mode, last)
		}
	}
}

func TestProgressOptionsFor(t *testing.T) {
	var stderr bytes.Buffer
	if o := progressOptionsFor(&stderr, true); o.mode != progressOff {
		t.Errorf("-quiet: mode %v", o.mode)
	}
	t.Setenv("EVALFLOW_PROGRESS_INTERVAL", "")
	if o := progressOptionsFor(&stderr, false); o.mode != progressLog || o.interval != defaultProgressInterval {
		t.Errorf("not a terminal: %+v", o)
	}
	t.Setenv("EVALFLOW_PROGRESS_INTERVAL", "250ms")
	if o := progressOptionsFor(&stderr, false); o.interval != 250*time.Millisecond {
		t.Errorf("EVALFLOW_PROGRESS_INTERVAL=250ms: %v", o.interval)
	}
	for _, bad := range []string{"10", "-1s", "0s", "soon"} {
		stderr.Reset()
		t.Setenv("EVALFLOW_PROGRESS_INTERVAL", bad)
		if o := progressOptionsFor(&stderr, false); o.interval != defaultProgressInterval {
			t.Errorf("EVALFLOW_PROGRESS_INTERVAL=%s: %v", bad, o.interval)
		}
		if !strings.Contains(stderr.String(), "EVALFLOW_PROGRESS_INTERVAL="+bad+" is not a positive duration") {
			t.Errorf("EVALFLOW_PROGRESS_INTERVAL=%s: warning %q", bad, stderr.String())
		}
	}
	// A file that is not a terminal is a log.
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv("EVALFLOW_PROGRESS_INTERVAL", "")
	if o := progressOptionsFor(f, false); o.mode != progressLog {
		t.Errorf("a file: mode %v", o.mode)
	}
}

// TestProgressLogEndToEnd runs the real CLI with its standard error in a
// pipe: plain progress lines there, standard output the same as under
// -quiet.
func TestProgressLogEndToEnd(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	args := slowReplay(t, dir, 4)
	var loud []string
	for _, a := range args {
		if a != "-quiet" {
			loud = append(loud, a)
		}
	}
	if len(loud) != len(args)-1 {
		t.Fatalf("slowReplay's arguments have no -quiet to drop: %q", args)
	}
	// A line is due at every tick (1/6 s): the run (seconds) prints
	// several, the last saying 4/4 however the ticks fell.
	t.Setenv("EVALFLOW_PROGRESS_INTERVAL", "1ms")
	r := runBin(t, bin, dir, append(loud, "-out", "loud")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// The first lines may come before the background count of the
	// dataset has finished: no total yet.
	lineRE := regexp.MustCompile(`^progress: [0-4](/4 items \(\d+%\)| items) · (—|\d+\.?\d*) items/s · ETA (—|\S+) · ex (—|\d\.\d{3}) · errors 0$`)
	var prog []string
	for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if !lineRE.MatchString(l) {
			t.Errorf("stderr line %q is not a progress line", l)
		}
		prog = append(prog, l)
	}
	if len(prog) == 0 {
		t.Fatalf("no progress lines on stderr:\n%s", r.stderr)
	}
	if last := prog[len(prog)-1]; !strings.HasPrefix(last, "progress: 4/4 items (100%) · ") || !strings.Contains(last, " · ex 0.750 · ") {
		t.Errorf("last line %q", last)
	}
	if strings.Contains(r.stdout, "progress") {
		t.Errorf("progress on stdout:\n%s", r.stdout)
	}

	q := runBin(t, bin, dir, append(args, "-out", "quiet")...)
	if q.code != 0 || q.stderr != "" {
		t.Fatalf("-quiet: exit %d, stderr %q", q.code, q.stderr)
	}
	// The summaries differ only in run time and directory.
	norm := regexp.MustCompile(`\d{8}T\d{6}Z|\d+(\.\d+)?(ms|s)\b|loud|quiet`)
	if diff := cmp.Diff(norm.ReplaceAllString(q.stdout, "X"), norm.ReplaceAllString(r.stdout, "X")); diff != "" {
		t.Errorf("stdout with progress differs from -quiet (-quiet +progress):\n%s", diff)
	}
}

// TestProgressOverallPerCell: in a sweep without an aggregate stage, each
// cell's overall row counts that cell's items, not the whole run's.
func TestProgressOverallPerCell(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, []string{"ex"}, progressOptions{mode: progressOff})
	for i, c := range []int{0, 0, 0, 1} {
		r := rec("ok", ex(float64(i%2)))
		r.Cell = c
		p.keep(r)
	}
	for cell, want := range map[int]int{0: 3, 1: 1} {
		rows := p.overall(cell)
		if len(rows) != 1 || rows[0].Items != want || rows[0].N != want {
			t.Errorf("cell %d: overall rows %+v, want items = n = %d", cell, rows, want)
		}
	}
}

// countedSource knows its length; Items must not be called for a count.
type countedSource struct {
	n     int
	calls int
}

func (s *countedSource) Len() int { return s.n }

func (s *countedSource) Items(ctx context.Context, fn func(item.Item) error) error {
	s.calls++
	for range s.n {
		if err := fn(item.Item{}); err != nil {
			return err
		}
	}
	return nil
}

// streamSource only streams: countItems reads it in the background.
type streamSource struct{ n int }

func (s streamSource) Items(ctx context.Context, fn func(item.Item) error) error {
	for range s.n {
		if err := fn(item.Item{}); err != nil {
			return err
		}
	}
	return nil
}

// TestProgressCountItems: a source that knows its length (a
// dataset.Reader counted its rows when it was opened) is not read again;
// another is counted by a second pass; -limit caps both; -quiet counts
// nothing.
func TestProgressCountItems(t *testing.T) {
	for _, tt := range []struct {
		name  string
		src   itemSource
		limit int
		mode  progressMode
		want  int64
	}{
		{"counted", &countedSource{n: 1234}, 0, progressLog, 1234},
		{"counted, limit", &countedSource{n: 1234}, 100, progressLog, 100},
		{"counted, limit above", &countedSource{n: 12}, 100, progressLog, 12},
		{"streamed", streamSource{n: 777}, 0, progressLog, 777},
		{"streamed, limit", streamSource{n: 777}, 70, progressLog, 70},
		{"quiet", &countedSource{n: 5}, 0, progressOff, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := testProgress(tt.mode, time.Second, 80, "ex")
			p.countItems(context.Background(), tt.src, tt.limit)
			if _, streamed := tt.src.(streamSource); streamed {
				for deadline := time.Now().Add(10 * time.Second); p.total.Load() < 0 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond) // the second pass runs in the background
				}
			}
			p.stop()
			if got := p.total.Load(); got != tt.want {
				t.Errorf("total = %d, want %d", got, tt.want)
			}
			if c, ok := tt.src.(*countedSource); ok && c.calls != 0 {
				t.Errorf("a counted source was read %d times", c.calls)
			}
		})
	}
}
