package pandas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramOptions: python and bwrap without a slash are command names
// looked up on PATH; with a slash they are paths, used as they are.
func TestProgramOptions(t *testing.T) {
	bin := t.TempDir()
	for _, n := range []string{"mypython", "mybwrap"} {
		if err := os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	for _, tc := range []struct {
		python, bwrap       string
		wantPython, wantErr string
	}{
		{python: "mypython", bwrap: "mybwrap", wantPython: filepath.Join(bin, "mypython")},
		{python: filepath.Join(bin, "mypython"), bwrap: filepath.Join(bin, "mybwrap"), wantPython: filepath.Join(bin, "mypython")},
		{python: "nosuchpython", bwrap: "mybwrap", wantErr: `python interpreter "nosuchpython" is not on PATH`},
		{python: "mypython", bwrap: "nosuchbwrap", wantErr: `bubblewrap "nosuchbwrap" is not on PATH`},
		{python: filepath.Join(bin, "nosuch", "python3"), bwrap: "mybwrap", wantErr: "no such file"},
	} {
		s := sandbox{python: tc.python, bwrap: tc.bwrap, tmpMB: 1}
		err := s.init()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("python %q bwrap %q: error %v, want %q", tc.python, tc.bwrap, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("python %q bwrap %q: %v", tc.python, tc.bwrap, err)
		case s.python != tc.wantPython || s.bwrap != filepath.Join(bin, "mybwrap"):
			t.Errorf("python %q bwrap %q: resolved to %q and %q", tc.python, tc.bwrap, s.python, s.bwrap)
		}
	}
}
