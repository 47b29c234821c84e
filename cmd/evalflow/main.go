// Command evalflow evaluates text-to-query systems from declarative HCL
// pipelines. See README.md and `evalflow help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		// The first signal cancels the run: it stops within about two
		// seconds, keeping its finished items. A second one ends the
		// process at once; the items already flushed to the run's parts
		// stay readable and the same command resumes.
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "evalflow: second interrupt: exiting now")
		os.Exit(exitCancelled)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}
