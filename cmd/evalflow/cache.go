package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/store"
)

const cacheUsage = `Usage: evalflow cache [-dir DIR] stats|clear|explain KEY|gc [-max-bytes N]

  stats         entries and size of the LLM response cache (by model) and
                of the stage cache (query results)
  clear         remove every entry of both
  explain KEY   show what a key was computed from and what it holds: a model
                request and its response, or a query (engine, database
                content hash, text) and its result; KEY may be a prefix of
                8 or more characters
  gc            remove the least recently used entries until each cache's
                files hold at most -max-bytes (default
                $EVALFLOW_CACHE_MAX_BYTES, else 2 GiB; a run does this
                itself when it stored anything)

The caches live in DIR/llm and DIR/stages, DIR being $EVALFLOW_CACHE_DIR,
else the user cache directory's evalflow; a model block's cache_dir moves
its LLM cache. Each is a directory of append-only segment files, one per
writing process; several evalflow processes may use them at once.
`

// cmdCache inspects, trims or clears the LLM response cache and the stage
// cache.
func cmdCache(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cache", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, cacheUsage) }
	dir := fs.String("dir", "", "cache directory (holding llm/ and stages/); default $EVALFLOW_CACHE_DIR or the user cache directory")
	maxBytes := fs.Int64("max-bytes", -1, "for gc: the size in bytes each cache is trimmed to (0 empties it; default $EVALFLOW_CACHE_MAX_BYTES or 2 GiB)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitConfig
	}
	if len(pos) == 0 {
		fs.Usage()
		return exitConfig
	}
	root := store.Root()
	if *dir != "" {
		root = *dir
	}
	llmStore, err := cache.Open(filepath.Join(root, "llm"))
	if err != nil {
		fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
		return exitRun
	}
	stageDisk, err := store.Open(filepath.Join(root, "stages"))
	if err != nil {
		fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
		return exitRun
	}
	defer llmStore.Disk().Close()
	defer stageDisk.Close()
	results := nodes.NewResults(stageDisk, buildVersion())
	switch pos[0] {
	case "stats":
		st, err := llmStore.Stats()
		if err != nil {
			fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
			return exitRun
		}
		fmt.Fprintf(stdout, "llm cache    %s\nentries      %d\nbytes        %d\n", st.Path, st.Entries, st.Bytes)
		if ls, err := llmStore.Disk().Stats(); err == nil {
			fmt.Fprintf(stdout, "files        %d segments, %d bytes\n", ls.Segments, ls.DiskBytes)
		}
		if st.Entries > 0 {
			fmt.Fprintf(stdout, "oldest       %s\nnewest       %s\n", st.Oldest.Format("2006-01-02 15:04:05"), st.Newest.Format("2006-01-02 15:04:05"))
		}
		var models []string
		for m := range st.ByModel {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			fmt.Fprintf(stdout, "  %-40s %d\n", m, st.ByModel[m])
		}
		ss, err := stageDisk.Stats()
		if err != nil {
			fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
			return exitRun
		}
		fmt.Fprintf(stdout, "stage cache  %s\nentries      %d\nbytes        %d\nfiles        %d segments, %d bytes\n", ss.Dir, ss.Entries, ss.Bytes, ss.Segments, ss.DiskBytes)
		fmt.Fprintf(stdout, "bound        %d bytes each (EVALFLOW_CACHE_MAX_BYTES)\n", store.MaxBytes())
		return exitOK
	case "clear":
		n, err := llmStore.Clear()
		m, err2 := stageDisk.Clear()
		if err = errors.Join(err, err2); err != nil {
			fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
			return exitRun
		}
		fmt.Fprintf(stdout, "removed %d entries from %s and %d from %s\n", n, llmStore.Path(), m, stageDisk.Dir())
		return exitOK
	case "gc":
		bound := *maxBytes
		switch {
		case bound < -1:
			fmt.Fprintf(stderr, "evalflow cache: -max-bytes %d: give a size in bytes, 0 or more\n", bound)
			return exitConfig
		case bound == -1:
			bound = store.MaxBytes()
		}
		for _, d := range []*store.Store{llmStore.Disk(), stageDisk} {
			n, freed, err := d.GC(bound)
			if err != nil {
				fmt.Fprintf(stderr, "evalflow cache: %v\n", err)
				return exitRun
			}
			fmt.Fprintf(stdout, "%s: removed %d entries, %d bytes (bound %d)\n", d.Dir(), n, freed, bound)
		}
		return exitOK
	case "explain":
		if len(pos) != 2 {
			fmt.Fprint(stderr, cacheUsage)
			return exitConfig
		}
		if e, err := llmStore.Find(pos[1]); err == nil {
			b, _ := json.MarshalIndent(e, "", "  ")
			fmt.Fprintf(stdout, "%s\n", b)
			return exitOK
		}
		b, err := results.Explain(pos[1])
		if err != nil {
			fmt.Fprintf(stderr, "evalflow cache: %v (in neither %s nor %s)\n", err, llmStore.Path(), stageDisk.Dir())
			return exitRun
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	hint := ""
	if s := dsl.Suggest(pos[0], []string{"stats", "clear", "explain", "gc"}); s != "" {
		hint = fmt.Sprintf(" Did you mean %q?", s)
	}
	fmt.Fprintf(stderr, "evalflow cache: unknown action %q.%s\n\n%s", pos[0], hint, strings.TrimSpace(cacheUsage)+"\n")
	return exitConfig
}
