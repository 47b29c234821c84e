package sparql

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// The npm manifest and lock file of the embedded server's one dependency,
// embedded so that a binary from `go install` can set itself up without a
// checkout.
var (
	//go:embed oxigraph/package.json
	packageJSON []byte
	//go:embed oxigraph/package-lock.json
	packageLock []byte
)

// NodeInstall is the command that installs Node.js and npm on Debian and
// Ubuntu, which the embedded engine needs.
const NodeInstall = "sudo apt-get install nodejs npm"

// OxigraphVersion is the version of the oxigraph npm package the embedded
// server runs (pinned by oxigraph/package-lock.json).
func OxigraphVersion() string {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(packageLock, &lock); err != nil {
		return "?"
	}
	return lock.Packages["node_modules/oxigraph"].Version
}

// CacheInstallDir is where the embedded engine installs its npm package on
// first use: <user cache dir>/evalflow/oxigraph-<hash of the lock file>, so
// a new pin gets a new directory. It is empty when the system has no user
// cache directory.
func CacheInstallDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(packageLock)
	return filepath.Join(base, "evalflow", "oxigraph-"+hex.EncodeToString(sum[:6]))
}

// installed reports whether dir holds node_modules/oxigraph.
func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", "oxigraph", "package.json"))
	return err == nil
}

// Setup describes how ready the embedded Oxigraph is without changing
// anything: the directory holding the npm package ("" when it is not
// installed anywhere evalflow looks), and whether node and npm are on PATH.
type Setup struct {
	Dir     string // where node_modules/oxigraph is, or ""
	Node    string // the node binary, or "" when missing
	NPM     string // the npm binary, or "" when missing
	Install string // where a first use installs the package
}

// CheckSetup reports the embedded engine's state with the default options.
func CheckSetup() Setup {
	s := Setup{Install: CacheInstallDir()}
	s.Dir, _ = lookupOxigraphDir("", true)
	if s.Dir == "" && s.Install != "" && installed(s.Install) {
		s.Dir = s.Install
	}
	s.Node, _ = exec.LookPath("node")
	s.NPM, _ = exec.LookPath("npm")
	return s
}

// installMu serialises installs within one process; rename makes them safe
// across processes.
var installMu sync.Mutex

// resolveDir returns the directory holding node_modules/oxigraph: found
// where lookupOxigraphDir looks, else in the user cache directory, else
// installed there now with `npm ci` (saying so on o.notice). It does not
// install when the oxigraph_dir option names a directory: that one is the
// user's. The result is remembered.
func (o *oxigraph) resolveDir(ctx context.Context) (string, error) {
	o.dirMu.Lock()
	defer o.dirMu.Unlock()
	if o.resolved != "" {
		return o.resolved, nil
	}
	dir, lookErr := lookupOxigraphDir(o.dir, !o.noCheckout)
	if lookErr == nil {
		o.resolved = dir
		return dir, nil
	}
	if o.dir != "" {
		return "", lookErr
	}
	target := o.installDir
	if target == "" {
		target = CacheInstallDir()
	}
	if target == "" {
		return "", lookErr
	}
	if installed(target) {
		o.resolved = target
		return target, nil
	}
	if err := install(ctx, target, o.node, o.notice); err != nil {
		return "", err
	}
	o.resolved = target
	return target, nil
}

// install runs `npm ci` for the embedded package.json and lock file in a
// fresh directory beside target and renames it into place, so that
// concurrent first uses (two runs at once) never see a half-installed
// package: the first rename wins and the others use its result.
func install(ctx context.Context, target, node string, notice io.Writer) error {
	installMu.Lock()
	defer installMu.Unlock()
	if installed(target) {
		return nil
	}
	if _, err := exec.LookPath(node); err != nil {
		return fmt.Errorf("sparql: the embedded SPARQL engine (Oxigraph) needs Node.js 18 or later and npm, and node is not on PATH; install them with `%s`", NodeInstall)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("sparql: the embedded SPARQL engine (Oxigraph) installs itself with npm on first use, and npm is not on PATH; install it with `%s`", NodeInstall)
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("sparql: cannot create %s for the SPARQL engine's npm package: %v", parent, err)
	}
	if notice != nil {
		fmt.Fprintf(notice, "evalflow: installing the SPARQL engine (oxigraph@%s from npm) into %s\n", OxigraphVersion(), target)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(target)+".tmp-")
	if err != nil {
		return fmt.Errorf("sparql: %v", err)
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	for name, b := range map[string][]byte{"package.json": packageJSON, "package-lock.json": packageLock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return fmt.Errorf("sparql: %v", err)
		}
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := strings.TrimSpace(out.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return fmt.Errorf("sparql: installing the SPARQL engine (npm ci of oxigraph@%s in %s) failed: %v: %s; fix the cause (npm needs to reach its registry) and run the same command again", OxigraphVersion(), tmp, err, msg)
	}
	if !installed(tmp) {
		return fmt.Errorf("sparql: npm ci in %s did not install node_modules/oxigraph", tmp)
	}
	if err := os.Rename(tmp, target); err != nil {
		if installed(target) {
			return nil // another process finished first
		}
		return fmt.Errorf("sparql: %v", err)
	}
	return nil
}
