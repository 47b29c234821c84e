package pandas

import (
	"context"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// InstallCommand installs what the sandbox needs on Debian and Ubuntu:
// Debian's Python with pandas, and bubblewrap.
const InstallCommand = "sudo apt-get install python3-pandas bubblewrap"

// SetupError says why the sandbox cannot start on this machine (bubblewrap
// or the interpreter missing, pandas not importable, namespaces refused),
// as opposed to a wrong option. The registered engine turns it into an
// executor whose Ping fails, so a run stops before its first item.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func (e *SetupError) engineError() error {
	return &engine.Error{Class: item.ClassExecution, Msg: e.Error(), Err: e, Unavailable: true}
}

// Ping reports, before any item, that the sandbox cannot start, with the
// command that installs what it lacks.
func (e *Executor) Ping(context.Context) error {
	if e.setupErr != nil {
		return e.setupErr
	}
	return nil
}

// Check reports whether the default sandbox (bubblewrap, /usr/bin/python3
// and its pandas) starts on this machine: nil when it does.
func Check() error {
	e, err := New(engine.Config{})
	if err != nil {
		return err
	}
	return e.Close()
}
