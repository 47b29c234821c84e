package sinks

import (
	"io"
	"sort"
	"sync"
)

// Kind is a sink kind (a sink block's kind). A table kind writes rows
// (Open); a per-item kind (PerItem) renders one line per finished item,
// by a renderer its owner registers (rundir's qas_jsonl), and writes only
// the items table. Stdout says whether "-" (standard output) is allowed.
type Kind struct {
	Name    string
	Stdout  bool
	PerItem bool
	// Open writes rows to out (a file Open created, or standard output);
	// OpenFile, when set, writes to a path itself (Parquet seeks).
	Open     func(out io.Writer, s Schema, opts ...Option) (Writer, error)
	OpenFile func(path string, s Schema, opts ...Option) (Writer, error)
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// Register adds a sink kind (from init functions).
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	kinds[k.Name] = k
}

// Lookup returns a registered kind.
func Lookup(name string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// KindNames lists the registered kinds, sorted.
func KindNames() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func init() {
	Register(Kind{Name: "parquet", OpenFile: NewParquet})
	Register(Kind{Name: "arrow", Stdout: true, Open: NewArrowIPC})
	Register(Kind{Name: "jsonl", Stdout: true, Open: func(out io.Writer, s Schema, _ ...Option) (Writer, error) { return NewJSONL(out, s) }})
	// The QAS Evaluation System's evaluation-results.jsonl: one line per item, rendered by
	// the run directory (rundir/qas.go).
	Register(Kind{Name: "qas_jsonl", PerItem: true})
}
