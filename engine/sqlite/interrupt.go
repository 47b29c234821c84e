package sqlite

import (
	"context"
	"database/sql"
	"reflect"
	"sync"

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
// returns a function that disarms it. stop waits for an interrupt under
// way to finish, so none can reach a later query once conn is returned to
// the pool; the caller must call it before closing conn. Nothing runs
// (no goroutine waits) until ctx ends.
func watch(ctx context.Context, conn *sql.Conn) (stop func()) {
	var db uintptr
	_ = conn.Raw(func(dc any) error {
		db = handleOf(dc)
		return nil
	})
	if db == 0 || ctx.Done() == nil {
		return func() {}
	}
	done := make(chan struct{})
	disarm := context.AfterFunc(ctx, func() {
		defer close(done)
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, db)
		tls.Close()
	})
	return func() {
		if !disarm() {
			<-done // the interrupt started: wait for it to end
		}
	}
}
