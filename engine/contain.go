package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// Resolve returns path made absolute, with the symlinks of its longest
// existing prefix resolved (the rest, which does not exist yet, is joined
// lexically, so `..` in it cannot climb past what was resolved). A
// dangling symlink in the path is followed to where it points, so a link
// whose target does not exist yet still resolves to its target's place.
func Resolve(path string) (string, error) {
	return resolve(path, 0)
}

// maxLinks bounds the dangling symlinks Resolve follows (a loop of links).
const maxLinks = 40

func resolve(path string, hops int) (string, error) {
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
		if st, lerr := os.Lstat(head); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			// head exists but is a link to nothing: go on from its target.
			if hops >= maxLinks {
				return "", errors.New("too many levels of symbolic links in " + path)
			}
			target, err := os.Readlink(head)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(head), target)
			}
			return resolve(filepath.Join(target, tail), hops+1)
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

// OptionPathError is why ResolvePaths refused a path option's value: Elem
// says which part of the value (nil for a plain string, the int index of a
// list element, the string key of a map entry), Path is the value as
// written, and Err is the reason (an *Error from Within for a path that
// leaves its root).
type OptionPathError struct {
	Option string
	Elem   any
	Path   string
	Err    error
}

// Error names the option (with its element), the path and the reason.
func (e *OptionPathError) Error() string {
	name := e.Option
	switch x := e.Elem.(type) {
	case int:
		name += "[" + strconv.Itoa(x) + "]"
	case string:
		name += "[" + strconv.Quote(x) + "]"
	}
	return "option " + name + " (" + strconv.Quote(e.Path) + "): " + errorText(e.Err)
}

// Unwrap returns the reason.
func (e *OptionPathError) Unwrap() error { return e.Err }

func errorText(err error) string {
	var ee *Error
	if errors.As(err, &ee) && ee.Msg != "" {
		return ee.Msg
	}
	return err.Error()
}

// IsCommandName reports whether a ProgramPath value is a command name to
// look up on PATH (it has no slash) rather than a path.
func IsCommandName(v string) bool {
	return v != "" && !strings.ContainsRune(v, '/') && !strings.ContainsRune(v, filepath.Separator)
}

// ResolvePaths returns value, the value of path option o as a pipeline
// gave it, with every path in it made absolute: a relative path joins dir
// (the pipeline's directory), an absolute one (fromcwd's result, for
// one) stays as it is, and an empty string stays empty (the option's
// default applies). For a ProgramPath a command name (IsCommandName) is
// kept unchanged. value may be a string, a list of strings ([]any or
// []string) or a map of strings (map[string]any or map[string]string);
// elements of another type, and values of another shape, are returned as
// they are for the engine to reject with its own message. The input is
// never modified: lists and maps are copied.
//
// With root non-empty (the engine block's declared root, resolved: see
// Resolve), every DataPath path must resolve, symlinks followed, to root or
// inside it; the first that does not is an *OptionPathError and nothing is
// returned.
func ResolvePaths(o PathOption, value any, dir, root string) (any, error) {
	one := func(elem any, s string) (string, error) {
		if s == "" || (o.Kind == ProgramPath && IsCommandName(s)) {
			return s, nil
		}
		p := s
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", &OptionPathError{Option: o.Name, Elem: elem, Path: s, Err: err}
		}
		if o.Kind == DataPath && root != "" {
			if err := Within(root, abs); err != nil {
				return "", &OptionPathError{Option: o.Name, Elem: elem, Path: s, Err: err}
			}
		}
		return abs, nil
	}
	switch x := value.(type) {
	case string:
		return one(nil, x)
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			r, err := one(i, s)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = el
			if s, ok := el.(string); ok {
				r, err := one(i, s)
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for _, k := range sortedKeys(x) {
			r, err := one(k, x[k])
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			out[k] = x[k]
			if s, ok := x[k].(string); ok {
				r, err := one(k, s)
				if err != nil {
					return nil, err
				}
				out[k] = r
			}
		}
		return out, nil
	}
	return value, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
