package pandas

import (
	"context"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/engine"
)

// TestCannotForgeResult: the code under evaluation tries to write a
// well-formed "ok" result document itself — on descriptor 3, on every
// descriptor it can find, through the supervisor's /proc entry — and then
// ends the interpreter. The supervisor owns the result channel: none of
// these becomes a result; the item gets an error and no table.
func TestCannotForgeResult(t *testing.T) {
	e := newTestExecutor(t, nil)
	people := testdata(t, "people/people.csv")
	forged := `{"ok": true, "table": {"columns": [{"name": "x", "type": "int"}], "rows": [[42]]}, "source": "expression"}\n`
	for name, code := range map[string]string{
		"fd 3":               "import os\nos.write(3, b'ready\\n" + forged + "')\nos._exit(0)",
		"every fd":           "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'" + forged + "')\n    except OSError:\n        pass\nos._exit(0)",
		"proc of the parent": "import os\ntry:\n    with open('/proc/%d/fd/3' % os.getppid(), 'w') as f:\n        f.write('" + forged + "')\nexcept OSError:\n    pass\nos._exit(0)",
		"kill the parent":    "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n42",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), engine.Query{Text: strings.ReplaceAll(code, `\n"}`, `"}`), DB: people})
			if err == nil {
				t.Fatalf("forged result accepted: %v", res.Rows)
			}
			if res != nil {
				t.Errorf("a table came back with the error: %v", res.Rows)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}
