package falkordb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is a valkey-server (or redis-server) child process with the
// FalkorDB module loaded, listening on a free loopback port with
// persistence off and its files in a temporary directory. The process that
// started it owns it and must Stop it; on Linux the child is also killed
// when the starting thread's process dies.
type Server struct {
	cmd  *exec.Cmd
	dir  string
	addr string
	bolt string

	once    sync.Once
	stopErr error
	done    chan struct{} // closed when the process has exited
}

// StartServer starts a server: bin is the server binary ("valkey-server"
// on PATH when empty) and module the path of falkordb.so. It returns once
// the server answers PING, or an error carrying the tail of the server's
// log. FalkorDB's Bolt port is enabled on a second free port (BoltAddr).
func StartServer(ctx context.Context, bin, module string) (*Server, error) {
	if bin == "" {
		bin = "valkey-server"
	}
	if module == "" {
		return nil, errors.New("falkordb: start needs the path of falkordb.so: set the module option or EVALFLOW_FALKORDB_MODULE (scripts/falkordb-server.sh module installs it and prints the path)")
	}
	if _, err := os.Stat(module); err != nil {
		return nil, fmt.Errorf("falkordb: module %s: %w (scripts/falkordb-server.sh module installs it)", module, err)
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("falkordb: %s not found (scripts/falkordb-server.sh install installs valkey-server): %w", bin, err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := startOnce(ctx, path, module)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func startOnce(ctx context.Context, bin, module string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	bolt, err := freeBoltPort()
	if err != nil {
		return nil, err
	}
	return startOn(ctx, bin, module, port, bolt)
}

// startOn starts a server on port with Bolt on bolt.
func startOn(ctx context.Context, bin, module string, port, bolt int) (*Server, error) {
	dir, err := os.MkdirTemp("", "evalflow-falkordb-")
	if err != nil {
		return nil, err
	}
	log := filepath.Join(dir, "server.log")
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", log, "--daemonize", "no",
		"--loadmodule", module, "BOLT_PORT", strconv.Itoa(bolt))
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("falkordb: start %s: %w", bin, err)
	}
	s := &Server{cmd: cmd, dir: dir, addr: "127.0.0.1:" + strconv.Itoa(port), bolt: "127.0.0.1:" + strconv.Itoa(bolt), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.addr) {
			// The port was free when drawn; another process may have taken
			// it before this server bound it, and answer PING in its place.
			pid, err := serverPID(s.addr)
			if err == nil && pid == cmd.Process.Pid {
				return s, nil
			}
			s.Stop()
			if err != nil {
				return nil, fmt.Errorf("falkordb: the server on port %d answers PING but not INFO server: %v", port, err)
			}
			return nil, fmt.Errorf("falkordb: the server on port %d reports process_id %d, not the started %s (pid %d): another server holds the port, or %s does not exec the server itself", port, pid, bin, cmd.Process.Pid, bin)
		}
		select {
		case <-s.done:
			tail := logTail(log)
			s.Stop()
			return nil, fmt.Errorf("falkordb: %s exited during start: %s", bin, tail)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tail := logTail(log)
			s.Stop()
			return nil, fmt.Errorf("falkordb: %s did not answer PING within 10s: %s", bin, tail)
		}
	}
}

// Addr returns the server's "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// BoltAddr returns the "127.0.0.1:PORT" of FalkorDB's Bolt listener (which
// FalkorDB binds on every interface, not only loopback).
func (s *Server) BoltAddr() string { return s.bolt }

// Stop terminates the server (SIGTERM, then SIGKILL after two seconds),
// waits for it and removes its directory. It is idempotent.
func (s *Server) Stop() error {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(2 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.stopErr = os.RemoveAll(s.dir)
	})
	return s.stopErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freeBoltPort returns a free loopback port for FalkorDB's Bolt listener.
// FalkorDB 4.16 silently ignores a BOLT_PORT above 32767 (it is read as a
// signed 16-bit number), and the kernel's ephemeral ports lie above that,
// so the port is drawn from 20000–32767 instead.
func freeBoltPort() (int, error) {
	for range 100 {
		p := 20000 + rand.IntN(32768-20000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, errors.New("falkordb: no free port between 20000 and 32767 for Bolt")
}

func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.TrimSpace(line) == "+PONG"
}

// serverPID returns the process_id the server at addr reports in INFO
// server.
func serverPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("no process_id in its reply: %w", err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
}

func logTail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
