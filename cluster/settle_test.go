package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestWhileSettling: opening a bucket is tried again only after a timeout
// of its own (the JetStream client's, or NATS's request timeout), at most
// settleAttempts times; any other error, success, or the caller's context
// ending stops it at once.
func TestWhileSettling(t *testing.T) {
	timeout := fmt.Errorf("object store x: %w", context.DeadlineExceeded)
	other := errors.New("insufficient resources")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		results []error // what each try returns; the last repeats
		tries   int
		want    error
	}{
		{"succeeds at once", context.Background(), []error{nil}, 1, nil},
		{"succeeds after two timeouts", context.Background(), []error{timeout, nats.ErrTimeout, nil}, 3, nil},
		{"times out every time", context.Background(), []error{timeout}, settleAttempts, timeout},
		{"other error", context.Background(), []error{timeout, other}, 2, other},
		{"caller's context ended", cancelled, []error{timeout}, 1, timeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			err := whileSettling(c.ctx, func() error {
				r := c.results[min(tries, len(c.results)-1)]
				tries++
				return r
			})
			if tries != c.tries || !errors.Is(err, c.want) && err != c.want {
				t.Errorf("tries %d, err %v; want %d tries, err %v", tries, err, c.tries, c.want)
			}
		})
	}
}
