package falkordb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// InstallCommand installs what a private FalkorDB needs (valkey-server from
// Debian's backports and the falkordb.so module from npm), run from the
// root of an evalflow checkout.
const InstallCommand = "bash scripts/falkordb-server.sh install"

// moduleRel is where scripts/falkordb-server.sh's npm ci puts the module,
// relative to engine/cypher/falkordb-npm.
const moduleRel = "node_modules/@falkordblite/linux-x64/bin/falkordb.so"

// ModuleCandidates lists where the module is looked up when the module
// option is not set, in order: $EVALFLOW_FALKORDB_MODULE, the checkout
// this package was built from (engine/cypher/falkordb-npm, where
// scripts/falkordb-server.sh installs it), and beside the executable
// (../engine/cypher/falkordb-npm/…, ../share/evalflow/falkordb.so).
func ModuleCandidates() []string {
	var c []string
	if m := os.Getenv("EVALFLOW_FALKORDB_MODULE"); m != "" {
		c = append(c, m)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		c = append(c, filepath.Join(filepath.Dir(filepath.Dir(file)), "cypher", "falkordb-npm", filepath.FromSlash(moduleRel)))
	}
	if exe, err := os.Executable(); err == nil {
		base := filepath.Dir(filepath.Dir(exe))
		c = append(c, filepath.Join(base, "engine", "cypher", "falkordb-npm", filepath.FromSlash(moduleRel)),
			filepath.Join(base, "share", "evalflow", "falkordb.so"))
	}
	return c
}

// FindModule returns the path of falkordb.so: module when set (it must
// exist), else the first of ModuleCandidates that exists. Its error says
// where it looked and what to run.
func FindModule(module string) (string, error) {
	if module != "" {
		if _, err := os.Stat(module); err != nil {
			return "", fmt.Errorf("falkordb: the FalkorDB module %s does not exist (%v); run `%s` and leave the module option unset, or point it at falkordb.so", module, err, InstallCommand)
		}
		return module, nil
	}
	cands := ModuleCandidates()
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("falkordb: the FalkorDB module (falkordb.so) is not installed (looked in %s); run `%s` in the evalflow checkout, or set EVALFLOW_FALKORDB_MODULE to its path", strings.Join(cands, ", "), InstallCommand)
}

// FindServer returns the server binary: bin when set, else valkey-server,
// else redis-server (7.2 or later) on PATH.
func FindServer(bin string) (string, error) {
	names := []string{"valkey-server", "redis-server"}
	if bin != "" {
		names = []string{bin}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("falkordb: %s is not on PATH; run `%s` (it installs valkey-server)", strings.Join(names, " or "), InstallCommand)
}

// notReady is the error a query gets from an executor that could not set
// its server up.
func (e *Executor) notReady() error {
	if e.setupErr == nil {
		return nil
	}
	return &engine.Error{Class: item.ClassExecution, Msg: e.setupErr.Error(), Err: e.setupErr, Unavailable: true}
}
