package falkordb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evalflow/evalflow/engine"
)

// The tests share one server, started by scripts/falkordb-server.sh (which
// installs valkey-server and the module when they are missing) and
// stopped when they end. Without one, tests that need it fail under
// CI=true and are skipped, saying why, otherwise.
var (
	serverAddr string
	serverBolt string
	serverErr  error
)

const moviesGraph = "movies"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "falkordb-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	script := filepath.Join(repoRoot(), "scripts", "falkordb-server.sh")
	// A server that starts but cannot take the movies graph for a reason
	// of its own (a timeout, a lost connection: not an error reply, which
	// would be an engine bug) is stopped and replaced (at most three
	// tries), each failure printed with the server's log so a CI log shows
	// why.
	for attempt := 1; attempt <= 3; attempt++ {
		serverAddr, serverBolt, serverErr = "", "", nil
		out, err := exec.Command("bash", script, "start", dir).Output()
		if err != nil {
			serverErr = fmt.Errorf("%s start: %v: %s", script, err, exitStderr(err))
			break
		}
		serverAddr = strings.TrimSpace(string(out))
		b, _ := os.ReadFile(filepath.Join(dir, "bolt_addr"))
		serverBolt = strings.TrimSpace(string(b))
		if err := loadMovies(); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "valkey.log"))
			serverErr = fmt.Errorf("loading the movies graph into %s (try %d): %v", serverAddr, attempt, err)
			fmt.Fprintf(os.Stderr, "%v\nserver log:\n%s\n", serverErr, log)
			if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "falkordb-server.sh stop: %v: %s\n", err, out)
			}
			serverAddr = ""
			var reply redis.Error
			if errors.As(err, &reply) {
				break
			}
			continue
		}
		break
	}
	code := m.Run()
	if serverAddr != "" {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "falkordb-server.sh stop: %v: %s\n", err, out)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}

// MoviesFile is the path of the movies graph the tests load.
func moviesFile() string {
	return filepath.Join(repoRoot(), "engine", "cypher", "testdata", "movies.cypher")
}

func loadMovies() error {
	e, err := New(engine.Config{Options: map[string]any{"addr": serverAddr}})
	if err != nil {
		return err
	}
	defer e.Close()
	text, err := os.ReadFile(moviesFile())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Delete(ctx, moviesGraph); err != nil {
		return err
	}
	return e.Load(ctx, moviesGraph, string(text))
}

// needServer returns the shared server's address, or ends the test:
// failing under CI=true, skipping (with the reason) otherwise.
func needServer(t testing.TB) string {
	t.Helper()
	if serverErr != nil || serverAddr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("FalkorDB is needed and could not be started: %v", serverErr)
		}
		t.Skipf("FalkorDB could not be started (CI=true makes this a failure): %v", serverErr)
	}
	return serverAddr
}

// newExec returns an executor on the shared server, closed when t ends.
func newExec(t testing.TB, cfg engine.Config) *Executor {
	t.Helper()
	addr := needServer(t)
	if cfg.Options == nil {
		cfg.Options = map[string]any{}
	}
	cfg.Options["addr"] = addr
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
