//go:build race

package pandas

import "time"

// raceSlack widens the kill-latency bounds of the containment tests under
// the race detector, which slows the Go side (the reaper, the pipes) by
// several times on a 2-core machine; the bounds still fail a runaway.
const raceSlack = 3 * time.Second
