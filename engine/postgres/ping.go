package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Ping connects with the DSN once: a server that is down or refuses the
// credentials fails the run before any item.
func (e *Executor) Ping(ctx context.Context) error {
	cfg := e.base.ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres at %s:%d cannot be reached: %v (start it, e.g. scripts/pg-test-cluster.sh, or fix -var dsn=...)", cfg.Host, cfg.Port, err)
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}
