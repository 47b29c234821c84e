package planner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/engine"
)

// Preflight checks, before any item runs, what the whole run depends on:
// every engine can start or be reached (engine.Pinger), every engine's
// root directory exists, the dataset exists, and every model block's
// base_url accepts a connection (nothing is sent: no tokens are spent).
// Its error names the engine, path or endpoint and the fix; the CLI exits
// 2 without running an item.
func (pl *Plan) Preflight(ctx context.Context) error {
	var errs []error
	if pl.Dataset != nil && pl.Dataset.Source != "" {
		if _, err := os.Stat(pl.Dataset.Source); err != nil {
			// The real cause first: the file and where the pipeline names it.
			path, r := pl.Dataset.Source, pl.Dataset.SourceRange
			if abs, aerr := filepath.Abs(path); aerr == nil {
				path = abs
			}
			what := "cannot be read: " + err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				what = "does not exist"
			}
			errs = append(errs, fmt.Errorf("%s:%d:%d: dataset.%s: the dataset file %s %s",
				r.Filename, r.Start.Line, r.Start.Column, pl.Dataset.Name, path, what))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pl.Engines)) {
		e := pl.Engines[name]
		if root := e.Root(); root != "" {
			st, err := os.Stat(root)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("engine.%s: the databases directory %s does not exist (create it or point the pipeline at it, e.g. -var databases=DIR)", name, root))
				continue
			case !st.IsDir():
				errs = append(errs, fmt.Errorf("engine.%s: root %s is not a directory", name, root))
				continue
			}
		}
		if p, ok := e.Exec.(engine.Pinger); ok {
			pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err := p.Ping(pctx)
			cancel()
			if err != nil {
				errs = append(errs, fmt.Errorf("engine.%s (kind %s): %w", name, e.Block.Kind, err))
			}
		}
	}
	for _, m := range pl.Pipeline.Models {
		if !m.Value.Type().IsObjectType() || !m.Value.Type().HasAttribute("base_url") {
			continue
		}
		v := m.Value.GetAttr("base_url")
		if v.IsNull() || !v.IsKnown() || v.Type() != cty.String || v.AsString() == "" {
			continue
		}
		if err := engine.Dial(ctx, v.AsString()); err != nil {
			errs = append(errs, fmt.Errorf("model.%s: the endpoint %s cannot be reached: %v", m.Name, v.AsString(), err))
		}
	}
	return errors.Join(errs...)
}
