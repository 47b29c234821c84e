package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
)

// A segment is one append-only file of records, named
// <16 hex digits of creation time>-<pid>-<random>.seg. A segment has one
// writer for its whole life: the process that created it, which holds an
// exclusive flock on it while it appends (GC skips locked segments). A
// segment is never modified once its writer has closed it; GC replaces
// segments whole (it writes the survivors to a new segment under a
// temporary name, renames it into place, then removes the old ones).
//
// A segment starts with segMagic; then records, each
//
//	crc    uint32  CRC-32C of everything after it (header, key, value)
//	kind   uint8   kindPut or kindDel
//	keyLen uint8
//	_      uint16  zero
//	valLen uint32
//	time   int64   Unix nanoseconds of the write (the LRU clock)
//	key    [keyLen]byte
//	value  [valLen]byte
//
// all little endian. Records are appended in batches of whole records,
// each batch with one write(2), so a process killed at any moment leaves
// whole records and at most one torn record at the end of its segment; a reader stops at the first record that does not
// fit in the file or whose header or checksum is wrong, and Get verifies
// the checksum of every record it serves.
const (
	segMagic = "evfseg1\n"
	segExt   = ".seg"
	hdrSize  = 20
	kindPut  = 1
	kindDel  = 2
)

// segmentBytes is the size at which a writer starts a new segment (a
// variable for tests).
var segmentBytes int64 = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recHdr is a decoded record header.
type recHdr struct {
	kind   uint8
	keyLen uint8
	valLen uint32
	ts     int64
}

func (h recHdr) size() int64 { return hdrSize + int64(h.keyLen) + int64(h.valLen) }

// recordSize is the bytes one value of a key takes in a segment.
func recordSize(keyLen, valLen int) int64 { return hdrSize + int64(keyLen) + int64(valLen) }

// appendRecord appends a whole record to dst.
func appendRecord(dst []byte, kind uint8, key string, value []byte, ts int64) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, kind, uint8(len(key)), 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ts))
	dst = append(dst, key...)
	dst = append(dst, value...)
	binary.LittleEndian.PutUint32(dst[at:], crc32.Checksum(dst[at+4:], castagnoli))
	return dst
}

// decodeHeader decodes and sanity-checks a header (b holds at least
// hdrSize bytes).
func decodeHeader(b []byte) (recHdr, bool) {
	h := recHdr{kind: b[4], keyLen: b[5], valLen: binary.LittleEndian.Uint32(b[8:]), ts: int64(binary.LittleEndian.Uint64(b[12:]))}
	if h.kind != kindPut && h.kind != kindDel || h.keyLen < 8 || h.keyLen > 128 || b[6] != 0 || b[7] != 0 {
		return h, false
	}
	if h.kind == kindDel && h.valLen != 0 {
		return h, false
	}
	return h, true
}

// checkRecord verifies a whole record's checksum.
func checkRecord(b []byte) bool {
	return len(b) >= hdrSize && binary.LittleEndian.Uint32(b) == crc32.Checksum(b[4:], castagnoli)
}

// scanned is one record found by scanSegment.
type scanned struct {
	hdr recHdr
	key string
	off int64
}

// scanSegment reads the records of f between off and end (off past the
// magic) and returns them and the offset after the last whole, valid
// record. It reads in 64 KiB chunks; a record that fits in a chunk has its
// checksum verified (and is left out if it fails), a larger one only its
// header (Get verifies it before serving it).
func scanSegment(f io.ReaderAt, off, end int64, fn func(scanned)) int64 {
	buf := make([]byte, 64<<10)
	bufOff, n := int64(-1), 0
	for off+hdrSize <= end {
		need := min(int64(hdrSize+128), end-off)
		if bufOff < 0 || off < bufOff || off+need > bufOff+int64(n) {
			m, _ := f.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			if int64(m) < need {
				break
			}
			bufOff, n = off, m
		}
		b := buf[off-bufOff : n]
		h, ok := decodeHeader(b)
		if !ok || off+h.size() > end {
			break
		}
		key := string(b[hdrSize : hdrSize+int(h.keyLen)])
		if !validKey(key) {
			break
		}
		// A record whose checksum fails (changed bytes) is skipped: its
		// length was checked against the file, and what follows it is
		// checked in turn.
		if int64(len(b)) < h.size() || checkRecord(b[:h.size()]) {
			fn(scanned{hdr: h, key: key, off: off})
		}
		off += h.size()
	}
	return off
}

// segment is what a Store knows of one segment file. Its read descriptor
// is opened on first use and kept; a segment removed by another process's
// GC stays readable through a descriptor opened before the removal.
type segment struct {
	name string

	mu   sync.Mutex // guards f, gone
	f    *os.File
	gone bool

	// scanned is the offset up to which the Store's index holds this
	// segment's records. Guarded by Store.mu.
	scanned int64
}

// errGone is a segment that no longer exists.
var errGone = errors.New("segment removed")

func (g *segment) file(dir string) (*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.f != nil {
		return g.f, nil
	}
	if g.gone {
		return nil, errGone
	}
	f, err := os.Open(dir + string(os.PathSeparator) + g.name)
	if err != nil {
		g.gone = true
		return nil, errGone
	}
	var m [len(segMagic)]byte
	if _, err := f.ReadAt(m[:], 0); err != nil || string(m[:]) != segMagic {
		f.Close()
		g.gone = true
		return nil, errGone
	}
	g.f = f
	return f, nil
}

func (g *segment) close() {
	g.mu.Lock()
	if g.f != nil {
		g.f.Close()
		g.f = nil
	}
	g.mu.Unlock()
}

// readRecord reads the record at off, verifies its checksum and key, and
// returns its value.
func readRecord(f io.ReaderAt, off int64, key string, valLen uint32) ([]byte, error) {
	b := make([]byte, recordSize(len(key), int(valLen)))
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	h, ok := decodeHeader(b)
	if !ok || h.kind != kindPut || int(h.keyLen) != len(key) || h.valLen != valLen ||
		string(b[hdrSize:hdrSize+len(key)]) != key || !checkRecord(b) {
		return nil, fmt.Errorf("store: corrupt record at %d", off)
	}
	return b[hdrSize+len(key):], nil
}

// newSegmentName returns a fresh segment file name; names sort by
// creation time.
func newSegmentName(now int64) string {
	var rnd [4]byte
	rand.Read(rnd[:])
	return fmt.Sprintf("%016x-%08x-%s%s", now, os.Getpid(), hex.EncodeToString(rnd[:]), segExt)
}

func isSegmentName(name string) bool {
	return strings.HasSuffix(name, segExt) && len(name) > len(segExt)
}

// tryLock takes f's exclusive flock without waiting; it reports whether it
// got it. The lock goes with the descriptor's close.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// sameFile reports whether f is still the file at path (not removed or
// replaced since it was opened).
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}
