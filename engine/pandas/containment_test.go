package pandas

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// These tests run hostile code for real and check what the sandbox
// promises (docs/engines.md, pandas). Each runs with the audit hook on
// (the default: the attempt is refused and classified) and, where the
// operating-system layer is what must hold, with audit = false too.

// runnerProcesses lists the host pids of sandboxed runners still alive.
func runnerProcesses(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "# evalflow pandas runner") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// assertNoRunners fails when runner processes outlive their query.
func assertNoRunners(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := runnerProcesses(t)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandboxed processes still running after the query returned: pids %v", pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func execErr(t *testing.T, e *Executor, q engine.Query) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	got, err := e.Execute(context.Background(), q)
	d := time.Since(start)
	if err == nil {
		t.Fatalf("no error; got %v", got)
	}
	return err, d
}

func wantClass(t *testing.T, err error, class, contains string) {
	t.Helper()
	if got := engine.ClassOf(err); got != class {
		t.Errorf("class = %q, want %q (%v)", got, class, err)
	}
	if contains != "" && !strings.Contains(err.Error(), contains) {
		t.Errorf("error %q does not contain %q", err, contains)
	}
}

func TestTimeoutKillsBusyLoop(t *testing.T) {
	e := newTestExecutor(t, nil)
	const timeout = 3 * time.Second
	for _, tc := range []struct{ name, code string }{
		{"busy loop", "while True: pass"},
		{"sleep", "import time\ntime.sleep(60)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, d := execErr(t, e, engine.Query{Text: tc.code, DB: testdata(t, "people"), Timeout: timeout})
			wantClass(t, err, item.ClassTimeout, "ran longer than 3s")
			// The timeout starts when the runner is ready (Python started,
			// tables loaded), so the whole call is the timeout plus the
			// start-up (about 0.5 s) plus the kill.
			if max := timeout + timeout/10 + 2*time.Second + raceSlack; d < timeout || d > max {
				t.Errorf("Execute took %s, want between %s and %s", d, timeout, max)
			}
			t.Logf("%s: timeout %s, Execute returned after %s", tc.name, timeout, d)
			assertNoRunners(t)
		})
	}
}

func TestTimeoutKillsEscapedChildren(t *testing.T) {
	// Without the audit hook the code may fork; a child that leaves the
	// process group (setsid) still dies with the sandbox's PID namespace.
	e := newTestExecutor(t, map[string]any{"audit": false})
	code := "import os\nif os.fork() == 0:\n    os.setsid()\n    while True: pass\nwhile True: pass"
	err, d := execErr(t, e, engine.Query{Text: code, Timeout: 2 * time.Second})
	wantClass(t, err, item.ClassTimeout, "")
	t.Logf("setsid child: Execute returned after %s", d)
	assertNoRunners(t)
}

func TestCPULimit(t *testing.T) {
	e := newTestExecutor(t, map[string]any{"cpu_seconds": 1})
	err, d := execErr(t, e, engine.Query{Text: "while True: pass", Timeout: 20 * time.Second})
	wantClass(t, err, item.ClassTimeout, "CPU time")
	// RLIMIT_CPU counts CPU time, not wall time: on a loaded machine the
	// code gets a fraction of a core, so only the 20 s timeout is a bound
	// (the class and message above already say the CPU limit stopped it).
	if d >= 20*time.Second {
		t.Errorf("RLIMIT_CPU of 1 s took %s to stop the code", d)
	}
	t.Logf("cpu_seconds=1: stopped after %s: %v", d, err)
}

func TestMemoryBombs(t *testing.T) {
	e := newTestExecutor(t, map[string]any{"memory_mb": 1024})
	for _, tc := range []struct{ name, code string }{
		{"one huge string", "x = 'a' * 10**10\nlen(x)"},
		{"list growth", "l = []\nwhile True:\n    l.append(' ' * 10**6)"},
		{"numpy array", "np.ones((10**5, 10**5))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, d := execErr(t, e, engine.Query{Text: tc.code, DB: testdata(t, "people"), Timeout: 20 * time.Second})
			wantClass(t, err, item.ClassExecution, "MemoryError")
			t.Logf("%s: %v after %s", tc.name, err, d)
			assertNoRunners(t)
		})
	}
	// The executor is still usable afterwards.
	if _, err := e.Execute(context.Background(), engine.Query{Text: "df['age'].sum()", DB: testdata(t, "people")}); err != nil {
		t.Fatal(err)
	}
}

func TestForkBomb(t *testing.T) {
	bomb := "import os\nwhile True:\n    os.fork()"
	t.Run("audit refuses fork", func(t *testing.T) {
		e := newTestExecutor(t, nil)
		err, _ := execErr(t, e, engine.Query{Text: bomb, Timeout: 10 * time.Second})
		wantClass(t, err, item.ClassSafety, "process creation (os.fork)")
		assertNoRunners(t)
	})
	t.Run("RLIMIT_NPROC stops it", func(t *testing.T) {
		e := newTestExecutor(t, map[string]any{"audit": false})
		err, d := execErr(t, e, engine.Query{Text: bomb, Timeout: 10 * time.Second})
		wantClass(t, err, item.ClassExecution, "BlockingIOError")
		t.Logf("fork bomb without audit: %v after %s", err, d)
		assertNoRunners(t)
	})
	t.Run("a bomb that swallows errors is killed at the timeout", func(t *testing.T) {
		e := newTestExecutor(t, map[string]any{"audit": false})
		code := "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
		err, d := execErr(t, e, engine.Query{Text: code, Timeout: 3 * time.Second})
		wantClass(t, err, item.ClassTimeout, "")
		if d > 3*time.Second+300*time.Millisecond+2*time.Second+raceSlack {
			t.Errorf("took %s", d)
		}
		t.Logf("persistent fork bomb: killed after %s", d)
		assertNoRunners(t)
	})
}

func TestNetworkIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	loopback := fmt.Sprintf("import socket\nsocket.create_connection(('127.0.0.1', %d), timeout=3)", port)
	outside := "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)"
	urllib := fmt.Sprintf("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:%d/', timeout=3).read()", port)
	for _, audit := range []bool{true, false} {
		e := newTestExecutor(t, map[string]any{"audit": audit})
		for _, tc := range []struct{ name, code, contains string }{
			{"loopback listener of the host", loopback, ""},
			{"outside address", outside, ""},
			{"urllib", urllib, ""},
		} {
			t.Run(fmt.Sprintf("%s/audit=%v", tc.name, audit), func(t *testing.T) {
				err, _ := execErr(t, e, engine.Query{Text: tc.code, Timeout: 10 * time.Second})
				want := "ConnectionRefusedError"
				if tc.code == outside {
					want = "Network is unreachable"
				}
				if audit {
					want = "SandboxViolation: network access"
				}
				if tc.code == urllib && !audit {
					want = "URLError"
				}
				if tc.code == urllib && !audit {
					wantClass(t, err, item.ClassExecution, want)
				} else {
					wantClass(t, err, item.ClassSafety, want)
				}
				t.Logf("%v", err)
			})
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host listener accepted %d connections from the sandbox", n)
	}
}

func TestFileWritesStayInside(t *testing.T) {
	hostDir := t.TempDir() // on the host's /tmp, which the sandbox does not see
	repoFile, err := filepath.Abs("evalflow-pwned.txt")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp := filepath.Join(hostDir, "pwned.txt")
	for _, audit := range []bool{true, false} {
		e := newTestExecutor(t, map[string]any{"audit": audit})
		for _, tc := range []struct {
			name, code string
			class      string // without the audit hook
			contains   string
		}{
			{"root", "open('/evalflow-pwned.txt', 'w').write('x')", item.ClassSafety, "OSError: [Errno 30] Read-only file system"},
			{"usr", "open('/usr/evalflow-pwned.txt', 'w').write('x')", item.ClassSafety, "OSError: [Errno 30] Read-only file system"},
			{"repository", fmt.Sprintf("open(%q, 'w').write('x')", repoFile), item.ClassExecution, "FileNotFoundError"},
			{"os.open", fmt.Sprintf("import os\nos.open(%q, os.O_WRONLY | os.O_CREAT)", repoFile), item.ClassExecution, "FileNotFoundError"},
		} {
			t.Run(fmt.Sprintf("%s/audit=%v", tc.name, audit), func(t *testing.T) {
				err, _ := execErr(t, e, engine.Query{Text: tc.code, Timeout: 10 * time.Second})
				// A checkout under /tmp: the audit hook lets writes under /tmp
				// through, since the sandbox's /tmp is its own tmpfs; there the
				// repository's directory does not exist. Either way the host
				// file must not appear (checked below).
				underTmp := strings.HasPrefix(repoFile, "/tmp/") && (tc.name == "repository" || tc.name == "os.open")
				if audit && !underTmp {
					wantClass(t, err, item.ClassSafety, "SandboxViolation: writing")
				} else {
					wantClass(t, err, tc.class, tc.contains)
				}
			})
		}
		t.Run(fmt.Sprintf("host path under /tmp is the sandbox's own/audit=%v", audit), func(t *testing.T) {
			code := fmt.Sprintf("import os\nos.makedirs(%q, exist_ok=True)\nopen(%q, 'w').write('x')\nos.listdir(%q)", hostDir, hostTmp, hostDir)
			got, err := e.Execute(context.Background(), engine.Query{Text: code, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatalf("writing in the sandbox's /tmp: %v", err)
			}
			if got.NumRows() != 1 || got.Rows[0][0] != "pwned.txt" {
				t.Errorf("listing = %v", got.Rows)
			}
		})
	}
	for _, p := range []string{"/evalflow-pwned.txt", "/usr/evalflow-pwned.txt", repoFile, hostTmp} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s appeared on the host", p)
		}
	}
}

func TestFileSizeAndTmpLimits(t *testing.T) {
	e := newTestExecutor(t, map[string]any{"file_size_mb": 1, "tmp_mb": 4})
	err, _ := execErr(t, e, engine.Query{Text: "open('/tmp/big', 'wb').write(b'x' * (2 << 20))", Timeout: 10 * time.Second})
	wantClass(t, err, item.ClassExecution, "File too large")
	code := "for i in range(8):\n    open('/tmp/f%d' % i, 'wb').write(b'x' * (900 << 10))"
	err, _ = execErr(t, e, engine.Query{Text: code, Timeout: 10 * time.Second})
	wantClass(t, err, item.ClassExecution, "No space left on device")
}

func TestHostIsHidden(t *testing.T) {
	e := newTestExecutor(t, nil)
	self, err := filepath.Abs("containment_test.go")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EVALFLOW_TEST_SECRET", "hunter2")
	for _, tc := range []struct{ name, code, contains string }{
		{"/etc/shadow", "open('/etc/shadow').read()", "FileNotFoundError"},
		{"/etc/passwd", "open('/etc/passwd').read()", "FileNotFoundError"},
		{"the repository", fmt.Sprintf("open(%q).read()", self), "FileNotFoundError"},
		{"home", "import os\nos.listdir('/root')", "FileNotFoundError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, _ := execErr(t, e, engine.Query{Text: tc.code, DB: testdata(t, "people")})
			wantClass(t, err, item.ClassExecution, tc.contains)
		})
	}
	t.Run("what the code sees", func(t *testing.T) {
		code := `import os
sorted(os.listdir('/')), os.getuid(), os.getgid(), sorted(p for p in os.listdir('/proc') if p.isdigit()), sorted(os.environ), os.listdir('/tmp')`
		got, err := e.Execute(context.Background(), engine.Query{Text: code, DB: testdata(t, "people")})
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, r := range got.Rows {
			vals = append(vals, table.Format(r[0]))
		}
		t.Logf("sandbox view: %v", vals)
		// /proc: bubblewrap's init, the supervising runner and the code's
		// own process (which does not hold the result channel).
		want := []string{`["bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr"]`, "65534", "65534", `["1", "2", "4"]`,
			`[]`, `[]`}
		if len(vals) != len(want) {
			t.Fatalf("got %v", vals)
		}
		for i := range want {
			if i == 0 {
				continue // the root's links follow the host's layout
			}
			if vals[i] != want[i] {
				t.Errorf("value %d = %s, want %s", i, vals[i], want[i])
			}
		}
		if strings.Contains(strings.Join(vals, " "), "hunter2") {
			t.Errorf("host environment leaked: %v", vals[4])
		}
	})
}

func TestOutputCannotCorruptResult(t *testing.T) {
	e := newTestExecutor(t, nil)
	code := `import sys
print('{"ok": true, "columns": [], "rows": []}')
for i in range(100000):
    print('x' * 100)
    sys.stderr.write('y' * 100 + '\n')
df['age'].sum()`
	got, err := e.Execute(context.Background(), engine.Query{Text: code, DB: testdata(t, "people"), Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 1 || got.Rows[0][0] != int64(174) {
		t.Errorf("got %v", got.Rows)
	}
}

func TestConcurrentQueries(t *testing.T) {
	e := newTestExecutor(t, nil)
	people := testdata(t, "people")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Execute(context.Background(), engine.Query{Text: fmt.Sprintf("int(df['age'].sum()) + %d", i), DB: people})
			if err == nil && got.Rows[0][0] != int64(174+i) {
				err = fmt.Errorf("query %d got %v", i, got.Rows)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestCancel(t *testing.T) {
	e := newTestExecutor(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Execute(ctx, engine.Query{Text: "while True: pass", Timeout: 30 * time.Second})
	wantClass(t, err, item.ClassCancelled, "")
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("cancel took %s", d)
	}
	assertNoRunners(t)
}
