package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/evalflow/evalflow/planner"
)

// setuper is implemented by engines that install what they need on first
// use (the embedded SPARQL engine's npm package). Setup may take a while
// and prints its own one-line notice; its error names the command that
// makes the engine ready.
type setuper interface {
	Setup(ctx context.Context) error
}

// preflight checks, before any item runs, that what the run needs is
// there: engines set themselves up and start, endpoints answer, declared
// directories exist. A failure is the run's: the CLI exits 2 before any
// item and writes no items.parquet. A plan that cannot check (no
// Preflight) passes.
func preflight(ctx context.Context, pl *planner.Plan) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(pl.Engines)) {
		if s, ok := pl.Engines[name].Exec.(setuper); ok {
			if err := s.Setup(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				errs = append(errs, fmt.Errorf("engine.%s (kind %s): %w", name, pl.Engines[name].Block.Kind, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if pf, ok := any(pl).(interface{ Preflight(context.Context) error }); ok {
		return pf.Preflight(ctx)
	}
	return nil
}
