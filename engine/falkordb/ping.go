package falkordb

import (
	"context"
	"fmt"
)

// Ping asks the server for PONG: a FalkorDB that is down, or a private one
// whose module or server binary is not installed, fails the run before any
// item.
func (e *Executor) Ping(ctx context.Context) error {
	if e.setupErr != nil {
		return e.setupErr
	}
	if err := e.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("falkordb at %s cannot be reached: %v (start it, or set start = true to let evalflow start one)", e.Addr(), err)
	}
	return nil
}
