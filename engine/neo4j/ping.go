package neo4j

import (
	"context"
	"fmt"
)

// Ping verifies the driver can reach the server when the driver offers it
// (the real driver does; test fakes need not).
func (e *Executor) Ping(ctx context.Context) error {
	if v, ok := e.driver.(interface {
		VerifyConnectivity(context.Context) error
	}); ok {
		if err := v.VerifyConnectivity(ctx); err != nil {
			return fmt.Errorf("neo4j cannot be reached: %v", err)
		}
	}
	return nil
}

// VerifyConnectivity lets Ping reach the real driver.
func (d realDriver) VerifyConnectivity(ctx context.Context) error { return d.d.VerifyConnectivity(ctx) }
