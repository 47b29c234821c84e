package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// Resolve returns path made absolute, with the symlinks of its longest
// existing prefix resolved (the rest, which does not exist yet, is joined
// lexically, so `..` in it cannot climb past what was resolved).
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	head, tail := abs, ""
	for {
		r, err := filepath.EvalSymlinks(head)
		if err == nil {
			return filepath.Join(r, tail), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(head)
		if parent == head {
			return abs, nil
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
}

// Within checks that path, after symlinks, is root or inside it (root is
// already resolved: see Resolve). Its error is a harness error
// (Unavailable): a path from data that escapes its root is never opened.
func Within(root, path string) error {
	if root == "" {
		return &Error{Class: item.ClassExecution, Unavailable: true,
			Msg: "path " + path + " comes from data but the engine declares no root: nothing outside a declared root is opened"}
	}
	r, err := Resolve(path)
	if err != nil {
		return &Error{Class: item.ClassExecution, Unavailable: true, Msg: "resolving " + path + ": " + err.Error(), Err: err}
	}
	if r != root && !strings.HasPrefix(r, root+string(os.PathSeparator)) && root != string(os.PathSeparator) {
		return &Error{Class: item.ClassExecution, Unavailable: true,
			Msg: "path " + path + " resolves outside its root " + root + " (to " + r + "); nothing was executed"}
	}
	return nil
}
