package llm

import (
	"bytes"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/evalflow/evalflow/internal/jsonquote"
)

// decodeChat reads a chat completion into out without reflection: it is
// json.Unmarshal(b, out) for the answers servers send, at a fraction of
// the cost. It says false — and out is then to be thrown away — for
// anything it does not handle exactly as encoding/json does (a syntax
// error, a value of an unexpected type, an integer out of range, a key
// that matches a field only case-insensitively, a repeated key, nesting
// deeper than encoding/json allows): the caller decodes those with
// encoding/json. The test fuzzes it against encoding/json.
func decodeChat(b []byte, out *chatResponse) bool {
	p := chatParser{b: b}
	p.space()
	if !p.object(p.topField(out)) {
		return false
	}
	p.space()
	return p.i == len(p.b)
}

type chatParser struct {
	b     []byte
	i     int
	depth int
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// fieldFunc decodes the value of key; seen reports whether the key came
// before in the same object. It returns false to give up.
type fieldFunc func(p *chatParser, key []byte) bool

// known reports whether key names one of fields exactly, and gives up
// (ok false) when it names one only as encoding/json's case-insensitive
// matching would (or might: any non-ASCII byte).
func known(key []byte, fields ...string) (name string, ok bool) {
	for _, f := range fields {
		if string(key) == f {
			return f, true
		}
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return "", false
		}
	}
	for _, f := range fields {
		if bytes.EqualFold(key, []byte(f)) {
			return "", false
		}
	}
	return "", true
}

func (p *chatParser) topField(out *chatResponse) fieldFunc {
	var seen [4]bool
	return func(p *chatParser, key []byte) bool {
		name, ok := known(key, "model", "system_fingerprint", "choices", "usage")
		if !ok {
			return false
		}
		switch name {
		case "model":
			return once(&seen[0]) && p.str(&out.Model)
		case "system_fingerprint":
			return once(&seen[1]) && p.str(&out.SystemFingerprint)
		case "choices":
			return once(&seen[2]) && p.choices(out)
		case "usage":
			if !once(&seen[3]) {
				return false
			}
			if p.null() {
				return true
			}
			var seenU [2]bool
			return p.object(func(p *chatParser, key []byte) bool {
				name, ok := known(key, "prompt_tokens", "completion_tokens")
				if !ok {
					return false
				}
				switch name {
				case "prompt_tokens":
					return once(&seenU[0]) && p.int(&out.Usage.PromptTokens)
				case "completion_tokens":
					return once(&seenU[1]) && p.int(&out.Usage.CompletionTokens)
				}
				return p.skip()
			})
		}
		return p.skip()
	}
}

func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

func (p *chatParser) choices(out *chatResponse) bool {
	if p.null() {
		out.Choices = nil
		return true
	}
	if !p.enter('[') {
		return false
	}
	out.Choices = out.Choices[:0]
	p.space()
	if p.peek() == ']' {
		if out.Choices == nil {
			out.Choices = []chatChoice{} // [] is an empty slice, not nil
		}
		p.i++
		p.depth--
		return true
	}
	for {
		out.Choices = append(out.Choices, chatChoice{})
		c := &out.Choices[len(out.Choices)-1]
		p.space()
		if !p.null() {
			var seen [2]bool
			ok := p.object(func(p *chatParser, key []byte) bool {
				name, ok := known(key, "finish_reason", "message")
				if !ok {
					return false
				}
				switch name {
				case "finish_reason":
					return once(&seen[0]) && p.str(&c.FinishReason)
				case "message":
					if !once(&seen[1]) {
						return false
					}
					if p.null() {
						return true
					}
					var seenM bool
					return p.object(func(p *chatParser, key []byte) bool {
						name, ok := known(key, "content")
						if !ok {
							return false
						}
						if name == "content" {
							return once(&seenM) && p.str(&c.Message.Content)
						}
						return p.skip()
					})
				}
				return p.skip()
			})
			if !ok {
				return false
			}
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return true
		default:
			return false
		}
	}
}

func (p *chatParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *chatParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// enter consumes an opening bracket, counting the depth.
func (p *chatParser) enter(c byte) bool {
	p.space()
	if p.peek() != c {
		return false
	}
	p.depth++
	if p.depth > maxDepth {
		return false
	}
	p.i++
	return true
}

// null consumes a null literal if one comes next.
func (p *chatParser) null() bool {
	p.space()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}

// object parses an object, calling field for each key with the parser
// positioned at its value.
func (p *chatParser) object(field fieldFunc) bool {
	if !p.enter('{') {
		return false
	}
	p.space()
	if p.peek() == '}' {
		p.i++
		p.depth--
		return true
	}
	for {
		p.space()
		raw, ok := p.rawString()
		if !ok {
			return false
		}
		p.space()
		if p.peek() != ':' {
			return false
		}
		p.i++
		key := raw
		if bytes.IndexByte(raw, '\\') >= 0 {
			// An escaped key: compare its unquoted form.
			k, ok := unquote(raw)
			if !ok {
				return false
			}
			key = k
		}
		if !field(p, key) {
			return false
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return true
		default:
			return false
		}
	}
}

// rawString consumes a string and returns its contents, still escaped,
// having checked them as encoding/json's scanner does.
func (p *chatParser) rawString() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	for i := start; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			p.i = i + 1
			return p.b[start:i], true
		case c == '\\':
			i++
			if i >= len(p.b) {
				return nil, false
			}
			switch p.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(p.b) {
					return nil, false
				}
				for _, h := range p.b[i+1 : i+5] {
					if !isHex(h) {
						return nil, false
					}
				}
				i += 4
			default:
				return nil, false
			}
		case c < ' ':
			return nil, false
		}
	}
	return nil, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str decodes a string or null (which leaves dst as it is) into dst.
func (p *chatParser) str(dst *string) bool {
	if p.null() {
		return true
	}
	raw, ok := p.rawString()
	if !ok {
		return false
	}
	s, ok := unquote(raw)
	if !ok {
		return false
	}
	*dst = string(s)
	return true
}

// int decodes an integer or null (which leaves dst as it is) into dst:
// a number with a fraction or an exponent, or out of range, is an error
// for encoding/json, so it gives up.
func (p *chatParser) int(dst *int64) bool {
	if p.null() {
		return true
	}
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || p.b[digits] == '0' && p.i-digits > 1 {
		return false
	}
	switch p.peek() {
	case '.', 'e', 'E':
		return false
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// skip consumes any value, checking it as encoding/json's scanner does.
func (p *chatParser) skip() bool {
	p.space()
	switch c := p.peek(); {
	case c == '{':
		return p.object(func(p *chatParser, _ []byte) bool { return p.skip() })
	case c == '[':
		if !p.enter('[') {
			return false
		}
		p.space()
		if p.peek() == ']' {
			p.i++
			p.depth--
			return true
		}
		for {
			if !p.skip() {
				return false
			}
			p.space()
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				p.depth--
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, ok := p.rawString()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			return true
		}
	}
	return false
}

// number consumes a JSON number.
func (p *chatParser) number() bool {
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case '1' <= c && c <= '9':
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
		}
	default:
		return false
	}
	if p.peek() == '.' {
		p.i++
		d := p.i
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
		}
		if p.i == d {
			return false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		d := p.i
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
		}
		if p.i == d {
			return false
		}
	}
	return true
}

// unquote is encoding/json's unquoting of a checked string's contents:
// escapes decoded, invalid UTF-8 and unpaired surrogates replaced by
// U+FFFD.
func unquote(s []byte) ([]byte, bool) {
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	b = append(b, s[:r]...)
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return nil, false
			}
			switch s[r] {
			default:
				return nil, false
			case '"', '\\', '/':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return nil, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			}
		case c == '"', c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b, true
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// appendChatRequest appends body as encoding/json's Encoder with
// SetEscapeHTML(false) writes it (newline included), byte for byte. It
// says false for what the Encoder refuses (a NaN or infinite float).
func appendChatRequest(b []byte, body *chatRequest) ([]byte, bool) {
	b = append(b, `{"model":`...)
	b = jsonquote.Append(b, body.Model, false)
	b = append(b, `,"messages":`...)
	if body.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range body.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = jsonquote.Append(b, m.Role, false)
			b = append(b, `,"content":`...)
			b = jsonquote.Append(b, m.Content, false)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	var ok bool
	if body.Temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, ok = appendJSONFloat(b, *body.Temperature); !ok {
			return b, false
		}
	}
	if body.TopP != nil {
		b = append(b, `,"top_p":`...)
		if b, ok = appendJSONFloat(b, *body.TopP); !ok {
			return b, false
		}
	}
	if body.MaxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(body.MaxTokens), 10)
	}
	if body.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, *body.Seed, 10)
	}
	if len(body.Stop) > 0 {
		b = append(b, `,"stop":[`...)
		for i, s := range body.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonquote.Append(b, s, false)
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...), true
}

// appendJSONFloat is encoding/json's float64 encoding; false for NaN and
// infinities, which it refuses.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
