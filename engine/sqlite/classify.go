package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// classify turns an error from the driver into an *engine.Error. parent is
// the caller's context, qctx the query's (parent plus the timeout). The
// engine's message is kept verbatim in Msg.
func classify(parent, qctx context.Context, timeout time.Duration, err error) error {
	if err == nil {
		return nil
	}
	var ee *engine.Error
	if errors.As(err, &ee) {
		return err
	}
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return &engine.Error{Class: item.ClassCancelled, Msg: "query cancelled", Err: parent.Err()}
	case qctx.Err() != nil:
		// The timeout (or the caller's own deadline) ended the query; the
		// driver reports that as ctx.Err() or as SQLITE_INTERRUPT.
		return &engine.Error{
			Class: item.ClassTimeout,
			Msg:   fmt.Sprintf("query interrupted after timeout of %s", timeout),
			Err:   err,
		}
	}
	return &engine.Error{Class: classOf(err), Msg: err.Error(), Err: err, Unavailable: lockedOut(err)}
}

// lockedOut reports whether err is SQLite's "database is locked" or
// "database table is locked" (SQLITE_BUSY, SQLITE_LOCKED and their
// extended codes): another connection held the file past the busy
// timeout. A read-only SELECT cannot cause that itself, so it is the
// harness's failure, not the query's.
func lockedOut(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// classOf classifies a SQLite error by result code and message.
func classOf(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_INTERRUPT:
			return item.ClassTimeout
		case sqlite3.SQLITE_READONLY:
			return item.ClassSafety
		}
	}
	return ClassifyMessage(err.Error())
}

// ClassifyMessage classifies a SQLite error message:
//
//	"syntax error", "incomplete input", "unrecognized token"  item.ClassSyntax
//	"no such table", "no such column", "ambiguous column name" item.ClassSchema
//	"interrupted"                                              item.ClassTimeout
//	"readonly database", "query_only", "not authorized"        item.ClassSafety
//	anything else                                              item.ClassExecution
//
// "no such function" is an execution error: the query parsed and its names
// resolved, but the engine lacks the function (often another dialect's).
func ClassifyMessage(msg string) string {
	m := strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("syntax error", "incomplete input", "unrecognized token"):
		return item.ClassSyntax
	case has("no such table", "no such column", "ambiguous column name"):
		return item.ClassSchema
	case has("interrupted"):
		return item.ClassTimeout
	case has("readonly database", "query_only", "not authorized"):
		return item.ClassSafety
	}
	return item.ClassExecution
}
