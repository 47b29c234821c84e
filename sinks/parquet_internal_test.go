package sinks

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/evalflow/evalflow/table"
)

// TestParquetIOFailure: when the file fails under the writer (disk full, a
// closed descriptor), Write reports it and keeps reporting it, and Close
// still runs to the end and reports an error instead of panicking.
func TestParquetIOFailure(t *testing.T) {
	s := Schema{{Name: "n", Type: table.TypeInt}, {Name: "s", Type: table.TypeString}}
	w, err := NewParquet(filepath.Join(t.TempDir(), "x.parquet"), s, WithRowGroupSize(2))
	if err != nil {
		t.Fatal(err)
	}
	pw := w.(*parquetWriter)
	pw.f.Close() // the next flush fails
	var werr error
	big := strings.Repeat("incompressible? no, but enough bytes to fill the buffer ", 64)
	for i := 0; werr == nil && i < 10_000; i++ {
		werr = w.Write([]any{int64(i), big})
	}
	if !errors.Is(werr, os.ErrClosed) {
		t.Fatalf("Write error = %v, want one wrapping os.ErrClosed", werr)
	}
	if err := w.Write([]any{int64(0), "x"}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after failure = %v, want the same error", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write returned nil")
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// TestPooledZstdSameBytes: the process-wide zstd codec gives the bytes
// parquet-go's own codec gives (same encoder options), from any goroutine,
// and reads back.
func TestPooledZstdSameBytes(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for _, n := range []int{0, 1, 100, 4096, 300_000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = "SELECT 1 FROM t WHERE x = "[src.IntN(26)]
		}
		inputs = append(inputs, b)
	}
	ref := &zstd.Codec{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, in := range inputs {
				want, err := ref.Encode(nil, in)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := zstdCodec.Encode(make([]byte, 0, 7), in)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%d bytes: pooled codec gave %d bytes (%v), parquet-go's %d", len(in), len(got), err, len(want))
					return
				}
				back, err := zstdCodec.Decode(nil, got)
				if err != nil || !bytes.Equal(back, in) {
					t.Errorf("%d bytes: round trip failed: %v", len(in), err)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(zstdCodec.idle); n > maxIdleZstd {
		t.Errorf("%d idle encoders kept, at most %d", n, maxIdleZstd)
	}
}
