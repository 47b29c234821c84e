package cluster

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A bundle is what a run's workers need from the coordinator's disk: the
// pipeline's files and every file or directory it names (dataset,
// predictions, databases, graphs, -var-file files), as a tar whose first
// entry, index.json, lists every file with its size and SHA-256. Paths are
// the coordinator's absolute paths without the leading slash; a worker
// unpacks them under DIR/fs, so DIR/fs/<coordinator path> is the file.
// Only regular files travel; a symbolic link travels as the file it points
// to when that file is inside the same root, and not at all otherwise (the
// engines refuse links out of their roots: docs/engines.md, containment).

// BundleFile is one file of a bundle.
type BundleFile struct {
	Path    string    `json:"path"` // slash-separated, relative to the filesystem root
	Size    int64     `json:"size"`
	Mode    uint32    `json:"mode"`
	ModTime time.Time `json:"mtime"`
	SHA256  string    `json:"sha256"`
}

// BundleIndex is a bundle's index.json.
type BundleIndex struct {
	// Roots are the coordinator paths the bundle was made of.
	Roots []string     `json:"roots"`
	Files []BundleFile `json:"files"`
}

// Digest is the bundle's identity: the SHA-256 of its index, which holds
// every file's own SHA-256.
func (ix *BundleIndex) Digest() string {
	b, _ := json.Marshal(ix)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// MaxBundleFiles bounds the files of one bundle (a root that is the home
// directory by mistake should fail, not upload it).
const MaxBundleFiles = 200000

// PackBundle writes the bundle of roots (absolute paths; nested roots are
// packed once) to w and returns its index.
func PackBundle(roots []string, w io.Writer) (*BundleIndex, error) {
	ix, err := indexRoots(roots)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(w)
	b, _ := json.Marshal(ix)
	if err := tw.WriteHeader(&tar.Header{Name: "index.json", Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(b); err != nil {
		return nil, err
	}
	for _, f := range ix.Files {
		if err := packFile(tw, f); err != nil {
			return nil, err
		}
	}
	return ix, tw.Close()
}

func packFile(tw *tar.Writer, f BundleFile) error {
	src, err := os.Open("/" + f.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := tw.WriteHeader(&tar.Header{Name: "fs/" + f.Path, Mode: int64(f.Mode), Size: f.Size, ModTime: f.ModTime, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	// The file must still be what was hashed: a copy that changed meanwhile
	// fails the worker's check, so fail here first with the path.
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(src, f.Size))
	if err != nil {
		return err
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("bundle: %s changed while it was packed", "/"+f.Path)
	}
	return nil
}

// indexRoots lists and hashes every regular file under roots.
func indexRoots(roots []string) (*BundleIndex, error) {
	clean := make([]string, 0, len(roots))
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("bundle: root %q is not absolute", r)
		}
		clean = append(clean, filepath.Clean(r))
	}
	sort.Strings(clean)
	// Drop roots inside another root.
	var top []string
	for _, r := range clean {
		if len(top) > 0 && within(top[len(top)-1], r) {
			continue
		}
		top = append(top, r)
	}
	ix := &BundleIndex{Roots: top}
	seen := map[string]bool{}
	add := func(root, p string, st fs.FileInfo) error {
		// A link is followed only to a regular file inside its root.
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil
		}
		rroot, err := filepath.EvalSymlinks(root)
		if err != nil || !within(rroot, real) {
			return nil
		}
		if st, err = os.Stat(real); err != nil || !st.Mode().IsRegular() {
			return nil
		}
		rel := strings.TrimPrefix(filepath.ToSlash(p), "/")
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		if len(ix.Files) >= MaxBundleFiles {
			return fmt.Errorf("bundle: more than %d files under %s", MaxBundleFiles, root)
		}
		sum, err := hashFile(p)
		if err != nil {
			return err
		}
		ix.Files = append(ix.Files, BundleFile{Path: rel, Size: st.Size(), Mode: uint32(st.Mode().Perm()), ModTime: st.ModTime().UTC().Truncate(time.Second), SHA256: sum})
		return nil
	}
	for _, root := range top {
		st, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		if !st.IsDir() {
			if err := add(filepath.Dir(root), root, st); err != nil {
				return nil, err
			}
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return add(root, p, info)
		})
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
	}
	sort.Slice(ix.Files, func(i, j int) bool { return ix.Files[i].Path < ix.Files[j].Path })
	return ix, nil
}

func within(root, p string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// errBundle marks a bundle that is not what its digest says.
var errBundle = errors.New("bundle refused")

// UnpackBundle reads a bundle from r into dest (dest/fs/…), checking that
// its index has the given digest and that every file is in the index with
// its size and SHA-256. Names that are absolute, climb out with "..", are
// not regular files or are not in the index are refused: nothing is
// written outside dest.
func UnpackBundle(r io.Reader, dest, digest string) (*BundleIndex, error) {
	tr := tar.NewReader(r)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != "index.json" || hdr.Size > 64<<20 {
		return nil, fmt.Errorf("%w: no index", errBundle)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return nil, err
	}
	var ix BundleIndex
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("%w: index: %v", errBundle, err)
	}
	if got := ix.Digest(); got != digest {
		return nil, fmt.Errorf("%w: index digest %s, want %s", errBundle, got, digest)
	}
	want := make(map[string]BundleFile, len(ix.Files))
	for _, f := range ix.Files {
		want[f.Path] = f
	}
	done := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBundle, err)
		}
		name, ok := strings.CutPrefix(hdr.Name, "fs/")
		f, listed := want[name]
		if !ok || !listed || done[name] || hdr.Typeflag != tar.TypeReg || !safeName(name) || hdr.Size != f.Size {
			return nil, fmt.Errorf("%w: unexpected entry %q", errBundle, hdr.Name)
		}
		done[name] = true
		if err := writeChecked(tr, filepath.Join(dest, "fs", filepath.FromSlash(name)), f); err != nil {
			return nil, err
		}
	}
	if len(done) != len(want) {
		return nil, fmt.Errorf("%w: %d of %d files present", errBundle, len(done), len(want))
	}
	return &ix, nil
}

// safeName reports whether a bundle path stays inside the bundle: relative,
// clean, without "..".
func safeName(name string) bool {
	return name != "" && !strings.HasPrefix(name, "/") && path.Clean(name) == name && name != ".." &&
		!strings.HasPrefix(name, "../") && !strings.Contains(name, "/../") && !strings.HasSuffix(name, "/..")
}

func writeChecked(r io.Reader, dst string, f BundleFile) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".part"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(r, f.Size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256) {
		err = fmt.Errorf("%w: /%s does not match its SHA-256", errBundle, f.Path)
	}
	if err == nil {
		err = os.Chmod(tmp, fs.FileMode(f.Mode)&0o755|0o400)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Chtimes(dst, f.ModTime, f.ModTime)
}
