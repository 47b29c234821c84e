package sparql

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/evalflow/evalflow/engine"
)

// Ping checks what the engine needs before any item: an endpoint that
// accepts a connection, or the embedded Oxigraph's Node.js and npm
// package, which it installs into the user cache directory when it is
// nowhere yet (see the package documentation). Its error names the
// command that fixes it.
func (e *Executor) Ping(ctx context.Context) error {
	if e.endpoint != "" {
		if err := engine.Dial(ctx, e.endpoint); err != nil {
			return fmt.Errorf("the SPARQL endpoint %s cannot be reached: %v", e.endpoint, err)
		}
		return nil
	}
	if e.ox != nil {
		if _, err := exec.LookPath(e.ox.node); err != nil {
			return fmt.Errorf("sparql: the embedded SPARQL engine (Oxigraph) needs Node.js 18 or later (%v); install it with `%s`", err, NodeInstall)
		}
		if _, err := e.ox.resolveDir(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Setup installs what the embedded engine needs when it is missing (the
// oxigraph npm package, into the user cache directory). The CLI calls it
// before the run's preflight with no deadline of its own, since npm may
// take a while; Ping would do the same within its own deadline.
func (e *Executor) Setup(ctx context.Context) error {
	if e.ox == nil {
		return nil
	}
	if _, err := exec.LookPath(e.ox.node); err != nil {
		return fmt.Errorf("sparql: the embedded SPARQL engine (Oxigraph) needs Node.js 18 or later (%v); install it with `%s`", err, NodeInstall)
	}
	_, err := e.ox.resolveDir(ctx)
	return err
}
