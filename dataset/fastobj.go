package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Adopted from a measured prototype: 2.5× the items/s of the token decoder
// on the no-op pipeline benchmark (docs/benchmarks.md); FuzzFastMatchesSlow
// holds it to the token decoder's output.
//
// decodeObjectFast decodes one JSON object keeping its fields in order. It
// validates (validObject, or json.Valid for what that does not accept),
// then walks the bytes itself: strings (their
// escapes decoded by unescape) and numbers are converted directly; strings
// with a surrogate escape or invalid UTF-8, arrays and objects go through
// encoding/json (UseNumber + normJSON as before).
func decodeObjectFast(data []byte) (Row, error) {
	if !validObject(data) && !json.Valid(data) {
		return decodeObjectSlow(data) // same error text as before
	}
	i := skipWS(data, 0)
	if data[i] != '{' {
		return Row{}, errors.New("expected a JSON object")
	}
	i = skipWS(data, i+1)
	var r Row
	if data[i] == '}' {
		return r, nil
	}
	for {
		end := endString(data, i)
		key, err := stringValue(data[i:end])
		if err != nil {
			return Row{}, err
		}
		i = skipWS(data, end)
		i = skipWS(data, i+1) // ':'
		vend := endValue(data, i)
		v, err := value(data[i:vend])
		if err != nil {
			return Row{}, err
		}
		r.Names = append(r.Names, key)
		r.Values = append(r.Values, v)
		i = skipWS(data, vend)
		if data[i] == '}' {
			return r, nil
		}
		i = skipWS(data, i+1) // ','
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endString returns the index just past the string starting at b[i] == '"'.
func endString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

func endValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return endString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = endString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

func stringValue(s []byte) (string, error) {
	if !utf8.Valid(s) {
		var out string
		err := json.Unmarshal(s, &out) // replaces invalid bytes as before
		return out, err
	}
	body := s[1 : len(s)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	if out, ok := unescape(body); ok {
		return out, nil
	}
	var out string
	err := json.Unmarshal(s, &out)
	return out, err
}

// unescape decodes the escapes of a valid JSON string's body (json.Valid
// has checked it): the one-letter escapes and \uXXXX outside the surrogate
// range. A surrogate (a pair, or a lone one that encoding/json replaces)
// reports false, and the caller decodes with encoding/json. Text with
// escapes is common (SQL quotes in gold queries).
func unescape(b []byte) (string, bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 32)
			if err != nil || (r >= 0xd800 && r < 0xe000) {
				return "", false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

func value(s []byte) (any, error) {
	switch s[0] {
	case '"':
		return stringValue(s)
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	case '{', '[':
		dec := json.NewDecoder(bytes.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return normJSON(v), nil
	}
	if i, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		return i, nil
	}
	f, _ := strconv.ParseFloat(string(s), 64)
	return f, nil
}

// validObject reports whether data is one JSON object, surrounded by
// whitespace only, whose values are strings, numbers, true, false, null,
// or arrays and objects that json.Valid accepts: the common dataset line,
// checked in one pass of its own instead of encoding/json's scanner (which
// took about 40% of decodeObjectFast's time). It never accepts what
// json.Valid rejects; it may reject what json.Valid accepts (the caller
// then asks json.Valid): FuzzValidObject holds it to that.
func validObject(b []byte) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		var ok bool
		if i, ok = validString(b, i); !ok {
			return false
		}
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		if i, ok = validValue(b, skipWS(b, i+1)); !ok {
			return false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return skipWS(b, i+1) == len(b)
		case ',':
			i = skipWS(b, i+1)
		default:
			return false
		}
	}
}

// validString checks the JSON string at b[i] and returns the index past it.
func validString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			j++
			if j >= len(b) {
				return j, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return j, false
				}
				for _, h := range b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return j, false
					}
				}
				j += 4
			default:
				return j, false
			}
		}
	}
	return len(b), false
}

// validValue checks the JSON value at b[i] and returns the index past it.
func validValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '{' || c == '[':
		end := endValue(b, i)
		return end, json.Valid(b[i:end])
	case c == '-' || '0' <= c && c <= '9':
		return validNumber(b, i)
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// validNumber checks JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}
