package sparql

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"sort"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/table"
)

// Term is one RDF term as a SPARQL result carries it. Kind is "uri",
// "literal", "bnode" or "" (unbound); Virtuoso's "typed-literal" is read as
// "literal". Datatype and Lang are set only on literals (at most one of
// them).
type Term struct {
	Kind     string
	Value    string
	Datatype string
	Lang     string
}

// XSD namespace and the datatypes that get a Go type.
const xsd = "http://www.w3.org/2001/XMLSchema#"

var intTypes = map[string]bool{
	xsd + "integer": true, xsd + "int": true, xsd + "long": true, xsd + "short": true, xsd + "byte": true,
	xsd + "nonNegativeInteger": true, xsd + "positiveInteger": true, xsd + "negativeInteger": true,
	xsd + "nonPositiveInteger": true, xsd + "unsignedLong": true, xsd + "unsignedInt": true,
	xsd + "unsignedShort": true, xsd + "unsignedByte": true,
}

var floatTypes = map[string]bool{xsd + "decimal": true, xsd + "double": true, xsd + "float": true}

// Terms selects how RDF terms become table values (option "terms").
const (
	// TermsValue (the default) gives what a SPARQL JSON result's "value"
	// field holds, which is what the BuildingQA and TEXT2SPARQL scorers
	// compare: an IRI bare (http://x/y), a literal's lexical form without
	// its language tag or datatype; a blank node "_:label". A numeric or
	// boolean literal becomes int64 (xsd integer types), float64
	// (xsd:decimal/double/float) or bool only when that value prints back
	// (table.Format) to exactly the endpoint's lexical form, so the lexical
	// form always survives from the endpoint to the metric: "42" is
	// int64(42) and "2.5" float64(2.5), but "1234567890123456789.5",
	// "0.0000001", "1.0", "007" and "INF" stay strings (a float64 round
	// trip would print them differently).
	TermsValue = "value"
	// TermsNTriples gives every term as a string in N-Triples syntax:
	// <http://x/y>, "chat"@fr, "1"^^<http://www.w3.org/2001/XMLSchema#integer>,
	// "plain" (xsd:string is left implicit), _:label. Nothing is converted,
	// so two results are equal exactly when their RDF terms are.
	TermsNTriples = "ntriples"
)

// Normal converts t to its table normal form under the given terms mode
// (TermsValue or TermsNTriples). An unbound term is nil.
func (t Term) Normal(terms string) table.Value {
	switch t.Kind {
	case "":
		return nil
	case "bnode":
		return "_:" + t.Value
	case "uri":
		if terms == TermsNTriples {
			return "<" + t.Value + ">"
		}
		return t.Value
	}
	if terms == TermsNTriples {
		s := `"` + escapeLiteral(t.Value) + `"`
		switch {
		case t.Lang != "":
			s += "@" + t.Lang
		case t.Datatype != "" && t.Datatype != xsd+"string":
			s += "^^<" + t.Datatype + ">"
		}
		return s
	}
	if v := t.typedValue(); v != nil && table.Format(v) == t.Value {
		return v
	}
	return t.Value
}

// typedValue is the Go value of a numeric or boolean literal, nil for other
// terms or when the lexical form does not parse.
func (t Term) typedValue() table.Value {
	switch {
	case intTypes[t.Datatype]:
		if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(t.Value, "+")), 10, 64); err == nil {
			return n
		}
	case floatTypes[t.Datatype]:
		if f, err := parseXSDFloat(t.Value); err == nil {
			return f
		}
	case t.Datatype == xsd+"boolean":
		switch strings.TrimSpace(t.Value) {
		case "true", "1":
			return true
		case "false", "0":
			return false
		}
	}
	return nil
}

// parseXSDFloat parses xsd:double/float/decimal lexical forms, including
// INF, -INF and NaN but not Go-only forms such as hex floats or "Infinity".
func parseXSDFloat(s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "INF", "+INF":
		s = "+Inf"
	case "-INF":
		s = "-Inf"
	case "NaN":
	default:
		if s == "" || strings.ContainsAny(s, "xXpP_iInN") {
			return 0, errors.New("not an xsd number")
		}
	}
	return strconv.ParseFloat(s, 64)
}

func escapeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// Result is a decoded SPARQL query result: either Boolean (ASK) or Vars and
// Rows (SELECT). Rows[i][j] is the binding of Vars[j] in row i.
type Result struct {
	Vars    []string
	Rows    [][]Term
	Boolean *bool
	// Truncated reports that reading stopped at the row limit.
	Truncated bool
}

// Table converts r to a table. An ASK result is a 1×1 table with one bool
// column named "ask". Column types are inferred from the values: a column
// whose bound values all have one Go type gets that type, any other column
// (mixed, or never bound) is TypeAny.
func (r *Result) Table(terms string) *table.Table {
	if r.Boolean != nil {
		return &table.Table{Columns: []table.Column{{Name: "ask", Type: table.TypeBool}}, Rows: [][]table.Value{{*r.Boolean}}}
	}
	t := &table.Table{Columns: make([]table.Column, len(r.Vars)), Rows: make([][]table.Value, len(r.Rows)), Truncated: r.Truncated}
	for i, row := range r.Rows {
		vals := make([]table.Value, len(r.Vars))
		for j := range vals {
			if j < len(row) {
				vals[j] = row[j].Normal(terms)
			}
		}
		t.Rows[i] = vals
	}
	for j, v := range r.Vars {
		t.Columns[j] = table.Column{Name: v, Type: inferType(t.Rows, j)}
	}
	return t
}

func inferType(rows [][]table.Value, j int) table.Type {
	typ, seen := table.TypeAny, false
	for _, row := range rows {
		var tt table.Type
		switch row[j].(type) {
		case nil:
			continue
		case int64:
			tt = table.TypeInt
		case float64:
			tt = table.TypeFloat
		case bool:
			tt = table.TypeBool
		default:
			tt = table.TypeString
		}
		if seen && tt != typ {
			return table.TypeAny
		}
		typ, seen = tt, true
	}
	return typ
}

// Media types of the result formats this package reads.
const (
	MediaJSON = "application/sparql-results+json"
	MediaXML  = "application/sparql-results+xml"
	MediaTSV  = "text/tab-separated-values"
	MediaCSV  = "text/csv"
)

// errNotResult is returned when a body holds no result at all.
var errNotResult = errors.New("not a SPARQL result")

// Decode reads a SPARQL result in the format named by contentType (a
// Content-Type header value; parameters are ignored). JSON, XML, TSV and CSV
// results are read; application/json and application/xml count as the
// SPARQL result types. maxRows > 0 stops reading after that many rows and
// sets Truncated when more followed. ask says the query was an ASK, which
// lets TSV/CSV bodies that hold only true or false (as Oxigraph writes them)
// and Virtuoso's one-cell __ask_retval tables read as booleans.
func Decode(body io.Reader, contentType string, maxRows int, ask bool) (*Result, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	var r *Result
	switch mt {
	case MediaJSON, "application/json":
		r, err = decodeJSON(body, maxRows)
	case MediaXML, "application/xml", "text/xml":
		r, err = decodeXML(body, maxRows)
	case MediaTSV:
		r, err = decodeTSV(body, maxRows, ask)
	case MediaCSV:
		r, err = decodeCSV(body, maxRows, ask)
	default:
		return nil, fmt.Errorf("unsupported result media type %q (read: %s, %s, %s, %s)", contentType, MediaJSON, MediaXML, MediaTSV, MediaCSV)
	}
	if err != nil {
		return nil, err
	}
	if ask && r.Boolean == nil && len(r.Vars) == 1 && len(r.Rows) == 1 {
		// Virtuoso answers ASK with a one-cell table (__ask_retval = 0/1).
		switch v := strings.TrimSpace(r.Rows[0][0].Value); v {
		case "1", "true":
			b := true
			r = &Result{Boolean: &b}
		case "0", "false":
			b := false
			r = &Result{Boolean: &b}
		}
	}
	return r, nil
}

type jsonTerm struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Datatype string `json:"datatype"`
	Lang     string `json:"xml:lang"`
}

func (j jsonTerm) term() Term {
	t := Term{Kind: j.Type, Value: j.Value, Datatype: j.Datatype, Lang: j.Lang}
	switch t.Kind {
	case "typed-literal":
		t.Kind = "literal"
	case "literal":
	case "uri", "bnode":
		t.Datatype, t.Lang = "", ""
	case "triple":
		// RDF-star quoted triple: kept as its JSON value text.
		t.Kind = "literal"
	}
	if t.Kind == "literal" && t.Lang != "" {
		t.Datatype = ""
	}
	return t
}

// decodeJSON streams application/sparql-results+json, decoding bindings one
// at a time so that a row cap stops reading early.
func decodeJSON(body io.Reader, maxRows int) (*Result, error) {
	dec := json.NewDecoder(bufio.NewReader(body))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	r := &Result{}
	var maps []map[string]jsonTerm
	haveHead := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "head":
			var h struct {
				Vars []string `json:"vars"`
			}
			if err := dec.Decode(&h); err != nil {
				return nil, fmt.Errorf("sparql results head: %w", err)
			}
			r.Vars, haveHead = h.Vars, true
		case "boolean":
			var b bool
			if err := dec.Decode(&b); err != nil {
				return nil, fmt.Errorf("sparql results boolean: %w", err)
			}
			r.Boolean = &b
		case "results":
			if err := expectDelim(dec, '{'); err != nil {
				return nil, err
			}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if k, _ := tok.(string); k != "bindings" {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return nil, err
					}
					continue
				}
				if err := expectDelim(dec, '['); err != nil {
					return nil, err
				}
				for dec.More() {
					if maxRows > 0 && len(maps) == maxRows {
						r.Truncated = true
						goto done
					}
					var m map[string]jsonTerm
					if err := dec.Decode(&m); err != nil {
						return nil, fmt.Errorf("sparql results binding %d: %w", len(maps), err)
					}
					maps = append(maps, m)
				}
				if _, err := dec.Token(); err != nil { // ]
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil { // }
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
done:
	if r.Boolean != nil {
		return r, nil
	}
	if !haveHead && maps == nil {
		return nil, errNotResult
	}
	r.Vars = withExtraVars(r.Vars, func(yield func(string)) {
		for _, m := range maps {
			for k := range m {
				yield(k)
			}
		}
	})
	idx := varIndex(r.Vars)
	r.Rows = make([][]Term, len(maps))
	for i, m := range maps {
		row := make([]Term, len(r.Vars))
		for k, jt := range m {
			row[idx[k]] = jt.term()
		}
		r.Rows[i] = row
	}
	return r, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("sparql results: %w", err)
	}
	if tok != d {
		return fmt.Errorf("sparql results: expected %v, got %v", d, tok)
	}
	return nil
}

// withExtraVars appends, in sorted order, variables that bindings use but
// the head does not declare (some endpoints omit them).
func withExtraVars(vars []string, each func(yield func(string))) []string {
	known := map[string]bool{}
	for _, v := range vars {
		known[v] = true
	}
	var extra []string
	each(func(k string) {
		if !known[k] {
			known[k] = true
			extra = append(extra, k)
		}
	})
	sort.Strings(extra)
	return append(vars, extra...)
}

func varIndex(vars []string) map[string]int {
	idx := make(map[string]int, len(vars))
	for i, v := range vars {
		idx[v] = i
	}
	return idx
}

// decodeXML streams application/sparql-results+xml.
func decodeXML(body io.Reader, maxRows int) (*Result, error) {
	dec := xml.NewDecoder(bufio.NewReader(body))
	r := &Result{}
	type binding struct {
		name string
		term Term
	}
	var (
		rows    [][]binding
		cur     []binding
		inRes   bool
		name    string
		term    *Term
		text    strings.Builder
		sawRoot bool
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sparql xml results: %w", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "sparql":
				sawRoot = true
			case "variable":
				r.Vars = append(r.Vars, attr(el, "name"))
			case "result":
				if maxRows > 0 && len(rows) == maxRows {
					r.Truncated = true
					goto done
				}
				inRes, cur = true, nil
			case "binding":
				name = attr(el, "name")
			case "uri", "literal", "bnode":
				if inRes {
					term = &Term{Kind: el.Name.Local, Datatype: attr(el, "datatype"), Lang: attr(el, "lang")}
					text.Reset()
				}
			case "boolean":
				text.Reset()
			}
		case xml.CharData:
			text.Write(el)
		case xml.EndElement:
			switch el.Name.Local {
			case "uri", "literal", "bnode":
				if term != nil {
					term.Value = text.String()
					cur = append(cur, binding{name, *term})
					term = nil
				}
			case "result":
				rows = append(rows, cur)
				inRes = false
			case "boolean":
				b := strings.TrimSpace(text.String()) == "true"
				r.Boolean = &b
			}
		}
	}
done:
	if !sawRoot {
		return nil, errNotResult
	}
	if r.Boolean != nil {
		return r, nil
	}
	r.Vars = withExtraVars(r.Vars, func(yield func(string)) {
		for _, row := range rows {
			for _, b := range row {
				yield(b.name)
			}
		}
	})
	idx := varIndex(r.Vars)
	for _, row := range rows {
		out := make([]Term, len(r.Vars))
		for _, b := range row {
			out[idx[b.name]] = b.term
		}
		r.Rows = append(r.Rows, out)
	}
	return r, nil
}

func attr(el xml.StartElement, local string) string {
	for _, a := range el.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// decodeTSV reads text/tab-separated-values: a header of ?vars, then one
// row per line with terms in Turtle/N-Triples syntax and empty fields for
// unbound variables.
func decodeTSV(body io.Reader, maxRows int, ask bool) (*Result, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 64<<20)
	r := &Result{}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, errNotResult
	}
	head := strings.TrimSuffix(sc.Text(), "\r")
	if b, ok := askBody(head, ask); ok {
		r.Boolean = &b
		return r, nil
	}
	if head != "" {
		for _, v := range strings.Split(head, "\t") {
			r.Vars = append(r.Vars, strings.TrimLeft(v, "?$"))
		}
	}
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if maxRows > 0 && len(r.Rows) == maxRows {
			r.Truncated = true
			break
		}
		fields := strings.Split(line, "\t")
		if len(r.Vars) == 0 && line == "" {
			r.Rows = append(r.Rows, nil)
			continue
		}
		if len(fields) != len(r.Vars) {
			return nil, fmt.Errorf("sparql tsv results: row %d has %d fields, header has %d", len(r.Rows)+1, len(fields), len(r.Vars))
		}
		row := make([]Term, len(fields))
		for i, f := range fields {
			t, err := parseTSVTerm(f)
			if err != nil {
				return nil, fmt.Errorf("sparql tsv results: row %d, ?%s: %w", len(r.Rows)+1, r.Vars[i], err)
			}
			row[i] = t
		}
		r.Rows = append(r.Rows, row)
	}
	return r, sc.Err()
}

func askBody(line string, ask bool) (bool, bool) {
	if !ask {
		return false, false
	}
	switch strings.TrimSpace(line) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parseTSVTerm parses one TSV field: <iri>, _:label, "lexical" with an
// optional @lang or ^^<datatype>, or a bare Turtle number or boolean.
func parseTSVTerm(f string) (Term, error) {
	switch {
	case f == "":
		return Term{}, nil
	case strings.HasPrefix(f, "<") && strings.HasSuffix(f, ">"):
		return Term{Kind: "uri", Value: unescapeIRI(f[1 : len(f)-1])}, nil
	case strings.HasPrefix(f, "_:"):
		return Term{Kind: "bnode", Value: f[2:]}, nil
	case strings.HasPrefix(f, `"`):
		lex, rest, err := unquote(f)
		if err != nil {
			return Term{}, err
		}
		t := Term{Kind: "literal", Value: lex}
		switch {
		case rest == "":
		case strings.HasPrefix(rest, "@"):
			t.Lang = rest[1:]
		case strings.HasPrefix(rest, "^^<") && strings.HasSuffix(rest, ">"):
			t.Datatype = unescapeIRI(rest[3 : len(rest)-1])
		default:
			return Term{}, fmt.Errorf("unexpected %q after literal", rest)
		}
		return t, nil
	case f == "true" || f == "false":
		return Term{Kind: "literal", Value: f, Datatype: xsd + "boolean"}, nil
	}
	// Turtle numeric shorthands.
	switch {
	case isInteger(f):
		return Term{Kind: "literal", Value: f, Datatype: xsd + "integer"}, nil
	case strings.ContainsAny(f, "eE"):
		if _, err := strconv.ParseFloat(f, 64); err == nil {
			return Term{Kind: "literal", Value: f, Datatype: xsd + "double"}, nil
		}
	case strings.Contains(f, "."):
		if _, err := strconv.ParseFloat(f, 64); err == nil {
			return Term{Kind: "literal", Value: f, Datatype: xsd + "decimal"}, nil
		}
	}
	return Term{}, fmt.Errorf("cannot read term %q", f)
}

func isInteger(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// unquote reads a double-quoted Turtle string with ECHAR and UCHAR escapes
// from the start of f and returns its value and what follows it.
func unquote(f string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(f); i++ {
		c := f[i]
		switch c {
		case '"':
			return b.String(), f[i+1:], nil
		case '\\':
			if i+1 >= len(f) {
				return "", "", errors.New("dangling backslash in literal")
			}
			i++
			switch f[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case '"', '\'', '\\':
				b.WriteByte(f[i])
			case 'u', 'U':
				n := 4
				if f[i] == 'U' {
					n = 8
				}
				if i+n >= len(f) {
					return "", "", errors.New("short \\u escape in literal")
				}
				cp, err := strconv.ParseUint(f[i+1:i+1+n], 16, 32)
				if err != nil {
					return "", "", fmt.Errorf("bad \\u escape in literal: %w", err)
				}
				b.WriteRune(rune(cp))
				i += n
			default:
				return "", "", fmt.Errorf("unknown escape \\%c in literal", f[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated literal")
}

func unescapeIRI(s string) string {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\U`) {
		return s
	}
	if v, _, err := unquote(`"` + s + `"`); err == nil {
		return v
	}
	return s
}

// decodeCSV reads text/csv results. CSV carries no term kinds: every bound
// value is a plain literal holding the IRI or lexical form, and an empty
// field is unbound (CSV cannot tell it from an empty string).
func decodeCSV(body io.Reader, maxRows int, ask bool) (*Result, error) {
	cr := csv.NewReader(bufio.NewReader(body))
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errNotResult
	}
	if err != nil {
		return nil, fmt.Errorf("sparql csv results: %w", err)
	}
	r := &Result{}
	if len(head) == 1 {
		if b, ok := askBody(head[0], ask); ok {
			r.Boolean = &b
			return r, nil
		}
	}
	r.Vars = head
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sparql csv results: %w", err)
		}
		if maxRows > 0 && len(r.Rows) == maxRows {
			r.Truncated = true
			break
		}
		row := make([]Term, len(r.Vars))
		for i := range row {
			if i < len(rec) && rec[i] != "" {
				row[i] = Term{Kind: "literal", Value: rec[i]}
			}
		}
		r.Rows = append(r.Rows, row)
	}
	return r, nil
}
