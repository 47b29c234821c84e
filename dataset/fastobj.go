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
// validates with json.Valid, then walks the bytes itself: strings (their
// escapes decoded by unescape) and numbers are converted directly; strings
// with a surrogate escape or invalid UTF-8, arrays and objects go through
// encoding/json (UseNumber + normJSON as before).
func decodeObjectFast(data []byte) (Row, error) {
	if !json.Valid(data) {
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
