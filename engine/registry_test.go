package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
)

func TestRegistryPathOptions(t *testing.T) {
	r := &engine.Registry{}
	fn := func(context.Context, engine.Config) (engine.Executor, error) { return nil, nil }
	paths := []engine.PathOption{{Name: "files", Kind: engine.DataPath}, {Name: "node", Kind: engine.ProgramPath}}
	r.Register("a", fn, paths...)
	r.Register("b", fn)
	if d := cmp.Diff(paths, r.PathOptions("a")); d != "" {
		t.Errorf("PathOptions(a) (-want +got):\n%s", d)
	}
	if got := r.PathOptions("b"); got != nil {
		t.Errorf("PathOptions(b) = %v", got)
	}
	if got := r.PathOptions("unknown"); got != nil {
		t.Errorf("PathOptions(unknown) = %v", got)
	}
	r.PathOptions("a")[0].Name = "changed"
	if r.PathOptions("a")[0].Name != "files" {
		t.Error("PathOptions returned the registry's own slice")
	}
	for name, bad := range map[string][]engine.PathOption{
		"no name":   {{Kind: engine.DataPath}},
		"no kind":   {{Name: "x"}},
		"duplicate": {{Name: "x", Kind: engine.DataPath}, {Name: "x", Kind: engine.InstallPath}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			r.Register("c-"+name, fn, bad...)
		}()
	}
}

// TestResolvePaths: relative paths join the directory, absolute ones and
// empty strings stay, program names without a slash stay, every shape is
// copied, values of other types pass through for the engine to reject,
// and data paths outside a root are refused naming the element.
func TestResolvePaths(t *testing.T) {
	dir := t.TempDir()
	data := engine.PathOption{Name: "files", Kind: engine.DataPath}
	prog := engine.PathOption{Name: "node", Kind: engine.ProgramPath}
	inst := engine.PathOption{Name: "dir", Kind: engine.InstallPath}
	for _, tc := range []struct {
		name      string
		o         engine.PathOption
		in, want  any
		root, err string
	}{
		{name: "relative", o: data, in: "g.ttl", want: filepath.Join(dir, "g.ttl")},
		{name: "dot-dot stays lexical", o: inst, in: "../x/so", want: filepath.Join(filepath.Dir(dir), "x/so")},
		{name: "absolute", o: data, in: "/abs/g.ttl", want: "/abs/g.ttl"},
		{name: "empty", o: data, in: "", want: ""},
		{name: "command name", o: prog, in: "node", want: "node"},
		{name: "program path", o: prog, in: "bin/node", want: filepath.Join(dir, "bin/node")},
		{name: "list", o: data, in: []any{"a.ttl", 3, "/b.ttl"}, want: []any{filepath.Join(dir, "a.ttl"), 3, "/b.ttl"}},
		{name: "string list", o: data, in: []string{"a.ttl"}, want: []string{filepath.Join(dir, "a.ttl")}},
		{name: "map", o: data, in: map[string]any{"g": "g.cypher", "n": true}, want: map[string]any{"g": filepath.Join(dir, "g.cypher"), "n": true}},
		{name: "string map", o: data, in: map[string]string{"g": "g.cypher"}, want: map[string]string{"g": filepath.Join(dir, "g.cypher")}},
		{name: "other type", o: data, in: 7, want: 7},
		{name: "inside root", o: data, in: []any{"in/a.ttl"}, root: filepath.Join(dir, "in"), want: []any{filepath.Join(dir, "in/a.ttl")}},
		{name: "outside root", o: data, in: []any{"in/a.ttl", "b.ttl"}, root: filepath.Join(dir, "in"), err: `option files[1] ("b.ttl"): path ` + filepath.Join(dir, "b.ttl") + " resolves outside its root"},
		{name: "map outside root", o: data, in: map[string]any{"g": "/etc/x"}, root: filepath.Join(dir, "in"), err: `option files["g"] ("/etc/x")`},
		{name: "installs ignore the root", o: inst, in: "/opt/x", root: filepath.Join(dir, "in"), want: "/opt/x"},
		{name: "programs ignore the root", o: prog, in: "/usr/bin/node", root: filepath.Join(dir, "in"), want: "/usr/bin/node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := engine.ResolvePaths(tc.o, tc.in, dir, tc.root)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	in := []any{"a.ttl"}
	if _, err := engine.ResolvePaths(data, in, dir, ""); err != nil || in[0] != "a.ttl" {
		t.Errorf("the input changed: %v (%v)", in, err)
	}
}
