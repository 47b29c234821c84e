package dataset

import (
	"bufio"
	"bytes"
	"io"
)

// lineReader splits a stream into lines at \n, \r\n and a lone \r alike
// (a CR-only file has as many lines as a LF one), counting them from 1.
type lineReader struct {
	br      *bufio.Reader
	line    int
	pending [][]byte // lines split out of the last chunk at lone \r
	err     error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next line without its ending and its number; err is
// io.EOF (with the last line, if any) at the end.
func (l *lineReader) next() ([]byte, int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return nil, l.line, l.err
		}
		chunk, err := l.br.ReadBytes('\n')
		l.err = err
		if len(chunk) == 0 {
			continue
		}
		chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
		chunk = bytes.TrimSuffix(chunk, []byte{'\r'})
		l.pending = bytes.Split(chunk, []byte{'\r'})
	}
	b := l.pending[0]
	l.pending = l.pending[1:]
	l.line++
	if len(l.pending) == 0 && l.err != nil {
		return b, l.line, l.err
	}
	return b, l.line, nil
}

// crReader turns \r\n and a lone \r into \n for the CSV reader.
type crReader struct {
	r       *bufio.Reader
	afterCR bool
}

func (c *crReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := c.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if c.afterCR && b == '\n' {
			c.afterCR = false
			continue
		}
		c.afterCR = b == '\r'
		if b == '\r' {
			b = '\n'
		}
		p[n] = b
		n++
		if c.r.Buffered() == 0 {
			break
		}
	}
	return n, nil
}
