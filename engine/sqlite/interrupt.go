package sqlite

import (
	"context"
	"database/sql"
	"reflect"
	"sync"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The modernc driver interrupts a statement when the context of
// QueryContext ends, but only during the first step (the one QueryContext
// itself runs); rows.Next steps later with no interrupt armed, and
// database/sql cannot close the rows while Next runs. So a query whose first
// row comes at once and whose next row takes an hour would ignore its
// timeout. watch closes that gap: it reads the connection's sqlite3* handle
// (the driver's unexported conn.db field, read through reflect without
// unsafe) and calls sqlite3_interrupt on it when ctx ends, the same call the
// driver makes, with a fresh libc TLS as the driver does.
//
// TestInterruptHandle pins that the field exists in the driver version in
// go.mod; if it ever disappears, watch degrades to the driver's own
// first-step interrupt plus the per-row context check in readAll.

// handleOf returns the sqlite3* of a driver connection, or 0.
func handleOf(driverConn any) uintptr {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	f := dbField(v.Elem().Type())
	if f == nil {
		return 0
	}
	return uintptr(v.Elem().FieldByIndex(f).Uint())
}

// dbFields caches, per driver connection type, the index of its db field
// (nil: it has none of type uintptr).
var dbFields sync.Map // reflect.Type → []int

func dbField(t reflect.Type) []int {
	if f, ok := dbFields.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	if f, ok := t.FieldByName("db"); ok && f.Type.Kind() == reflect.Uintptr {
		idx = f.Index
	}
	dbFields.Store(t, idx)
	return idx
}

// watch arms an interrupt of conn's current statement for when ctx ends and
// returns a function that disarms it, and whether it could arm one (the
// driver's sqlite3* handle was found). Once ctx ends it interrupts, and
// interrupts again every reinterruptEvery until stop is called: SQLite
// forgets an interrupt that arrives while none of the connection's
// statements is running (sqlite3_step clears it when the first starts), so
// a timeout that fires between preparing and stepping would otherwise be
// lost. stop waits for the interrupting to end, so none can reach a later
// query once conn is returned to the pool; the caller must call it before
// closing conn (a second call does nothing). Nothing runs (no goroutine
// waits) until ctx ends.
//
// Armed, the statement's own calls need no context of their own that ends
// (Executor.dctx): the driver would otherwise start a goroutine and
// install a progress handler per statement to interrupt it, and
// database/sql a goroutine per result set to close it — 2–5% of a cold
// replay's CPU (docs/benchmarks-baseline.md, "Own work against the floor").
func watch(ctx context.Context, conn *sql.Conn) (stop func(), armed bool) {
	var db uintptr
	_ = conn.Raw(func(dc any) error {
		db = handleOf(dc)
		return nil
	})
	if db == 0 || ctx.Done() == nil {
		return func() {}, false
	}
	var mu sync.Mutex // held across each interrupt; stopped under it
	stopped := false
	done := make(chan struct{})
	disarm := context.AfterFunc(ctx, func() {
		defer close(done)
		tls := libc.NewTLS()
		defer tls.Close()
		for {
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			sqlite3.Xsqlite3_interrupt(tls, db)
			mu.Unlock()
			time.Sleep(reinterruptEvery)
		}
	})
	return sync.OnceFunc(func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		if !disarm() {
			<-done // the interrupting started: wait for it to end
		}
	}), true
}

// reinterruptEvery is how often watch repeats its interrupt while the
// statement runs on after its context ended.
const reinterruptEvery = 5 * time.Millisecond
