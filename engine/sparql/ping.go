package sparql

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/evalflow/evalflow/engine"
)

// Ping checks what the engine needs before any item: an endpoint that
// accepts a connection, or the embedded Oxigraph's Node.js and npm
// package (installed by make deps).
func (e *Executor) Ping(ctx context.Context) error {
	if e.endpoint != "" {
		if err := engine.Dial(ctx, e.endpoint); err != nil {
			return fmt.Errorf("the SPARQL endpoint %s cannot be reached: %v", e.endpoint, err)
		}
		return nil
	}
	if e.ox != nil {
		if _, err := lookupOxigraphDir(e.ox.dir); err != nil {
			return err
		}
		if _, err := exec.LookPath(e.ox.node); err != nil {
			return fmt.Errorf("sparql: the embedded Oxigraph engine needs Node.js 18 or later (%v); run make deps", err)
		}
	}
	return nil
}
