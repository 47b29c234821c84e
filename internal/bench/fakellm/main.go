// Command fakellm serves llm/fake's OpenAI-compatible endpoint with a fixed
// latency on 127.0.0.1 until it is interrupted, for the CLI's model-call
// throughput benchmark (scripts/bench-cli.sh, docs/benchmarks-baseline.md):
// every answer comes after exactly -latency, so C calls in flight can do at
// most C / latency calls a second, and evalflow's share of that ideal is
// what is measured.
//
//	go run ./internal/bench/fakellm -latency 200ms -url-file /tmp/url
//
// It writes its base URL (…/v1) to -url-file (or stdout) once it listens,
// and on SIGINT/SIGTERM prints the calls it answered and the most it had in
// flight at once, the connections clients opened and the clients'
// turnaround (fake.Server.Turnaround: from an answer to the next request
// on its connection) to stderr. SIGUSR1 prints the same and resets the
// turnaround, so one server can report run by run.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/evalflow/evalflow/llm/fake"
)

func main() {
	latency := flag.Duration("latency", 200_000_000, "fixed latency of every answer")
	urlFile := flag.String("url-file", "", "write the base URL here (default: stdout)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server's life here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	srv := fake.New(fake.OpenAI, fake.WithLatency(*latency), fake.WithoutRequestLog())
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile+".tmp", []byte(srv.URL+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
		if err := os.Rename(*urlFile+".tmp", *urlFile); err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
	} else {
		fmt.Println(srv.URL)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	for sig := range sigs {
		fmt.Fprintf(os.Stderr, "fakellm: %d calls, at most %d in flight, %d connections opened; %v\n", srv.Calls(), srv.PeakInFlight(), srv.Conns(), srv.Turnaround())
		if sig != syscall.SIGUSR1 {
			break
		}
		srv.ResetTurnaround()
	}
	srv.Close()
}
