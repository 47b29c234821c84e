package cluster

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBundleRoundTrip(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "data", "db"), 0o755)
	os.WriteFile(filepath.Join(src, "pipeline.hcl"), []byte("dataset \"q\" {}"), 0o644)
	os.WriteFile(filepath.Join(src, "data", "q.jsonl"), []byte(`{"id":"a"}`), 0o644)
	os.WriteFile(filepath.Join(src, "data", "db", "shop.sqlite"), []byte("sqlite"), 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	// A link out of its root does not travel; one inside does.
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "data", "leak"))
	os.Symlink(filepath.Join(src, "data", "q.jsonl"), filepath.Join(src, "data", "alias.jsonl"))
	var buf bytes.Buffer
	ix, err := PackBundle([]string{filepath.Join(src, "data"), filepath.Join(src, "pipeline.hcl"), filepath.Join(src, "data", "db")}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Roots) != 2 {
		t.Errorf("roots %v: the nested one should go", ix.Roots)
	}
	dest := t.TempDir()
	if _, err := UnpackBundle(bytes.NewReader(buf.Bytes()), dest, ix.Digest()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dest, "fs", src, "data", "db", "shop.sqlite"))
	if err != nil || string(got) != "sqlite" {
		t.Errorf("shop.sqlite: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "fs", src, "data", "alias.jsonl")); err != nil {
		t.Errorf("a link inside the root should travel as its file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "fs", src, "data", "leak")); err == nil {
		t.Errorf("a link out of the root travelled")
	}
	// Another digest is refused.
	if _, err := UnpackBundle(bytes.NewReader(buf.Bytes()), t.TempDir(), strings.Repeat("0", 64)); err == nil {
		t.Errorf("a wrong digest was accepted")
	}
}

// forged builds a bundle whose index lists files and whose entries are
// given, for the refusals.
func forged(t *testing.T, files []BundleFile, entries map[string]string) ([]byte, string) {
	ix := &BundleIndex{Files: files}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	b, _ := json.Marshal(ix)
	tw.WriteHeader(&tar.Header{Name: "index.json", Size: int64(len(b)), Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write(b)
	for name, body := range entries {
		tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(body)), Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	return buf.Bytes(), ix.Digest()
}

func TestBundleRefusals(t *testing.T) {
	sum := func(s string) string {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, []byte(s), 0o644)
		h, _ := hashFile(p)
		return h
	}
	for name, tc := range map[string]struct {
		files   []BundleFile
		entries map[string]string
	}{
		"climbs out":       {[]BundleFile{{Path: "../x", Size: 1, SHA256: sum("x")}}, map[string]string{"fs/../x": "x"}},
		"absolute":         {[]BundleFile{{Path: "/etc/x", Size: 1, SHA256: sum("x")}}, map[string]string{"fs//etc/x": "x"}},
		"not in the index": {nil, map[string]string{"fs/a": "x"}},
		"tampered":         {[]BundleFile{{Path: "a", Size: 1, SHA256: sum("x")}}, map[string]string{"fs/a": "y"}},
		"missing":          {[]BundleFile{{Path: "a", Size: 1, SHA256: sum("x")}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			b, digest := forged(t, tc.files, tc.entries)
			dest := t.TempDir()
			if _, err := UnpackBundle(bytes.NewReader(b), filepath.Join(dest, "in"), digest); err == nil {
				t.Fatal("accepted")
			}
			if _, err := os.Stat(filepath.Join(dest, "x")); err == nil {
				t.Error("wrote outside the destination")
			}
		})
	}
}
