package dsl

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Limits on what a pipeline may ask of the parser and the function library.
// hclsyntax's parser is a recursive descent: 100,000 nested parentheses
// overflow the Go stack (a crash no recover catches), so nesting is
// measured on the token stream — the lexer does not recurse — before the
// parser sees the bytes. Functions that can be asked for unbounded work
// (range, pow, format widths, setproduct) or read files are wrapped.
const (
	MaxFileSize     = 8 << 20 // bytes of one pipeline, var or template file
	MaxNesting      = 200     // brackets, braces, parentheses and interpolations
	MaxRangeLen     = 1 << 20 // elements range() may produce
	MaxFormatWidth  = 10000   // width or precision in a format verb
	MaxPowExponent  = 1024
	MaxSetProduct   = 1 << 20
	maxValueTextLen = 1 << 20 // a -var value
)

// checkSource refuses a file that is too large or nested too deeply, with
// the position of the byte at fault.
func checkSource(src []byte, filename string, pos hcl.Pos, expr bool) hcl.Diagnostics {
	limit := MaxFileSize
	if expr {
		limit = maxValueTextLen
	}
	if len(src) > limit {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "File too large",
			Detail:  fmt.Sprintf("%s is %d bytes; a pipeline or variable file may hold at most %d.", filename, len(src), limit),
			Subject: &hcl.Range{Filename: filename, Start: pos, End: pos}}}
	}
	if len(filename) > 5 && filename[len(filename)-5:] == ".json" {
		return checkJSONNesting(src, filename)
	}
	var toks hclsyntax.Tokens
	if expr {
		toks, _ = hclsyntax.LexExpression(src, filename, pos)
	} else {
		toks, _ = hclsyntax.LexConfig(src, filename, pos)
	}
	depth := 0
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			depth++
			if depth > MaxNesting {
				return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Nested too deeply",
					Detail:  fmt.Sprintf("Expressions and blocks may nest at most %d levels; this one goes deeper. Split it into locals.", MaxNesting),
					Subject: t.Range.Ptr()}}
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

func checkJSONNesting(src []byte, filename string) hcl.Diagnostics {
	depth, line, col := 0, 1, 1
	inString, esc := false, false
	for _, b := range src {
		switch {
		case inString && esc:
			esc = false
		case inString && b == '\\':
			esc = true
		case b == '"':
			inString = !inString
		case !inString && (b == '{' || b == '['):
			depth++
			if depth > MaxNesting {
				p := hcl.Pos{Line: line, Column: col}
				return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Nested too deeply",
					Detail:  fmt.Sprintf("JSON may nest at most %d levels.", MaxNesting),
					Subject: &hcl.Range{Filename: filename, Start: p, End: p}}}
			}
		case !inString && (b == '}' || b == ']'):
			depth--
		}
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return nil
}

// readLimited reads a regular file of at most MaxFileSize bytes: a FIFO or
// a device (/dev/zero) would block or never end.
func readLimited(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxFileSize)
	}
	return b, nil
}

// guard wraps f so that check runs on its arguments first.
func guard(f function.Function, check func(args []cty.Value) error) function.Function {
	spec := &function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			return f.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for _, a := range args {
				if !a.IsWhollyKnown() {
					return f.Call(args)
				}
			}
			if err := check(args); err != nil {
				return cty.NilVal, err
			}
			return f.Call(args)
		},
	}
	return function.New(spec)
}

func num(v cty.Value) (*big.Float, bool) {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return nil, false
	}
	return v.AsBigFloat(), true
}

var errTooMuch = errors.New("too much work asked of one function call")

func rangeCheck(args []cty.Value) error {
	var start, end, step float64 = 0, 0, 1
	fs := make([]float64, len(args))
	for i, a := range args {
		f, ok := num(a)
		if !ok {
			return nil
		}
		fs[i], _ = f.Float64()
	}
	switch len(fs) {
	case 1:
		end = fs[0]
	case 2:
		start, end = fs[0], fs[1]
	case 3:
		start, end, step = fs[0], fs[1], fs[2]
	}
	if step == 0 {
		return nil
	}
	if n := (end - start) / step; n > MaxRangeLen {
		return fmt.Errorf("%w: range would have %.0f elements (at most %d)", errTooMuch, n, MaxRangeLen)
	}
	return nil
}

func powCheck(args []cty.Value) error {
	if f, ok := num(args[1]); ok {
		if e, _ := f.Float64(); e > MaxPowExponent || e < -MaxPowExponent {
			return fmt.Errorf("%w: pow exponent %g is beyond ±%d", errTooMuch, e, MaxPowExponent)
		}
	}
	return nil
}

var formatVerb = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%[-+# 0]*(\[\d+\])?(\d*)(?:\.(\d*))?`) })

func formatCheck(args []cty.Value) error {
	if len(args) == 0 || args[0].IsNull() || args[0].Type() != cty.String {
		return nil
	}
	for _, m := range formatVerb().FindAllStringSubmatch(args[0].AsString(), -1) {
		for _, g := range m[2:] {
			if n, err := strconv.Atoi(g); err == nil && n > MaxFormatWidth || len(g) > 6 {
				return fmt.Errorf("%w: format width or precision %s is beyond %d", errTooMuch, g, MaxFormatWidth)
			}
		}
	}
	return nil
}

func setProductCheck(args []cty.Value) error {
	total := 1.0
	for _, a := range args {
		if a.IsNull() || !a.CanIterateElements() {
			return nil
		}
		total *= float64(a.LengthInt())
		if total > MaxSetProduct {
			return fmt.Errorf("%w: setproduct would have more than %d elements", errTooMuch, MaxSetProduct)
		}
	}
	return nil
}

// hardened wraps the library's unbounded functions.
func hardened(fns map[string]function.Function) {
	fns["range"] = guard(fns["range"], rangeCheck)
	fns["pow"] = guard(fns["pow"], powCheck)
	fns["format"] = guard(fns["format"], formatCheck)
	fns["formatlist"] = guard(fns["formatlist"], formatCheck)
	fns["setproduct"] = guard(fns["setproduct"], setProductCheck)
}
