package sparql

import (
	"io"
	"sort"
)

// ServerPIDs returns the process ids of e's live embedded servers, sorted.
func ServerPIDs(e *Executor) []int {
	if e.ox == nil {
		return nil
	}
	e.ox.mu.Lock()
	defer e.ox.mu.Unlock()
	var out []int
	for s := range e.ox.live {
		if s.cmd.Process != nil {
			out = append(out, s.cmd.Process.Pid)
		}
	}
	sort.Ints(out)
	return out
}

// InstallInto makes e install (and look for) the npm package in dir only,
// never in the checkout, writing its notice to w.
func InstallInto(e *Executor, dir string, w io.Writer) {
	e.ox.noCheckout, e.ox.installDir, e.ox.notice = true, dir, w
}
