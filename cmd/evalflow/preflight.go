package main

import (
	"context"

	"github.com/evalflow/evalflow/planner"
)

// preflight checks, before any item runs, that what the run needs is
// there: engines start, endpoints answer, declared directories exist. A
// plan that cannot check (no Preflight) passes.
func preflight(ctx context.Context, pl *planner.Plan) error {
	if pf, ok := any(pl).(interface{ Preflight(context.Context) error }); ok {
		return pf.Preflight(ctx)
	}
	return nil
}
