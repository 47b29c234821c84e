// Package jsonquote writes a Go string as a JSON string literal, byte for
// byte as encoding/json does, into a caller's buffer. encoding/json offers
// this only through Marshal (reflection, an allocation per call) or an
// Encoder (a trailing newline, a writer); the hand-written request bodies
// of package llm and the stage cache keys of package nodes write many
// strings per call and must keep json.Marshal's exact bytes (the keys of
// existing caches depend on them).
package jsonquote

import "unicode/utf8"

// Append appends s quoted as encoding/json quotes a string: with
// escapeHTML as json.Marshal does (<, > and & as \u003c, \u003e, \u0026),
// without it as an Encoder with SetEscapeHTML(false) does. Invalid UTF-8
// becomes \ufffd; U+2028 and U+2029 are escaped.
func Append(dst []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && (!escapeHTML || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control bytes; <, > and & when escaping HTML
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
