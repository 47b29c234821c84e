package falkordb

import (
	"context"
	"fmt"
)

// Ping asks the server for PONG: a FalkorDB that is down fails the run
// before any item.
func (e *Executor) Ping(ctx context.Context) error {
	if err := e.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("falkordb at %s cannot be reached: %v (start it, or set start = true to let evalflow start one)", e.Addr(), err)
	}
	return nil
}
