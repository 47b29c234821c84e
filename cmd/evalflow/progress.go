package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/rundir"
)

// progressMode is how a run shows its progress on standard error.
type progressMode int

const (
	progressOff  progressMode = iota // -quiet: nothing
	progressLive                     // a terminal: one line redrawn in place
	progressLog                      // a log or CI: a plain line every interval
)

const (
	// liveTick is the redraw period on a terminal (at most ~6 redraws/s).
	liveTick = time.Second / 6
	// defaultProgressInterval is the period of the plain lines in a log
	// (EVALFLOW_PROGRESS_INTERVAL changes it).
	defaultProgressInterval = 10 * time.Second
	// rateWindow is how far back items/s looks: a resumed or cache-warm
	// start stops weighing on the rate once it is this old.
	rateWindow = 10 * time.Second
	// minRateSpan is how much history items/s needs before it is shown.
	minRateSpan = time.Second
	// maxBar is the widest the bar gets on a wide terminal.
	maxBar = 40
	// minBar is the narrowest bar worth drawing; below it the bar is left out.
	minBar = 10
)

// progressOptions configure a progress display. The zero value is off.
type progressOptions struct {
	mode progressMode
	// interval is the period of the plain lines (progressLog).
	interval time.Duration
	// width reports the terminal's columns (progressLive); nil: 80.
	width func() int
	// now is the clock; nil: time.Now.
	now func() time.Time
	// manual leaves ticking to the caller (tests call tick); otherwise a
	// goroutine ticks until stop.
	manual bool
}

// progressOptionsFor chooses the display for a run writing to stderr: none
// under -quiet, a live line on a terminal, plain lines otherwise, every
// EVALFLOW_PROGRESS_INTERVAL (a Go duration; default 10s). A bad interval
// is reported on stderr and the default used: the display is no reason to
// fail a run.
func progressOptionsFor(stderr io.Writer, quiet bool) progressOptions {
	if quiet {
		return progressOptions{}
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		return progressOptions{mode: progressLive, width: func() int {
			w, _, err := term.GetSize(fd)
			if err != nil || w <= 0 {
				return 80
			}
			return w
		}}
	}
	o := progressOptions{mode: progressLog, interval: defaultProgressInterval}
	if s := os.Getenv("EVALFLOW_PROGRESS_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "evalflow: warning: EVALFLOW_PROGRESS_INTERVAL=%s is not a positive duration (such as 30s or 1m); using %s\n", s, defaultProgressInterval)
		} else {
			o.interval = d
		}
	}
	return o
}

// progress shows how a run is going on standard error (a live line on a
// terminal, plain lines in a log) and keeps running means for pipelines
// without an aggregate stage. add and keep may be called from any
// goroutine; stop once, after the last add.
type progress struct {
	w    io.Writer
	opts progressOptions
	cols []string
	pass string // the metric shown as the pass rate ("" if none)

	total   atomic.Int64 // -1 until known
	done    atomic.Int64 // finished items, kept ones included
	fresh   atomic.Int64 // items finished by this process (the rate counts these)
	resumed atomic.Int64 // items an earlier process finished (keep)

	mu        sync.Mutex // guards what follows, up to outMu
	statuses  map[string]int
	cellItems map[int]int         // items counted, by sweep cell (the overall rows of a pipeline without aggregate stage)
	sums      map[progKey]float64 // by sweep cell and metric
	ns        map[progKey]int
	merrs     map[progKey]int

	outMu    sync.Mutex // guards the output and the state below
	startAt  time.Time
	samples  []rateSample // (time, fresh) at each tick, the last rateWindow
	drawn    bool         // a live line is on screen, unterminated
	drew     bool         // a live line was ever drawn
	nextLine time.Time    // when the next plain line is due
	lines    int          // plain lines written
	lastDone int64        // done at the last plain line
	stopped  bool
	quit     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
	// cancelCount stops countItems (nil without one); set before the
	// goroutines start, read by stop.
	cancelCount context.CancelFunc
	clockFunc   func() time.Time
}

type progKey struct {
	cell   int
	metric string
}

type rateSample struct {
	at time.Time
	n  int64
}

// newProgress starts a display writing to w. cols are the metric columns
// in declared order: the pass rate shown is the mean of ex when declared,
// else of the first column.
func newProgress(w io.Writer, cols []string, opts progressOptions) *progress {
	p := &progress{w: w, opts: opts, cols: cols, statuses: map[string]int{}, cellItems: map[int]int{},
		sums: map[progKey]float64{}, ns: map[progKey]int{}, merrs: map[progKey]int{},
		quit: make(chan struct{}), clockFunc: opts.now}
	if p.clockFunc == nil {
		p.clockFunc = time.Now
	}
	if slices.Contains(cols, "ex") {
		p.pass = "ex"
	} else if len(cols) > 0 {
		p.pass = cols[0]
	}
	p.total.Store(-1)
	p.startAt = p.clockFunc()
	p.samples = []rateSample{{p.startAt, 0}}
	p.nextLine = p.startAt.Add(opts.interval)
	period := liveTick
	if opts.mode == progressLog {
		period = min(max(opts.interval/2, liveTick), time.Second)
	}
	if opts.mode != progressOff && !opts.manual && period > 0 {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-p.quit:
					return
				case <-t.C:
					p.tick()
				}
			}
		}()
	}
	return p
}

// start records the number of items the run will deliver; -1 (not known
// yet) leaves a total already known, from countItems, as it is.
func (p *progress) start(total int) {
	if total >= 0 {
		p.total.Store(int64(total))
	}
}

// itemSource is what countItems reads (a *dataset.Reader).
type itemSource interface {
	Items(ctx context.Context, fn func(item.Item) error) error
}

var errCounted = errors.New("counted")

// counted is an itemSource that knows its number of items without reading
// them again (a *dataset.Reader counts its rows when it is opened).
type counted interface {
	Len() int
}

// countItems makes src's number of items, up to limit when it is positive,
// the total: the planner streams a dataset without counting it
// (start(-1)), and a bar needs a total. A source that knows its length
// (counted) gives it at once; any other is counted in the background, a
// second pass over it, which ends with ctx or stop, whichever comes first;
// a count that fails leaves the total unknown (the run itself reports what
// is wrong with the dataset). Under -quiet nothing is counted.
func (p *progress) countItems(ctx context.Context, src itemSource, limit int) {
	if p.opts.mode == progressOff {
		return
	}
	if c, ok := src.(counted); ok {
		n := c.Len()
		if limit > 0 {
			n = min(n, limit)
		}
		p.total.CompareAndSwap(-1, int64(n))
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	p.cancelCount = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		n := 0
		err := src.Items(ctx, func(item.Item) error {
			n++
			if limit > 0 && n >= limit {
				return errCounted
			}
			return nil
		})
		if err == nil || errors.Is(err, errCounted) {
			p.total.CompareAndSwap(-1, int64(n))
		}
	}()
}

// add counts an item this process delivered. A cancelled one is done (it
// is delivered, and named) but not in the rate: an interrupt delivers the
// unfinished items at once.
func (p *progress) add(rec *item.Record) {
	if rec.Status != "cancelled" {
		p.fresh.Add(1)
	}
	p.count(rec)
}

// keep counts an item an earlier process of a resumed run finished: it is
// done, and in the means, but not in the rate.
func (p *progress) keep(rec *item.Record) {
	p.resumed.Add(1)
	p.count(rec)
}

func (p *progress) count(rec *item.Record) {
	p.done.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statuses[rundir.ItemStatus(rec)]++ // as items.parquet says it
	p.cellItems[rec.Cell]++
	for _, s := range rec.Scores {
		k := progKey{rec.Cell, s.Name}
		// An item the harness could not evaluate is left out of the
		// means, except under an official profile (item.Score.Official).
		if rec.Status == "error" && !s.Official {
			p.merrs[k]++
			continue
		}
		if s.Null {
			if s.Err != "" {
				p.merrs[k]++
			}
			continue
		}
		p.sums[k] += s.Value
		p.ns[k]++
		if s.Err != "" {
			p.merrs[k]++
		}
	}
}

// writer returns a writer for everything else the run prints on the same
// stream while the display is up: on a terminal it clears the live line
// before each write, and the next tick draws it again below; elsewhere it
// keeps writes whole between the plain lines. After stop it writes
// straight through.
func (p *progress) writer() io.Writer { return progressWriter{p} }

type progressWriter struct{ p *progress }

func (pw progressWriter) Write(b []byte) (int, error) {
	p := pw.p
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
	return p.w.Write(b)
}

// tick samples the rate and, when due, draws the live line or writes a
// plain one.
func (p *progress) tick() {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.stopped {
		return
	}
	now := p.clockFunc()
	p.sample(now)
	switch p.opts.mode {
	case progressLive:
		p.drawLive(now)
	case progressLog:
		if now.Before(p.nextLine) {
			return
		}
		p.writeLine(now)
		p.nextLine = p.nextLine.Add(p.opts.interval)
		if !p.nextLine.After(now) {
			p.nextLine = now.Add(p.opts.interval)
		}
	}
}

// stop ends the display, once (later calls do nothing): a terminal keeps
// the last line, a log gets a last line. Either only if the display showed
// anything: a run shorter than one tick or interval stays silent.
func (p *progress) stop() {
	p.stopOnce.Do(func() {
		close(p.quit)
		if p.cancelCount != nil {
			p.cancelCount()
		}
		p.wg.Wait()
	})
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	now := p.clockFunc()
	p.sample(now)
	switch p.opts.mode {
	case progressLive:
		if p.drew {
			p.drawLive(now)
			fmt.Fprintln(p.w)
			p.drawn = false
		}
	case progressLog:
		if p.lines > 0 && p.done.Load() != p.lastDone {
			p.writeLine(now)
		}
	}
}

// sample adds (now, fresh) to the rate's history and drops what is older
// than rateWindow, keeping one sample at or before its start.
func (p *progress) sample(now time.Time) {
	p.samples = append(p.samples, rateSample{now, p.fresh.Load()})
	cut := now.Add(-rateWindow)
	i := 0
	for i+1 < len(p.samples)-1 && !p.samples[i+1].at.After(cut) {
		i++
	}
	if i > 0 {
		p.samples = append(p.samples[:0], p.samples[i:]...)
	}
}

// rate is items/s over the history; ok is false until it spans minRateSpan.
func (p *progress) rate() (float64, bool) {
	first, last := p.samples[0], p.samples[len(p.samples)-1]
	span := last.at.Sub(first.at)
	if span < minRateSpan {
		return 0, false
	}
	return float64(last.n-first.n) / span.Seconds(), true
}

func (p *progress) drawLive(now time.Time) {
	io.WriteString(p.w, "\r\x1b[K"+p.snapshot(now).live(p.width()))
	p.drawn, p.drew = true, true
}

func (p *progress) writeLine(now time.Time) {
	s := p.snapshot(now)
	io.WriteString(p.w, s.plain()+"\n")
	p.lines++
	p.lastDone = s.done
}

func (p *progress) width() int {
	if p.opts.width == nil {
		return 80
	}
	return p.opts.width()
}

// snapshot reads the counters. Called with outMu held.
func (p *progress) snapshot(now time.Time) progressSnapshot {
	s := progressSnapshot{done: p.done.Load(), total: p.total.Load(), resumed: p.resumed.Load(),
		pass: p.pass, passMean: math.NaN(), elapsed: now.Sub(p.startAt)}
	s.rate, s.rateOK = p.rate()
	p.mu.Lock()
	defer p.mu.Unlock()
	s.errors = p.statuses["error"]
	for _, st := range slices.Sorted(maps.Keys(p.statuses)) {
		if st != "ok" && st != "error" && st != "" {
			s.other = append(s.other, statusCount{st, p.statuses[st]})
		}
	}
	slices.SortStableFunc(s.other, func(a, b statusCount) int { return statusRank(a.status) - statusRank(b.status) })
	if p.pass != "" {
		n, sum := 0, 0.0
		for k, v := range p.ns {
			if k.metric == p.pass {
				n += v
				sum += p.sums[k]
			}
		}
		if n > 0 {
			s.passMean = sum / float64(n)
		}
	}
	return s
}

// statusRank orders the non-ok statuses as the summary does: timeout,
// unsafe, then any other, cancelled last.
func statusRank(s string) int {
	switch s {
	case "timeout":
		return 0
	case "unsafe":
		return 1
	case "cancelled":
		return 3
	}
	return 2
}

type statusCount struct {
	status string
	n      int
}

// progressSnapshot is what one line shows.
type progressSnapshot struct {
	done, total, resumed int64
	rate                 float64
	rateOK               bool
	pass                 string
	passMean             float64 // NaN: no value yet
	errors               int
	other                []statusCount // non-ok statuses other than error, in display order
	elapsed              time.Duration
}

// progressField is one "·"-separated part of a line; drop ranks what goes
// first when a terminal is too narrow (higher goes first; 0 never).
type progressField struct {
	text string
	drop int
}

// Drop ranks on a narrow terminal: the elapsed time goes first, then the
// other statuses (the summary has them), the bar, items/s, the ETA, the
// pass rate and errors; the count stays.
const (
	dropPass = iota + 2
	dropETA
	dropRate
	dropBar
	dropOther
	dropElapsed
)

// fields are the parts of a line; short (on a terminal) leaves "items"
// out of a count with a total: "120/400 (30%)".
func (s progressSnapshot) fields(short bool) []progressField {
	count := fmt.Sprintf("%d items", s.done)
	if s.total >= 0 {
		count = fmt.Sprintf("%d/%d items (%d%%", s.done, s.total, percent(s.done, s.total))
		if short {
			count = fmt.Sprintf("%d/%d (%d%%", s.done, s.total, percent(s.done, s.total))
		}
		if s.resumed > 0 {
			count += fmt.Sprintf(", %d resumed", s.resumed)
		}
		count += ")"
	} else if s.resumed > 0 {
		count += fmt.Sprintf(" (%d resumed)", s.resumed)
	}
	fs := []progressField{{count, 0}}
	rate, eta := "— items/s", "ETA —"
	if s.rateOK {
		rate = formatRate(s.rate) + " items/s"
		if s.total >= 0 && s.rate > 0 {
			left := max(s.total-s.done, 0)
			eta = "ETA " + formatDuration(time.Duration(float64(left)/s.rate*float64(time.Second)))
		}
	}
	fs = append(fs, progressField{rate, dropRate}, progressField{eta, dropETA})
	if s.pass != "" {
		v := "—"
		if !math.IsNaN(s.passMean) {
			v = fmt.Sprintf("%.3f", s.passMean)
		}
		fs = append(fs, progressField{s.pass + " " + v, dropPass})
	}
	fs = append(fs, progressField{fmt.Sprintf("errors %d", s.errors), 1})
	for _, o := range s.other {
		fs = append(fs, progressField{fmt.Sprintf("%s %d", o.status, o.n), dropOther})
	}
	return fs
}

// plain is the line written to a log every interval.
func (s progressSnapshot) plain() string {
	return "progress: " + joinFields(s.fields(false))
}

// live is the terminal line: a bar (when the total is known), the fields
// and the elapsed time, never more than width-1 columns (writing the last
// column makes some terminals wrap). The bar takes the room left, up to
// maxBar; what does not fit goes in drop order, and a line that still does
// not fit is cut.
func (s progressSnapshot) live(width int) string {
	cols := width - 1
	if cols <= 0 {
		return ""
	}
	fs := append(s.fields(true), progressField{formatDuration(s.elapsed), dropElapsed})
	withBar := s.total > 0
	for {
		text := joinFields(fs)
		if withBar {
			if inner := min(cols-runeLen(text)-3, maxBar); inner >= minBar {
				return bar(s.done, s.total, inner) + " " + text
			}
		} else if runeLen(text) <= cols {
			return text
		}
		worst, rank := -1, 0
		if withBar {
			rank = dropBar
		}
		for i, f := range fs {
			if f.drop > rank {
				worst, rank = i, f.drop
			}
		}
		switch {
		case worst >= 0:
			fs = slices.Delete(fs, worst, worst+1)
		case withBar:
			withBar = false
		default:
			return string([]rune(text)[:cols])
		}
	}
}

func joinFields(fs []progressField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.text
	}
	return strings.Join(parts, " · ")
}

// bar draws [=====>    ] with inner columns between the brackets.
func bar(done, total int64, inner int) string {
	fill := inner
	if total > 0 {
		fill = int(min(done, total) * int64(inner) / total)
	}
	b := strings.Repeat("=", fill)
	if fill < inner {
		if fill > 0 {
			b = b[:fill-1] + ">"
		}
		b += strings.Repeat(" ", inner-fill)
	}
	return "[" + b + "]"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func percent(done, total int64) int64 {
	if total <= 0 {
		return 100
	}
	return min(done, total) * 100 / total
}

func formatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 1:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// formatDuration gives tenths of a second under 10s, seconds under an
// hour, minutes above: 6.8s, 4m10s, 10h32m.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// overall returns a cell's means when the pipeline has no aggregate stage
// (no confidence intervals: those come from the aggregate stage).
func (p *progress) overall(cell int) []aggregate.Row {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []aggregate.Row
	for _, c := range p.cols {
		k := progKey{cell, c}
		n := p.ns[k]
		mean := math.NaN()
		if n > 0 {
			mean = p.sums[k] / float64(n)
		}
		out = append(out, aggregate.Row{Stage: "", Group: "all", Metric: c, Items: p.cellItems[cell], N: n, Mean: mean, Sum: p.sums[k], Errors: p.merrs[k], MeanOK: mean, NOK: n,
			CILow: math.NaN(), CIHigh: math.NaN()})
	}
	return out
}
