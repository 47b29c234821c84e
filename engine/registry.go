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

// PathKind says what the paths in a path option name, and so how a
// pipeline's value for it is resolved and checked (see PathOption).
type PathKind int

const (
	// DataPath names data the engine reads (RDF files, a Cypher load
	// script): a relative value resolves against the pipeline's directory,
	// and when the engine block declares a root the path must resolve,
	// symlinks followed, inside it.
	DataPath PathKind = iota + 1
	// InstallPath names part of an installation (a server module, an npm
	// package directory): resolved like DataPath, but not held to the root,
	// which bounds data, not programs.
	InstallPath
	// ProgramPath names a program. A value without a slash is a command
	// name, looked up on PATH by the engine and passed on unchanged ("node",
	// "python3"); a value with a slash is a path, resolved like InstallPath.
	ProgramPath
)

// String returns the kind's name as the documentation writes it.
func (k PathKind) String() string {
	switch k {
	case DataPath:
		return "data path"
	case InstallPath:
		return "install path"
	case ProgramPath:
		return "program"
	}
	return fmt.Sprintf("PathKind(%d)", int(k))
}

// PathOption declares one option of an engine kind whose value holds
// paths: a string, a list of strings, or a map whose values are strings
// (falkordb's load: graph key → file). A kind registers its path options
// with Register; the planner resolves them in a pipeline's options
// (ResolvePaths) before the kind's constructor sees them, so constructors
// receive absolute paths (or bare command names for ProgramPath).
type PathOption struct {
	Name string
	Kind PathKind
}

// Registry maps engine kind names ("sqlite", "duckdb", ...) to
// constructors and the options of each kind that hold paths. It is safe
// for concurrent use; the zero value is an empty, usable registry. Tests
// that must not see the built-in kinds use a fresh Registry instead of
// Default.
type Registry struct {
	mu    sync.RWMutex
	kinds map[string]kindEntry
}

type kindEntry struct {
	fn    NewFunc
	paths []PathOption
}

// Default is the registry that engine packages register into from init().
var Default = &Registry{}

// Register adds a kind with the options of it that hold paths. It panics
// on an empty name, a nil constructor, a duplicate kind, or a path option
// without a name or kind, or declared twice: all are programming errors
// found at init time.
func (r *Registry) Register(kind string, fn NewFunc, paths ...PathOption) {
	if kind == "" || fn == nil {
		panic("engine: Register with empty kind or nil constructor")
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if p.Name == "" || p.Kind < DataPath || p.Kind > ProgramPath || seen[p.Name] {
			panic(fmt.Sprintf("engine: kind %q: invalid or duplicate path option %+v", kind, p))
		}
		seen[p.Name] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[kind]; dup {
		panic(fmt.Sprintf("engine: kind %q registered twice", kind))
	}
	if r.kinds == nil {
		r.kinds = map[string]kindEntry{}
	}
	r.kinds[kind] = kindEntry{fn: fn, paths: append([]PathOption(nil), paths...)}
}

// Lookup returns the constructor of kind and whether it is registered.
func (r *Registry) Lookup(kind string) (NewFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[kind]
	return k.fn, ok
}

// PathOptions returns the path options kind registered, in the order it
// gave them (a copy; nil for an unknown kind or one without any).
func (r *Registry) PathOptions(kind string) []PathOption {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k := r.kinds[kind]
	if len(k.paths) == 0 {
		return nil
	}
	return append([]PathOption(nil), k.paths...)
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
func Register(kind string, fn NewFunc, paths ...PathOption) { Default.Register(kind, fn, paths...) }

// Names returns the kinds registered in Default.
func Names() []string { return Default.Names() }

// New builds an executor of a kind registered in Default.
func New(ctx context.Context, kind string, cfg Config) (Executor, error) {
	return Default.New(ctx, kind, cfg)
}
