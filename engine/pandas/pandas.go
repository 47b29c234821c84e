// Package pandas is evalflow's text-to-pandas engine: it runs generated
// Python/pandas code in a sandbox and turns its answer into a typed
// *table.Table.
//
// # The code and its answer
//
// Query.Text is Python source. The answer is, in order of precedence: the
// value of the code's last statement when that is an expression (for a last
// line print(x), the x printed); otherwise a variable named result; otherwise,
// when the last statement assigns one name (answer = ...), that name's
// value. Code with none of these fails with "NoResult: ...".
//
// Query.DB names the input tables: a CSV or Parquet file, a directory (every
// *.csv and *.parquet directly in it) or a glob pattern. Each table is loaded
// with pandas.read_csv and exposed as dfs["NAME"] (NAME is the file name
// without its extension) and, when NAME is a Python identifier, as a
// variable NAME; when there is exactly one table it is also df. pd and np
// are imported. An empty DB runs the code with no tables.
//
// Debian 12 ships neither pyarrow nor fastparquet, so Parquet inputs are
// converted to CSV by evalflow (dataset.ReadRows) before the sandbox starts;
// the converted file is cached per executor and deleted by Close.
//
// # The sandbox
//
// Every query runs /usr/bin/python3 with an embedded runner script (see
// runner.py) under bubblewrap: new user, PID, network, IPC, UTS and cgroup
// namespaces (--unshare-all: no network but an isolated loopback), a root
// file system holding only read-only /usr (and its /bin, /lib* links),
// /etc/alternatives and /etc/ld.so.cache, a fresh /proc and minimal /dev,
// and a size-limited empty tmpfs on /tmp; the root is remounted read-only.
// No home directory, repository or dataset path is visible: the input
// tables are opened by evalflow and passed in as open read-only file
// descriptors (fd 4 onwards) that the runner closes once loaded. When
// evalflow runs as root, bubblewrap itself runs as uid/gid 65534 (nobody),
// so RLIMIT_NPROC applies; --die-with-parent, --disable-userns and
// --cap-drop ALL are set. The runner sets rlimits (address space, CPU
// seconds, file size, processes, open files, no core files) after loading
// the tables and before compiling the code, and installs a Python audit
// hook that refuses network access, process creation and writes outside
// /tmp with a SandboxViolation (item.ClassSafety). The process group is
// killed (SIGKILL) when the query times out; the PID namespace takes every
// process the code started with it.
//
// The answer comes back as JSON on fd 3, a pipe, so the code's prints
// (stdout and stderr, each kept up to 64 KiB for diagnostics) cannot
// corrupt it.
//
// # Normal forms
//
// A DataFrame becomes a table with its columns in order; a Series one
// column (named after the Series, else "value"); a scalar a 1×1 table with
// column "result"; a list, tuple, set or 1-D array one column "value"; a
// dict the columns key and value. An index other than the default
// RangeIndex becomes leading columns (its names, else "index" or
// "level_N"), so groupby results keep their keys. MultiIndex column labels
// are joined with "_". Column types follow dtypes: bool → bool, int*/uint*
// → int, float* → float, datetime/timedelta → string; object and category
// columns take the type their values share (any when they differ). Values:
// NaN, None, NA and NaT → nil; numpy scalars → int64/float64/bool; ±inf →
// ±Inf; Timestamps → "2006-01-02 15:04:05[.fffffffff]" (UTC plus "+00" when
// timezone-aware, as the DuckDB engine writes timestamps); dates →
// "2006-01-02"; Timedeltas → pandas' text ("1 days 02:00:00"); Decimals →
// their text; nested lists and dicts → JSON text.
//
// # Errors
//
// An error from the code is an *engine.Error whose message is Python's
// exception line, "Type: message", optionally followed by " (line N)" for
// the line of the code that raised it (ExceptionType parses it; a *Failure
// is in its chain). Exception types outside builtins are qualified with
// their module ("pandas.errors.ParserError"). Classes: SyntaxError,
// IndentationError and TabError → item.ClassSyntax; KeyError (a missing
// column, almost always) → item.ClassSchema; a SandboxViolation, or an
// OSError for EROFS, EACCES, EPERM, ECONNREFUSED, ENETUNREACH, EHOSTUNREACH
// or EADDRNOTAVAIL → item.ClassSafety; the timeout or the CPU limit →
// item.ClassTimeout; everything else, MemoryError and the other resource
// limits included → item.ClassExecution.
package pandas

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "pandas"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultPython         = "/usr/bin/python3"
	DefaultMemoryMB       = 2048
	DefaultFileSizeMB     = 16
	DefaultTmpMB          = 64
	DefaultProcesses      = 32
	DefaultOpenFiles      = 256
	DefaultStartupTimeout = 60 * time.Second
	// OutputCap bounds how much of the code's stdout and stderr is kept.
	OutputCap = 64 << 10
	// ResultCap bounds the JSON document read back from the result channel.
	ResultCap = 256 << 20
)

//go:embed runner.py
var runnerScript string

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) {
		e, err := New(cfg)
		var se *SetupError
		if errors.As(err, &se) {
			// Not installed is no configuration error: the run's
			// preflight (Ping) stops before any item, exit 2.
			return &Executor{setupErr: se}, nil
		}
		return e, err
	}, PathOptions...)
}

// PathOptions are the options whose values are paths, registered with the
// kind: both name programs, so a value without a slash is a command looked
// up on PATH and one with a slash a path that a pipeline's relative value
// resolves against the pipeline's directory (engine.ResolvePaths).
var PathOptions = []engine.PathOption{
	{Name: "python", Kind: engine.ProgramPath},
	{Name: "bwrap", Kind: engine.ProgramPath},
}

// Executor runs pandas code in a sandbox. It implements engine.Executor,
// engine.Preparer, engine.Describer and io.Closer and is safe for
// concurrent use: at most MaxOpen sandboxes run at once. Create it with
// New; the caller owns it and must Close it (which deletes converted
// Parquet inputs).
type Executor struct {
	timeout time.Duration
	maxRows int
	sb      sandbox
	slots   chan struct{}
	conv    *converter
	// setupErr is why the sandbox cannot start (set only by the
	// registered constructor, which returns such an executor instead of
	// failing): Ping reports it and every query fails with it.
	setupErr *SetupError
}

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
)

// New returns an Executor for cfg after checking that the sandbox starts
// (bubblewrap, the Python interpreter and its pandas module). Accepted
// Options:
//
//	python           the interpreter: a path, or a command name (no slash)
//	                 looked up on PATH (default /usr/bin/python3)
//	bwrap            bubblewrap: a path, or a command name looked up on
//	                 PATH (default: bwrap on PATH, else /usr/bin/bwrap)
//	memory_mb        address-space limit, MiB (default 2048)
//	cpu_seconds      CPU-time limit of the code (default: the timeout + 1 s)
//	file_size_mb     largest file the code may write, MiB (default 16)
//	tmp_mb           size of the /tmp tmpfs, MiB (default 64)
//	processes        RLIMIT_NPROC: processes and threads (default 32)
//	open_files       RLIMIT_NOFILE (default 256)
//	audit            the audit hook that refuses network, processes and
//	                 writes outside /tmp (default true)
//	startup_timeout  seconds allowed for Python to start and load the
//	                 tables before the query timeout starts (default 60)
//
// Unknown options are an error.
func New(cfg engine.Config) (*Executor, error) {
	e := &Executor{timeout: cfg.Timeout, maxRows: cfg.MaxRows}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("pandas: max_rows must not be negative, got %d", e.maxRows)
	}
	sb := sandbox{
		python:    DefaultPython,
		memoryMB:  DefaultMemoryMB,
		fileMB:    DefaultFileSizeMB,
		tmpMB:     DefaultTmpMB,
		processes: DefaultProcesses,
		openFiles: DefaultOpenFiles,
		audit:     true,
		startup:   DefaultStartupTimeout,
	}
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Options[k]
		var err error
		switch k {
		case "python":
			sb.python, err = optString(k, v)
		case "bwrap":
			sb.bwrap, err = optString(k, v)
		case "memory_mb":
			sb.memoryMB, err = optPositive(k, v)
		case "cpu_seconds":
			sb.cpuSeconds, err = optPositive(k, v)
		case "file_size_mb":
			sb.fileMB, err = optNonNegative(k, v)
		case "tmp_mb":
			sb.tmpMB, err = optPositive(k, v)
		case "processes":
			sb.processes, err = optPositive(k, v)
		case "open_files":
			sb.openFiles, err = optPositive(k, v)
		case "audit":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("pandas: option audit must be a bool, got %T", v)
			}
			sb.audit = b
		case "startup_timeout":
			var n int
			n, err = optPositive(k, v)
			sb.startup = time.Duration(n) * time.Second
		default:
			err = fmt.Errorf("pandas: unknown option %q (known: audit, bwrap, cpu_seconds, file_size_mb, memory_mb, open_files, processes, python, startup_timeout, tmp_mb)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sb.init(); err != nil {
		return nil, &SetupError{err}
	}
	e.sb = sb
	n := cfg.MaxOpen
	if n <= 0 {
		n = runtime.NumCPU()
	}
	e.slots = make(chan struct{}, n)
	e.conv = &converter{}
	ctx, cancel := context.WithTimeout(context.Background(), sb.startup)
	defer cancel()
	if err := e.probe(ctx); err != nil {
		e.conv.close()
		return nil, &SetupError{err}
	}
	return e, nil
}

func optString(k string, v any) (string, error) {
	s, ok := v.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("pandas: option %s must be a non-empty string, got %v", k, v)
	}
	return s, nil
}

func optPositive(k string, v any) (int, error) {
	n, ok := engine.IntOption(v)
	if !ok || n <= 0 {
		return 0, fmt.Errorf("pandas: option %s must be a positive integer, got %v", k, v)
	}
	return n, nil
}

func optNonNegative(k string, v any) (int, error) {
	n, ok := engine.IntOption(v)
	if !ok || n < 0 {
		return 0, fmt.Errorf("pandas: option %s must be a non-negative integer, got %v", k, v)
	}
	return n, nil
}

// Close deletes the converted Parquet inputs. Queries still running keep
// their open descriptors; later queries convert again.
func (e *Executor) Close() error {
	if e.conv == nil {
		return nil
	}
	return e.conv.close()
}

// acquire takes a sandbox slot, or fails when ctx ends first.
func (e *Executor) acquire(ctx context.Context) error {
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

func (e *Executor) release() { <-e.slots }

func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &engine.Error{Class: item.ClassTimeout, Msg: "timeout: the deadline passed before the pandas sandbox started", Err: ctx.Err()}
	}
	return &engine.Error{Class: item.ClassCancelled, Msg: "query cancelled", Err: ctx.Err()}
}

// probe checks that the sandbox starts and finds pandas.
func (e *Executor) probe(ctx context.Context) error {
	res, err := e.sb.run(ctx, job{Mode: "probe"}, nil, e.sb.startup)
	if err != nil {
		return fmt.Errorf("pandas: the sandbox cannot start (%s under %s): %v (see docs/engines.md, pandas)", e.sb.python, e.sb.bwrap, err)
	}
	if !res.OK {
		return fmt.Errorf("pandas: %s in the sandbox: %s; install pandas with `%s`", e.sb.python, res.Error.message(), InstallCommand)
	}
	return nil
}

// Execute runs q.Text with the tables named by q.DB and returns its answer
// in the normal forms of the package doc, at most MaxRows rows (Truncated
// set when there were more). The timeout bounds the code itself; starting
// Python and loading the tables have their own startup_timeout before it.
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	if e.setupErr != nil {
		return nil, e.setupErr.engineError()
	}
	if strings.TrimSpace(q.Text) == "" {
		return nil, &engine.Error{Class: item.ClassSyntax, Msg: "SyntaxError: empty code: no Python statement"}
	}
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	inputs, err := e.conv.inputs(q.DB, q.Root)
	if err != nil {
		return nil, err
	}
	defer closeAll(inputs)
	if err := e.acquire(ctx); err != nil {
		return nil, err
	}
	defer e.release()
	j := job{Mode: "run", Code: q.Text, MaxRows: maxRows, Audit: e.sb.audit, Limits: e.sb.rlimits(timeout)}
	res, err := e.sb.run(ctx, j, inputs, timeout)
	if err != nil {
		return nil, err
	}
	if !res.OK {
		return nil, res.Error.engineError()
	}
	return res.table()
}

// Prepare compiles q.Text in the sandbox without running it: a nil error
// means Python accepts its syntax. Names are not resolved (Python resolves
// them only when the code runs).
func (e *Executor) Prepare(ctx context.Context, q engine.Query) error {
	if e.setupErr != nil {
		return e.setupErr.engineError()
	}
	if strings.TrimSpace(q.Text) == "" {
		return &engine.Error{Class: item.ClassSyntax, Msg: "SyntaxError: empty code: no Python statement"}
	}
	timeout, _ := q.Limits(e.timeout, e.maxRows)
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	res, err := e.sb.run(ctx, job{Mode: "compile", Code: q.Text}, nil, timeout)
	if err != nil {
		return err
	}
	if !res.OK {
		return res.Error.engineError()
	}
	return nil
}

// Describe loads the tables named by db in the sandbox and returns their
// columns: DeclType is the pandas dtype read_csv inferred ("int64",
// "object", ...) and Type its table type; NotNull is true when the column
// holds no missing value. Tables come in name order.
func (e *Executor) Describe(ctx context.Context, db string) (*engine.Schema, error) {
	if e.setupErr != nil {
		return nil, e.setupErr.engineError()
	}
	inputs, err := e.conv.inputs(db, "") // the location was checked by the caller (nodes.Engine.Locate)
	if err != nil {
		return nil, err
	}
	defer closeAll(inputs)
	if err := e.acquire(ctx); err != nil {
		return nil, err
	}
	defer e.release()
	res, err := e.sb.run(ctx, job{Mode: "describe"}, inputs, e.timeout)
	if err != nil {
		return nil, err
	}
	if !res.OK {
		return nil, res.Error.engineError()
	}
	s := &engine.Schema{}
	for _, t := range res.Tables {
		ti := engine.TableInfo{Name: t.Name}
		for _, c := range t.Columns {
			typ, _ := table.ParseType(c.Type)
			ti.Columns = append(ti.Columns, engine.ColumnInfo{Name: c.Name, DeclType: c.Dtype, Type: typ, NotNull: c.NotNull})
		}
		s.Tables = append(s.Tables, ti)
	}
	return s, nil
}

var _ engine.Languager = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "pandas" }
