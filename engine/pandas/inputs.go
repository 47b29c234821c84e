package pandas

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// input is one table opened for the sandbox: its name in dfs and the open
// file the runner reads it from.
type input struct {
	name string
	f    *os.File
}

func closeAll(in []input) {
	for _, x := range in {
		x.f.Close()
	}
}

// converter turns Parquet inputs into CSV once per file version and owns
// the converted files.
type converter struct {
	mu    sync.Mutex // guards the fields below and serialises conversions
	dir   string
	cache map[string]string // path|size|mtime → converted CSV
}

func (c *converter) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache = nil
	if c.dir == "" {
		return nil
	}
	err := os.RemoveAll(c.dir)
	c.dir = ""
	return err
}

func inputError(format string, args ...any) error {
	return &engine.Error{Class: item.ClassExecution, Msg: "pandas: " + fmt.Sprintf(format, args...)}
}

// tablePaths lists the table files db names: one file, the *.csv and
// *.parquet files of a directory, or a glob's matches, in name order.
func tablePaths(db string) ([]string, error) {
	if db == "" {
		return nil, nil
	}
	var paths []string
	if strings.ContainsAny(db, "*?[") {
		m, err := filepath.Glob(db)
		if err != nil {
			return nil, inputError("bad input pattern %q: %v", db, err)
		}
		if len(m) == 0 {
			return nil, inputError("no input tables match %s", db)
		}
		paths = m
	} else {
		st, err := os.Stat(db)
		if err != nil {
			return nil, inputError("input tables not found: %v", err)
		}
		if !st.IsDir() {
			paths = []string{db}
		} else {
			ents, err := os.ReadDir(db)
			if err != nil {
				return nil, inputError("reading input directory: %v", err)
			}
			for _, e := range ents {
				if !e.IsDir() && tableFormat(e.Name()) != "" {
					paths = append(paths, filepath.Join(db, e.Name()))
				}
			}
			if len(paths) == 0 {
				return nil, inputError("no .csv or .parquet files in %s", db)
			}
		}
	}
	sort.Strings(paths)
	return paths, nil
}

func tableFormat(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv":
		return "csv"
	case ".parquet", ".pq":
		return "parquet"
	}
	return ""
}

// inputs opens the tables of db for reading. The caller closes them.
// inputs opens the tables db names. With a root, every table file — the
// path itself, each match of a glob, each file of a directory — must
// resolve inside it after symlinks (engine.Within), or nothing is opened.
func (c *converter) inputs(db, root string) ([]input, error) {
	paths, err := tablePaths(db)
	if err != nil {
		return nil, err
	}
	if root != "" {
		for _, p := range paths {
			if err := engine.Within(root, p); err != nil {
				return nil, err
			}
		}
	}
	var files []input
	seen := map[string]string{}
	for _, p := range paths {
		base := filepath.Base(p)
		name := strings.TrimSuffix(base, filepath.Ext(base))
		if prev, dup := seen[name]; dup {
			closeAll(files)
			return nil, inputError("two input tables are named %q: %s and %s", name, prev, p)
		}
		seen[name] = p
		src := p
		switch tableFormat(p) {
		case "parquet":
			if src, err = c.convert(p); err != nil {
				closeAll(files)
				return nil, err
			}
		case "csv":
		default:
			closeAll(files)
			return nil, inputError("input table %s is neither .csv nor .parquet", p)
		}
		f, err := os.Open(src)
		if err != nil {
			closeAll(files)
			return nil, inputError("opening input table: %v", err)
		}
		files = append(files, input{name: name, f: f})
	}
	return files, nil
}

// convert writes a Parquet file as CSV (once per path, size and mtime).
func (c *converter) convert(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", inputError("input table not found: %v", err)
	}
	abs, _ := filepath.Abs(path)
	key := abs + "|" + strconv.FormatInt(st.Size(), 10) + "|" + st.ModTime().Format(time.RFC3339Nano)
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.cache[key]; ok {
		return p, nil
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "evalflow-pandas-"); err != nil {
			return "", inputError("%v", err)
		}
	}
	out, err := os.CreateTemp(c.dir, "*.csv")
	if err != nil {
		return "", inputError("%v", err)
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	w := csv.NewWriter(bw)
	header := false
	rec := []string{}
	err = dataset.ReadRows(path, "parquet", func(r dataset.Row) error {
		if !header {
			header = true
			if err := w.Write(r.Names); err != nil {
				return err
			}
		}
		rec = rec[:0]
		for _, v := range r.Values {
			rec = append(rec, csvCell(v))
		}
		return w.Write(rec)
	})
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", inputError("converting %s to CSV: %v", path, err)
	}
	if c.cache == nil {
		c.cache = map[string]string{}
	}
	c.cache[key] = out.Name()
	return out.Name(), nil
}

// csvCell writes one Parquet value as pandas.read_csv reads it back: null
// as an empty cell, booleans as True/False, floats in shortest form, times
// as "2006-01-02 15:04:05.999999999", nested values as JSON.
func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999999")
	case []any, map[string]any:
		b, err := json.Marshal(x)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}
