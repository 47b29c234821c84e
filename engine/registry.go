package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// NewFunc builds an executor of one kind from its configuration. ctx bounds
// the construction (an engine that starts a server or loads data honours
// it); the executor does not keep it.
type NewFunc func(ctx context.Context, cfg Config) (Executor, error)

// Registry maps engine kind names ("sqlite", "duckdb", ...) to
// constructors. It is safe for concurrent use; the zero value is an empty,
// usable registry. Tests that must not see the built-in kinds use a fresh
// Registry instead of Default.
type Registry struct {
	mu    sync.RWMutex
	kinds map[string]NewFunc
}

// Default is the registry that engine packages register into from init().
var Default = &Registry{}

// Register adds a kind. It panics on an empty name, a nil constructor or a
// duplicate kind: all three are programming errors found at init time.
func (r *Registry) Register(kind string, fn NewFunc) {
	if kind == "" || fn == nil {
		panic("engine: Register with empty kind or nil constructor")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[kind]; dup {
		panic(fmt.Sprintf("engine: kind %q registered twice", kind))
	}
	if r.kinds == nil {
		r.kinds = map[string]NewFunc{}
	}
	r.kinds[kind] = fn
}

// Lookup returns the constructor of kind and whether it is registered.
func (r *Registry) Lookup(kind string) (NewFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	fn, ok := r.kinds[kind]
	return fn, ok
}

// Names returns the registered kinds in sorted order (for "did you mean"
// suggestions and help text).
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// New builds an executor of the given kind. An unknown kind is an error
// that lists the known ones.
func (r *Registry) New(ctx context.Context, kind string, cfg Config) (Executor, error) {
	fn, ok := r.Lookup(kind)
	if !ok {
		return nil, fmt.Errorf("unknown engine kind %q (known: %s)", kind, strings.Join(r.Names(), ", "))
	}
	return fn(ctx, cfg)
}

// Register adds a kind to Default; see Registry.Register.
func Register(kind string, fn NewFunc) { Default.Register(kind, fn) }

// Names returns the kinds registered in Default.
func Names() []string { return Default.Names() }

// New builds an executor of a kind registered in Default.
func New(ctx context.Context, kind string, cfg Config) (Executor, error) {
	return Default.New(ctx, kind, cfg)
}
