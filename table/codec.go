package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Binary encoding of a table, for the stage cache: exact for every normal
// form (floats by their bits, so NaN, -0 and the last digit survive;
// strings byte for byte). Layout: a version byte, flags, the columns (name,
// type), the row count, then each value as a tag and its payload.
const codecVersion = 1

const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagBytes
)

// MarshalBinary encodes t.
func (t *Table) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil) }

// AppendBinary appends MarshalBinary's encoding of t to b
// (encoding.BinaryAppender).
func (t *Table) AppendBinary(b []byte) ([]byte, error) {
	flags := byte(0)
	if t.Truncated {
		flags = 1
	}
	b = append(b, codecVersion, flags)
	b = binary.AppendUvarint(b, uint64(len(t.Columns)))
	for _, c := range t.Columns {
		b = appendString(b, c.Name)
		b = append(b, byte(c.Type))
	}
	b = binary.AppendUvarint(b, uint64(len(t.Rows)))
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("table: row %d has %d values for %d columns", i, len(row), len(t.Columns))
		}
		for _, v := range row {
			switch x := v.(type) {
			case nil:
				b = append(b, tagNil)
			case bool:
				if x {
					b = append(b, tagTrue)
				} else {
					b = append(b, tagFalse)
				}
			case int64:
				b = binary.AppendVarint(append(b, tagInt), x)
			case float64:
				b = binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x))
			case string:
				b = appendString(append(b, tagString), x)
			case []byte:
				b = appendString(append(b, tagBytes), string(x))
			default:
				return nil, fmt.Errorf("table: value of type %T is not a normal form", v)
			}
		}
	}
	return b, nil
}

// BinarySize is the length of MarshalBinary's encoding of t, or more
// (never less): a buffer of this capacity takes AppendBinary's encoding
// without growing. Integers count their longest varint.
func (t *Table) BinarySize() int {
	n := 2 + binary.MaxVarintLen64
	for _, c := range t.Columns {
		n += binary.MaxVarintLen64 + len(c.Name) + 1
	}
	n += binary.MaxVarintLen64
	for _, row := range t.Rows {
		for _, v := range row {
			switch x := v.(type) {
			case string:
				n += 1 + binary.MaxVarintLen64 + len(x)
			case []byte:
				n += 1 + binary.MaxVarintLen64 + len(x)
			default:
				n += 1 + binary.MaxVarintLen64
			}
		}
	}
	return n
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorrupt = errors.New("table: corrupt encoding")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (t *Table) UnmarshalBinary(b []byte) error {
	if len(b) < 2 || b[0] != codecVersion {
		return errCorrupt
	}
	*t = Table{Truncated: b[1] == 1}
	b = b[2:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	nc, ok := uv()
	if !ok || nc > uint64(len(b)) {
		return errCorrupt
	}
	t.Columns = make([]Column, nc)
	for i := range t.Columns {
		name, ok := str()
		if !ok || len(b) < 1 {
			return errCorrupt
		}
		t.Columns[i] = Column{Name: name, Type: Type(b[0])}
		b = b[1:]
	}
	nr, ok := uv()
	// Every value takes at least one byte; rows without columns take none
	// and are held to a sane count.
	if !ok || (nc > 0 && nr > uint64(len(b))) || (nc == 0 && nr > 1<<20) {
		return errCorrupt
	}
	t.Rows = make([][]Value, 0, min(nr, uint64(len(b))+1))
	for range nr {
		row := make([]Value, nc)
		for j := range row {
			if len(b) < 1 {
				return errCorrupt
			}
			tag := b[0]
			b = b[1:]
			switch tag {
			case tagNil:
			case tagFalse:
				row[j] = false
			case tagTrue:
				row[j] = true
			case tagInt:
				v, n := binary.Varint(b)
				if n <= 0 {
					return errCorrupt
				}
				row[j], b = v, b[n:]
			case tagFloat:
				if len(b) < 8 {
					return errCorrupt
				}
				row[j], b = math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:]
			case tagString, tagBytes:
				s, ok := str()
				if !ok {
					return errCorrupt
				}
				if tag == tagBytes {
					row[j] = []byte(s)
				} else {
					row[j] = s
				}
			default:
				return errCorrupt
			}
		}
		t.Rows = append(t.Rows, row)
	}
	if len(b) != 0 {
		return errCorrupt
	}
	return nil
}
