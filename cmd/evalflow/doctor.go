package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/evalflow/evalflow/engine/falkordb"
	"github.com/evalflow/evalflow/engine/pandas"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/llm"
)

// check is one line of evalflow doctor: an engine or a model provider,
// whether it is ready on this machine, what was found, and, when it is
// not ready, the one command (or setting) that makes it so.
type check struct {
	Kind   string `json:"kind"` // "engine" or "provider"
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: evalflow doctor [-format text|json]\n\nSays, for every engine kind and model provider, whether it is ready on\nthis machine, and if not the one command to run. It changes nothing and\nexits 0 once it could check everything (readiness is information).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitConfig
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evalflow doctor: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "evalflow doctor: -format must be text or json, got %q\n", *format)
		return exitConfig
	}
	checks := append(engineChecks(ctx), providerChecks()...)
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"checks": checks}); err != nil {
			fmt.Fprintf(stderr, "evalflow doctor: %v\n", err)
			return exitRun
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		state := "ready"
		if !c.Ready {
			state = "run: " + c.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Kind, c.Name, state, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return exitRun
	}
	return exitOK
}

// engineChecks looks at what each engine kind needs, without starting a
// server or installing anything (the pandas sandbox is started once, as
// its check).
func engineChecks(ctx context.Context) []check {
	out := []check{
		{Kind: "engine", Name: "sqlite", Ready: true, Detail: "embedded"},
		{Kind: "engine", Name: "duckdb", Ready: true, Detail: "embedded"},
	}

	pg := check{Kind: "engine", Name: "postgres", Ready: true}
	if bin := findPostgresBin(); bin != "" {
		pg.Detail = "give the engine a dsn (a running server), or let it start a private one with initdb/pg_ctl from " + bin
	} else {
		pg.Detail = "needs a running server: set the engine's dsn option (or PGHOST); initdb/pg_ctl not found for a private one"
		pg.Ready = os.Getenv("PGHOST") != "" || os.Getenv("DATABASE_URL") != ""
		pg.Fix = "sudo apt-get install postgresql"
	}
	out = append(out, pg)

	sp := check{Kind: "engine", Name: "sparql", Detail: "any SPARQL endpoint (the endpoint option), or the embedded Oxigraph"}
	st := sparql.CheckSetup()
	switch {
	case st.Node == "":
		sp.Detail = "the embedded Oxigraph needs Node.js 18+ and npm (an endpoint URL works without them)"
		sp.Fix = sparql.NodeInstall
	case st.Dir != "":
		sp.Ready = true
		sp.Detail = fmt.Sprintf("embedded Oxigraph installed in %s (node %s)", st.Dir, st.Node)
	case st.NPM != "" && st.Install != "":
		sp.Ready = true
		sp.Detail = fmt.Sprintf("embedded Oxigraph: the first run installs oxigraph@%s from npm into %s", sparql.OxigraphVersion(), st.Install)
	default:
		sp.Detail = "the embedded Oxigraph installs itself with npm on first use, and npm is not on PATH"
		sp.Fix = sparql.NodeInstall
	}
	out = append(out, sp)

	fk := check{Kind: "engine", Name: "falkordb", Ready: true}
	srv, serr := falkordb.FindServer("")
	mod, merr := falkordb.FindModule("")
	switch {
	case serr != nil && merr != nil:
		fk.Ready, fk.Detail = false, "neither valkey-server (or redis-server) nor the falkordb.so module is installed (needed for start = true; addr works without them)"
	case serr != nil:
		fk.Ready, fk.Detail = false, "valkey-server (or redis-server) is not on PATH (needed for start = true)"
	case merr != nil:
		fk.Ready, fk.Detail = false, "the falkordb.so module is not installed (needed for start = true); EVALFLOW_FALKORDB_MODULE may name it"
	default:
		fk.Detail = fmt.Sprintf("private server: %s with %s", srv, mod)
	}
	if !fk.Ready {
		fk.Fix = falkordb.InstallCommand
	}
	out = append(out, fk)

	out = append(out, check{Kind: "engine", Name: "neo4j", Ready: true,
		Detail: "driver embedded; needs a running server's URI (the uri option; -var neo4j_uri=bolt://HOST:7687 in the Cypher pipelines)"})

	pd := check{Kind: "engine", Name: "pandas", Ready: true, Detail: "sandbox: bubblewrap + " + pandas.DefaultPython + " with pandas"}
	if err := pandasCheck(ctx); err != nil {
		pd.Ready, pd.Detail, pd.Fix = false, err.Error(), pandas.InstallCommand
	}
	out = append(out, pd)
	return out
}

// pandasCheck starts the default sandbox once; ctx ending first counts as
// not ready.
func pandasCheck(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- pandas.Check() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// findPostgresBin returns the directory holding initdb and pg_ctl: on
// PATH, or Debian's /usr/lib/postgresql/*/bin.
func findPostgresBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// providerChecks says which hosted providers have a key in the
// environment (never printing it) and how a local server is used.
func providerChecks() []check {
	var out []check
	for _, p := range []string{"openai", "anthropic", "gemini"} {
		env := llm.DefaultKeyEnv(p)
		c := check{Kind: "provider", Name: p}
		names := []string{env}
		if p == "gemini" {
			names = append(names, "GOOGLE_API_KEY")
		}
		for _, n := range names {
			if os.Getenv(n) != "" {
				c.Ready, c.Detail = true, "key in $"+n
				break
			}
		}
		if !c.Ready {
			c.Detail = "no key: $" + strings.Join(names, " and $") + " not set (a model block's api_key_env may name another variable)"
			c.Fix = "export " + env + "=…"
		}
		out = append(out, c)
	}
	out = append(out, check{Kind: "provider", Name: "openai-compatible", Ready: true,
		Detail: "a local server (vLLM, Ollama, llama.cpp): set base_url in the model block, e.g. http://localhost:11434/v1; checked before the first item"})
	return out
}
