package engine

import "context"

// Pinger is implemented by engines that can tell, before any item runs,
// whether they can serve queries at all: a server that answers, an
// embedded engine whose runtime is installed. The run fails before its
// first item when Ping fails (exit 2), with the error's fix.
type Pinger interface {
	Ping(ctx context.Context) error
}
