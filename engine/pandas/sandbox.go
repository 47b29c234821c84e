package pandas

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// sandbox holds the settings of one executor's sandboxes. It is immutable
// after init.
type sandbox struct {
	python     string
	bwrap      string
	memoryMB   int
	cpuSeconds int // 0: the query timeout + 1 s
	fileMB     int
	tmpMB      int
	processes  int
	openFiles  int
	audit      bool
	startup    time.Duration
	uid, gid   int // the host ids bubblewrap runs as; -1: the caller's
	args       []string
}

// job is the runner's stdin document.
type job struct {
	Mode    string     `json:"mode"`
	Code    string     `json:"code,omitempty"`
	Inputs  []jobInput `json:"inputs,omitempty"`
	MaxRows int        `json:"max_rows,omitempty"`
	Audit   bool       `json:"audit"`
	Limits  *jobLimits `json:"limits,omitempty"`
}

type jobInput struct {
	Name   string `json:"name"`
	FD     int    `json:"fd"`
	Format string `json:"format"`
}

// jobLimits are the rlimits the runner sets before compiling the code.
type jobLimits struct {
	AddressSpace int64 `json:"address_space"`
	CPUSeconds   int   `json:"cpu_seconds"`
	FileSize     int64 `json:"file_size"`
	Processes    int   `json:"processes"`
	OpenFiles    int   `json:"open_files"`
}

// nobody is the uid and gid bubblewrap runs as when evalflow runs as root.
const nobody = 65534

// init resolves the binaries, the ids and the fixed bubblewrap arguments.
func (s *sandbox) init() error {
	if err := supported(); err != nil {
		return err
	}
	if s.bwrap != "" && engine.IsCommandName(s.bwrap) {
		p, err := exec.LookPath(s.bwrap)
		if err != nil {
			return fmt.Errorf("pandas: bubblewrap %q is not on PATH (%v); install it with `%s`, or set the bwrap option to its path", s.bwrap, err, InstallCommand)
		}
		s.bwrap = p
	}
	if s.bwrap == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			if _, serr := os.Stat("/usr/bin/bwrap"); serr != nil {
				return fmt.Errorf("pandas: the sandbox needs bubblewrap (bwrap), which is not installed; install it with `%s`", InstallCommand)
			}
			p = "/usr/bin/bwrap"
		}
		s.bwrap = p
	}
	if engine.IsCommandName(s.python) {
		// A command name: the sandbox runs the interpreter by its path.
		p, err := exec.LookPath(s.python)
		if err != nil {
			return fmt.Errorf("pandas: python interpreter %q is not on PATH (%v); install it with `%s`, or set the python option to its path", s.python, err, InstallCommand)
		}
		s.python = p
	}
	if _, err := os.Stat(s.python); err != nil {
		return fmt.Errorf("pandas: python interpreter %s: %v; install it with `%s`", s.python, err, InstallCommand)
	}
	s.uid, s.gid = -1, -1
	if os.Geteuid() == 0 {
		s.uid, s.gid = nobody, nobody
	}
	a := []string{
		"--unshare-all", "--unshare-user", "--die-with-parent", "--disable-userns", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
	}
	for _, d := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + d
		st, err := os.Lstat(p)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		case st.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	a = append(a,
		"--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
		"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--proc", "/proc", "--dev", "/dev",
		"--size", fmt.Sprint(int64(s.tmpMB)<<20), "--perms", "1777", "--tmpfs", "/tmp",
		"--remount-ro", "/",
		"--uid", fmt.Sprint(nobody), "--gid", fmt.Sprint(nobody),
		"--hostname", "evalflow-sandbox", "--chdir", "/tmp",
		"--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "HOME", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "TZ", "UTC",
		"--setenv", "OMP_NUM_THREADS", "1",
		"--setenv", "OPENBLAS_NUM_THREADS", "1",
		"--setenv", "MKL_NUM_THREADS", "1",
		"--setenv", "MPLBACKEND", "Agg",
		"--", s.python, "-I", "-B", "-c", runnerScript,
	)
	s.args = a
	return nil
}

// rlimits returns the limits for a query with the given timeout.
func (s *sandbox) rlimits(timeout time.Duration) *jobLimits {
	cpu := s.cpuSeconds
	if cpu == 0 {
		cpu = int(math.Ceil(timeout.Seconds())) + 1
	}
	return &jobLimits{
		AddressSpace: int64(s.memoryMB) << 20,
		CPUSeconds:   cpu,
		FileSize:     int64(s.fileMB) << 20,
		Processes:    s.processes,
		OpenFiles:    s.openFiles,
	}
}

// response is the runner's result document.
type response struct {
	OK        bool         `json:"ok"`
	Error     *pyError     `json:"error"`
	Shape     string       `json:"shape"`
	Source    string       `json:"source"`
	Columns   []respColumn `json:"columns"`
	Rows      [][]any      `json:"rows"`
	Truncated bool         `json:"truncated"`
	Tables    []respTable  `json:"tables"`
	// Stdout and Stderr are the code's own output, cut at OutputCap.
	Stdout, Stderr string `json:"-"`
}

type respColumn struct {
	Name    string `json:"name"`
	Dtype   string `json:"dtype"`
	Type    string `json:"type"`
	NotNull bool   `json:"not_null"`
}

type respTable struct {
	Name    string       `json:"name"`
	Columns []respColumn `json:"columns"`
}

// capped keeps the first n bytes written to it and discards the rest, so a
// child that prints without end never blocks on a full pipe.
type capped struct {
	buf bytes.Buffer
	n   int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.cut = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	if c.cut {
		return c.buf.String() + "\n[output cut at 64 KiB]"
	}
	return c.buf.String()
}

// channel reads the result pipe: the "ready" line, then the document.
type channel struct {
	ready chan struct{}
	done  chan struct{}
	doc   []byte
	err   error
}

func readChannel(r io.Reader) *channel {
	c := &channel{ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		br := bufio.NewReader(io.LimitReader(r, ResultCap+1))
		readyClosed := false
		defer func() {
			if !readyClosed {
				close(c.ready)
			}
		}()
		first, err := br.ReadBytes('\n')
		if string(first) == "ready\n" {
			close(c.ready)
			readyClosed = true
			first = nil
		}
		if err == nil {
			rest, rerr := io.ReadAll(br)
			first = append(first, rest...)
			err = rerr
		}
		if err == io.EOF {
			err = nil
		}
		c.doc, c.err = first, err
		// Drain whatever else arrives so the writer never blocks.
		_, _ = io.Copy(io.Discard, r)
	}()
	return c
}

// run starts one sandbox for j with the given input files (fd 4 onwards),
// waits for the runner's "ready" line within the startup timeout, then
// gives the code timeout more. The returned error is an *engine.Error for
// a timeout, cancellation or a sandbox that died without an answer; a
// response with OK false carries the code's own error.
func (s *sandbox) run(ctx context.Context, j job, inputs []input, timeout time.Duration) (*response, error) {
	files := []*os.File{nil}
	for i, in := range inputs {
		j.Inputs = append(j.Inputs, jobInput{Name: in.name, FD: 4 + i, Format: "csv"})
		files = append(files, in.f)
	}
	stdin, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "pandas: " + err.Error(), Err: err}
	}
	defer pr.Close()
	cmd := exec.Command(s.bwrap, s.args...)
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &capped{n: OutputCap}, &capped{n: OutputCap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Dir = "/"
	files[0] = pw
	cmd.ExtraFiles = files
	cmd.SysProcAttr = sysProcAttr(s.uid, s.gid)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "pandas: starting bubblewrap: " + err.Error(), Err: err}
	}
	pw.Close()
	ch := readChannel(pr)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var killed, timedOut bool
	kill := func() {
		if !killed {
			killed = true
			killGroup(cmd.Process.Pid)
		}
	}
	startup := time.NewTimer(s.startup)
	defer startup.Stop()
	var deadline <-chan time.Time // the code's timeout, armed by "ready"
	ready := ch.ready
	var waitErr error
wait:
	for {
		select {
		case <-ready:
			ready = nil
			startup.Stop()
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		case <-startup.C:
			if ready != nil {
				timedOut = true
				kill()
			}
		case <-deadline:
			timedOut = true
			kill()
		case <-ctx.Done():
			kill()
			waitErr = <-exited
			break wait
		case waitErr = <-exited:
			break wait
		}
	}
	<-ch.done
	switch {
	case ctx.Err() != nil && !timedOut:
		return nil, ctxError(ctx)
	case timedOut && ready != nil:
		return nil, &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("timeout: the sandbox did not start within %s; its process group was killed", s.startup)}
	case timedOut:
		return nil, &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("timeout: the code ran longer than %s; its process group was killed", timeout)}
	}
	if ch.err == nil && len(bytes.TrimSpace(ch.doc)) > 0 {
		if len(ch.doc) > ResultCap {
			return nil, &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("ResultTooLarge: the answer is larger than %d MiB of JSON; set max_rows", ResultCap>>20)}
		}
		var res response
		dec := json.NewDecoder(bytes.NewReader(ch.doc))
		dec.UseNumber()
		if err := dec.Decode(&res); err != nil {
			return nil, &engine.Error{Class: item.ClassExecution, Msg: "pandas: unreadable answer from the runner: " + err.Error(), Err: err}
		}
		res.Stdout, res.Stderr = stdout.String(), stderr.String()
		return &res, nil
	}
	return nil, exitError(waitErr, stderr.String(), s, timeout)
}

// exitError explains a sandbox that ended without an answer.
func exitError(waitErr error, stderr string, s *sandbox, timeout time.Duration) error {
	tail := strings.TrimSpace(stderr)
	if len(tail) > 2000 {
		tail = "…" + tail[len(tail)-2000:]
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled() && ws.Signal() == syscall.SIGXCPU:
				return &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("timeout: the code used more than %d s of CPU time (RLIMIT_CPU)", s.rlimits(timeout).CPUSeconds), Err: waitErr}
			case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
				return &engine.Error{Class: item.ClassExecution, Msg: "Killed: the Python process was killed (SIGKILL), most likely by the kernel's out-of-memory killer", Err: waitErr}
			case ws.Signaled():
				return &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("Crashed: the Python process died of signal %s; stderr: %s", ws.Signal(), tail), Err: waitErr}
			}
		}
		// bwrap reports a child killed by a signal as exit status 128+N.
		if c := ee.ExitCode(); c > 128 && c < 128+65 {
			sig := syscall.Signal(c - 128)
			switch sig {
			case syscall.SIGXCPU:
				return &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("timeout: the code used more than %d s of CPU time (RLIMIT_CPU)", s.rlimits(timeout).CPUSeconds), Err: waitErr}
			case syscall.SIGKILL:
				return &engine.Error{Class: item.ClassExecution, Msg: "Killed: the Python process was killed (SIGKILL), most likely by the kernel's out-of-memory killer", Err: waitErr}
			}
			return &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("Crashed: the Python process died of signal %s; stderr: %s", sig, tail), Err: waitErr}
		}
		if strings.HasPrefix(tail, "bwrap:") {
			return &engine.Error{Class: item.ClassExecution, Msg: "pandas: the sandbox failed: " + tail, Err: waitErr}
		}
		return &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("Exited: the code ended the interpreter (exit status %d) without an answer; stderr: %s", ee.ExitCode(), tail), Err: waitErr}
	}
	if waitErr != nil {
		return &engine.Error{Class: item.ClassExecution, Msg: "pandas: " + waitErr.Error() + "; stderr: " + tail, Err: waitErr}
	}
	return &engine.Error{Class: item.ClassExecution, Msg: "Exited: the code ended the interpreter without an answer; stderr: " + tail}
}
