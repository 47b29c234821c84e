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
	return sameRowKeys(unorderedRows(gold), unorderedRows(pred), ordered)
}

// exQuickRejectKeyed is exQuickReject on keyed rows: a row of one cell,
// which has one order, is its key as it is (no allocation).
func exQuickRejectKeyed(gold, pred *exKeyed, ordered bool) bool {
	return sameRowKeys(unorderedKeyed(gold), unorderedKeyed(pred), ordered)
}

// unorderedKeyed is unorderedRows of k.rows.
func unorderedKeyed(k *exKeyed) []string {
	out := make([]string, len(k.rows))
	var rest [][]table.Value
	var at []int
	for r, row := range k.rows {
		if len(row) == 1 {
			out[r] = k.row(r)
			continue
		}
		rest, at = append(rest, row), append(at, r)
	}
	if len(rest) > 0 {
		for i, key := range unorderedRows(rest) {
			out[at[i]] = key
		}
	}
	return out
}

// unorderedRows is each row's cells sorted by str(x) + str(type(x)), as
// one key a row.
func unorderedRows(rows [][]table.Value) []string {
	// A cell's sort key is str + typ, compared without building it.
	type cell struct {
		str, typ string
		v        table.Value
	}
	var cells []cell
	var buf []byte
	out := make([]string, len(rows))
	for i, row := range rows {
		buf = buf[:0]
		if len(row) == 1 {
			// One cell has one order: no sort keys to build (most results
			// have one column).
			buf = exValueKey(buf, row[0])
		} else {
			cells = cells[:0]
			for _, v := range row {
				cells = append(cells, cell{pyStr(v), pyTypeStr(v), v})
			}
			slices.SortStableFunc(cells, func(a, b cell) int { return compareJoined(a.str, a.typ, b.str, b.typ) })
			for _, c := range cells {
				buf = exValueKey(buf, c.v)
			}
		}
		out[i] = string(buf)
	}
	return out
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
	switch x := v.(type) {
	case nil:
		return "None"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return pyFloatRepr(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case []byte:
		return pyBytesRepr(x)
	case string:
		return x
	default:
		return table.Format(x)
	}
}

// pyFloatRepr is Python's repr(float): the shortest round-trip digits, in
// fixed notation with at least one fractional digit when the decimal
// exponent is in [-4, 16), otherwise as d.ddde±XX.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			frac := digits[exp+1:]
			if frac == "" {
				frac = "0"
			}
			out = digits[:exp+1] + "." + frac
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		out = m + "e" + sign + e
	}
	if neg {
		out = "-" + out
	}
	return out
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
