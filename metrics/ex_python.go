package metrics

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/table"
)

// exQuickReject is test-suite's quick_rej:
//
//	s1 = [tuple(sorted(row, key=lambda x: str(x) + str(type(x)))) for row in result1]
//	return s1 == s2 if order_matters else set(s1) == set(s2)
//
// It returns true when the results may still be equal.
func exQuickReject(gold, pred [][]table.Value, ordered bool) bool {
	g, p := exKeyRows(&table.Table{Rows: gold}), exKeyRows(&table.Table{Rows: pred})
	return exQuickRejectKeyed(&g, &p, ordered)
}

// exQuickRejectKeyed is exQuickReject on keyed rows.
//
// When no cell of either result is a bool or a whole float within int64's
// range, the verdict needs no str at all: every other value's key
// (exValueKey) is shared by no value of another type or representation,
// so ordering a row's cells by str(x)+str(type(x)) is ordering them by a
// fixed order of their keys, and two rows' sorted tuples are equal (==,
// cell by cell) exactly when the rows hold the same keys. A row is then
// its keys sorted as strings (unorderedByKey). A bool or a whole float
// (1 and 1.0 and True share a key but not a str) takes the str path.
func exQuickRejectKeyed(gold, pred *exKeyed, ordered bool) bool {
	if quickByKey(gold) && quickByKey(pred) {
		return sameRowKeys(unorderedByKey(gold), unorderedByKey(pred), ordered)
	}
	return sameRowKeys(unorderedKeyed(gold), unorderedKeyed(pred), ordered)
}

// quickByKey reports whether every cell of k's rows of several cells is
// NULL, an integer, text, bytes or a float whose key is not an integer's
// (see exQuickRejectKeyed): no bool, no whole float, and no value outside
// the table's normal forms (whose str may equal another type's).
func quickByKey(k *exKeyed) bool {
	for _, row := range k.rows {
		if len(row) == 1 {
			continue
		}
		for _, v := range row {
			switch x := v.(type) {
			case nil, int64, string, []byte:
			case float64:
				if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// unorderedByKey is each row's cell keys sorted, as one key a row (see
// exQuickRejectKeyed for when it stands for unorderedKeyed).
func unorderedByKey(k *exKeyed) []string {
	return reorderedRows(k, func(r int, js []int) {
		slices.SortFunc(js, func(a, b int) int { return strings.Compare(k.cell(r, a), k.cell(r, b)) })
	})
}

// reorderedRows is each row's key with its cells in the order order puts
// the row's cell indices in; a row of one cell, which has one order, is
// its key as it is. The keys are written into one string: a few
// allocations a table, none a row.
func reorderedRows(k *exKeyed, order func(r int, js []int)) []string {
	out := make([]string, len(k.rows))
	var js []int
	var arena []byte
	var spans []int // row, start, end in arena
	for r, row := range k.rows {
		if len(row) == 1 {
			out[r] = k.row(r)
			continue
		}
		if arena == nil {
			arena = make([]byte, 0, len(k.s)) // the same keys, reordered: never more
			spans = make([]int, 0, 3*len(k.rows))
		}
		js = js[:0]
		for j := range row {
			js = append(js, j)
		}
		order(r, js)
		start := len(arena)
		for _, j := range js {
			arena = append(arena, k.cell(r, j)...)
		}
		spans = append(spans, r, start, len(arena))
	}
	keys := string(arena)
	for i := 0; i < len(spans); i += 3 {
		out[spans[i]] = keys[spans[i+1]:spans[i+2]]
	}
	return out
}

// unorderedRows is each row's cells sorted by str(x) + str(type(x)), as
// one key a row (the cells' exValueKey keys in that order).
func unorderedRows(rows [][]table.Value) []string {
	k := exKeyRows(&table.Table{Rows: rows})
	return unorderedKeyed(&k)
}

// unorderedKeyed is unorderedRows of k.rows (reorderedRows), the cells
// ordered without building a sort key a cell: a string is its own str,
// the other values' strs are written into one string for the table, and
// two sort keys are compared as their two parts (compareJoined).
func unorderedKeyed(k *exKeyed) []string {
	// strs holds the str of every non-string cell of the rows of several
	// cells: cell c's (c as in k.cells) is strs[from[c]:to[c]].
	var scratch []byte
	var from, to []int
	for r, row := range k.rows {
		if len(row) == 1 {
			continue
		}
		if from == nil {
			from, to = make([]int, len(k.cells)), make([]int, len(k.cells))
			scratch = make([]byte, 0, 8*len(k.cells))
		}
		for j, v := range row {
			c := k.first[r] + j
			from[c] = len(scratch)
			if _, isStr := v.(string); !isStr {
				scratch = appendPyStr(scratch, v)
			}
			to[c] = len(scratch)
		}
	}
	strs := string(scratch)
	str := func(r, j int) string {
		if s, ok := k.rows[r][j].(string); ok {
			return s
		}
		c := k.first[r] + j
		return strs[from[c]:to[c]]
	}
	return reorderedRows(k, func(r int, js []int) {
		row := k.rows[r]
		slices.SortStableFunc(js, func(a, b int) int {
			return compareJoined(str(r, a), pyTypeStr(row[a]), str(r, b), pyTypeStr(row[b]))
		})
	})
}

// compareJoined is strings.Compare(a1+a2, b1+b2) without building either.
func compareJoined(a1, a2, b1, b2 string) int {
	for {
		if a1 == "" {
			a1, a2 = a2, ""
		}
		if b1 == "" {
			b1, b2 = b2, ""
		}
		if a1 == "" || b1 == "" {
			return cmp.Compare(len(a1), len(b1)) // one side is exhausted
		}
		n := min(len(a1), len(b1))
		if c := strings.Compare(a1[:n], b1[:n]); c != 0 {
			return c
		}
		a1, b1 = a1[n:], b1[n:]
	}
}

// sameRowKeys is s1 == s2 when ordered, else set(s1) == set(s2).
func sameRowKeys(s1, s2 []string, ordered bool) bool {
	if ordered {
		return slices.Equal(s1, s2)
	}
	set1 := make(map[string]bool, len(s1))
	for _, k := range s1 {
		set1[k] = true
	}
	set2 := make(map[string]bool, len(s2))
	for _, k := range s2 {
		if !set1[k] {
			return false
		}
		set2[k] = true
	}
	return len(set1) == len(set2)
}

// pyTypeStr is str(type(v)) for the Python value sqlite3 would return.
func pyTypeStr(v table.Value) string {
	switch v.(type) {
	case nil:
		return "<class 'NoneType'>"
	case int64:
		return "<class 'int'>"
	case float64:
		return "<class 'float'>"
	case bool:
		return "<class 'bool'>"
	case []byte:
		return "<class 'bytes'>"
	default:
		return "<class 'str'>"
	}
}

// pyStr is Python's str(v).
func pyStr(v table.Value) string {
	if x, ok := v.(string); ok {
		return x
	}
	return string(appendPyStr(nil, v))
}

// appendPyStr appends Python's str(v) to b.
func appendPyStr(b []byte, v table.Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "None"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return appendPyFloatRepr(b, x)
	case bool:
		if x {
			return append(b, "True"...)
		}
		return append(b, "False"...)
	case []byte:
		return append(b, pyBytesRepr(x)...)
	case string:
		return append(b, x...)
	default:
		return append(b, table.Format(x)...)
	}
}

// pyFloatRepr is Python's repr(float) (appendPyFloatRepr).
func pyFloatRepr(f float64) string { return string(appendPyFloatRepr(nil, f)) }

// appendPyFloatRepr appends Python's repr(float): the shortest round-trip
// digits, in fixed notation with at least one fractional digit when the
// decimal exponent is in [-4, 16), otherwise as d.ddde±XX.
func appendPyFloatRepr(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	var tmp [40]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // -d.ddde±XX
	if s[0] == '-' {
		b = append(b, '-')
		s = s[1:]
	}
	e := slices.Index(s, 'e')
	mant, es := s[:e], s[e+1:]
	exp := 0
	for _, c := range es[1:] {
		exp = 10*exp + int(c-'0')
	}
	if es[0] == '-' {
		exp = -exp
	}
	var dbuf [40]byte
	digits := append(dbuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...) // the digits after "d."
	}
	if exp >= -4 && exp < 16 {
		if exp < 0 {
			b = append(b, "0."...)
			for range -exp - 1 {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		for len(digits) < exp+1 {
			digits = append(digits, '0')
		}
		b = append(append(b, digits[:exp+1]...), '.')
		if frac := digits[exp+1:]; len(frac) > 0 {
			return append(b, frac...)
		}
		return append(b, '0')
	}
	b = append(b, digits[0])
	if len(digits) > 1 {
		b = append(append(b, '.'), digits[1:]...)
	}
	b = append(b, 'e')
	if exp < 0 {
		b, exp = append(b, '-'), -exp
	} else {
		b = append(b, '+')
	}
	if exp < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(exp), 10)
}

// pyBytesRepr is Python's repr(bytes).
func pyBytesRepr(b []byte) string {
	q := byte('\'')
	if strings.IndexByte(string(b), '\'') >= 0 && strings.IndexByte(string(b), '"') < 0 {
		q = '"'
	}
	var sb strings.Builder
	sb.WriteString("b")
	sb.WriteByte(q)
	const hex = "0123456789abcdef"
	for _, c := range b {
		switch {
		case c == q || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			sb.WriteString(`\x`)
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte(q)
	return sb.String()
}
