package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/sqltext"
)

// Score is a validator's score in [0,1] with a reason for every element
// that failed. Checked counts the elements the score is over (0 when
// nothing could be checked, in which case Value is 1, as CyVer's
// SchemaValidator scores a query it extracts nothing from).
type Score struct {
	Value   float64
	Checked int
	Reasons []string
}

// part is one component of a score: ok of n elements.
type part struct{ ok, n int }

// meanOf is CyVer's SchemaValidator score: the equally weighted mean of the
// fractions of the parts that have elements, 1 when none has.
func meanOf(parts ...part) (float64, int) {
	sum, k, n := 0.0, 0, 0
	for _, p := range parts {
		if p.n == 0 {
			continue
		}
		sum += float64(p.ok) / float64(p.n)
		k++
		n += p.n
	}
	if k == 0 {
		return 1, 0
	}
	return sum / float64(k), n
}

// Schema scores how well the names query uses exist in the database whose
// schema s describes: tables and columns for SQL, node labels, relationship
// types and one-hop paths for Cypher (s mapped with GraphFromSchema), classes
// and predicates for SPARQL (s as engine/sparql's Describe returns it).
// The score is the mean of the fractions of names found per kind, over the
// kinds that occur (docs/validation.md); a nil schema scores 1 with nothing
// checked.
func Schema(lang, query string, s *engine.Schema) Score {
	if s == nil {
		return Score{Value: 1}
	}
	q := normalize(query)
	switch strings.ToLower(lang) {
	case SQL:
		return schemaSQL(q, s)
	case Cypher:
		if why := cypherUnparsable(q); why != "" {
			return Unparsable(why)
		}
		sc, _, _ := cypherScores(q, GraphFromSchema(s))
		return sc
	case SPARQL:
		return schemaSPARQL(q, s, nil)
	}
	return Score{Value: 1}
}

// Unparsable is the schema and properties score of a query that does not
// parse: 0, with the parse failure as its reason. A query that does not
// parse cannot be checked against the schema, so the score must not reward
// it; the Metrics Reference Documentation's KG Valid requires the syntax
// validator to pass before schema and properties count, and CyVer's
// 1-when-nothing-extracted rule is for queries that parse
// (docs/validation.md).
func Unparsable(why string) Score {
	return Score{Value: 0, Reasons: []string{"query does not parse, so the schema was not checked: " + why}}
}

// closedQuote reports whether the quoted token s ends with its opening
// quote, not escaped by a backslash.
func closedQuote(s string) bool {
	n := len(s)
	if n < 2 || s[n-1] != s[0] {
		return false
	}
	bs := 0
	for i := n - 2; i > 0 && s[i] == '\\'; i-- {
		bs++
	}
	return bs%2 == 0
}

// cypherUnparsable returns why q cannot be a Cypher query as far as the
// lexer can tell (empty, unbalanced brackets, an unterminated string or
// quoted name), or "" when it may parse. The engine's own syntax check
// (the validate stage's syntax = true) catches everything else.
func cypherUnparsable(q string) string {
	sig := sigToks(lexCypher(q, true))
	if len(sig) == 0 {
		return "empty query"
	}
	var stack []byte
	closer := map[string]byte{")": '(', "]": '[', "}": '{'}
	for _, t := range sig {
		switch t.Kind {
		case tString, tQuoted:
			if !closedQuote(t.Text) {
				return "unterminated " + map[bool]string{true: "string", false: "quoted name"}[t.Kind == tString]
			}
		case tPunct:
			switch t.Text {
			case "(", "[", "{":
				stack = append(stack, t.Text[0])
			case ")", "]", "}":
				if len(stack) == 0 || stack[len(stack)-1] != closer[t.Text] {
					return "unbalanced " + t.Text
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return "unclosed " + string(stack[len(stack)-1])
	}
	return ""
}

// Properties is CyVer's PropertiesValidator precision for a Cypher query:
// of the (label, property) accesses the query makes (n.prop with n bound to
// a label, and {prop: …} maps in patterns), the share whose property exists
// on that label. ok is false when the query accesses no property of a
// labelled variable (CyVer returns None); evalflow records that as null and
// does not fail the attempt for it. Other languages are never ok.
func Properties(lang, query string, s *engine.Schema) (sc Score, ok bool) {
	if s == nil || !strings.EqualFold(lang, Cypher) {
		return Score{}, false
	}
	q := normalize(query)
	if why := cypherUnparsable(q); why != "" {
		return Unparsable(why), true
	}
	_, p, ok := cypherScores(q, GraphFromSchema(s))
	return p, ok
}

// ---- SQL ----

// sqlKeywords are words that are never column names in the SQL checked
// here (keywords, type names, date parts, literals).
var sqlKeywords = setOf(`ABORT ALL AND ANY ARRAY AS ASC ASYMMETRIC AT BETWEEN BIGINT BOOLEAN BOTH BY CASE CAST CHAR
CHARACTER COLLATE CROSS CUBE CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATE DAY DECIMAL DESC DISTINCT
DOUBLE ELSE END ESCAPE EXCEPT EXCLUDE EXISTS EXTRACT FALSE FETCH FILTER FIRST FLOAT FOLLOWING FOR FROM FULL GLOB
GROUP GROUPING GROUPS HAVING HOUR ILIKE IN INNER INT INTEGER INTERSECT INTERVAL IS ISNULL JOIN KEY LAST LATERAL
LEADING LEFT LIKE LIMIT MATCH MATERIALIZED MINUTE MONTH NATURAL NEXT NO NOCASE NOT NOTNULL NULL NULLS NUMERIC OF
OFFSET ON ONLY OR ORDER OTHERS OUTER OVER PARTITION PRECEDING PRECISION QUALIFY RANGE REAL RECURSIVE REGEXP RIGHT
ROLLUP ROW ROWS SECOND SELECT SETS SIMILAR SMALLINT SOME SYMMETRIC TEXT THEN TIES TIME TIMESTAMP TO TOP TRAILING
TRUE UNBOUNDED UNION UNKNOWN USING VALUES VARCHAR WEEK WHEN WHERE WINDOW WITH WITHIN WITHOUT YEAR ZONE RTRIM BINARY
EPOCH DOW DOY QUARTER MILLISECOND MICROSECOND CENTURY DECADE UUID BLOB JSON DIV MOD SEMI ANTI ASOF POSITIONAL
ROWID OID _ROWID_ EXCLUDED STRICT DELETE INSERT UPDATE INTO SET TABLE DROP CREATE ALTER REPLACE RETURNING
DEFAULT CONFLICT DO NOTHING PRAGMA ATTACH DETACH DATABASE VIEW INDEX TRIGGER TRUNCATE COPY EXPLAIN ANALYZE`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// sqlRef is one relation in a FROM clause.
type sqlRef struct {
	name, alias string
	info        *engine.TableInfo // nil: not a schema table (CTE, sub-query, function, unknown)
}

// sqlName returns the identifier a token names: a word or a quoted name
// without its quotes.
func sqlName(t sqltext.Token) (string, bool) {
	switch t.Kind {
	case sqltext.Word:
		return t.Text, true
	case sqltext.Quoted:
		if len(t.Text) >= 2 {
			inner := t.Text[1 : len(t.Text)-1]
			q := string(t.Text[0])
			if q == "[" {
				return inner, true
			}
			return strings.ReplaceAll(inner, q+q, q), true
		}
	}
	return "", false
}

func schemaSQL(q string, s *engine.Schema) Score {
	sig := sqlSig(q)
	up := func(i int) string {
		if i < 0 || i >= len(sig) || sig[i].Kind != sqltext.Word {
			return ""
		}
		return strings.ToUpper(sig[i].Text)
	}
	// Names that are not schema tables or columns: CTE names and their
	// column lists, and every alias (AS x).
	ctes, aliases := map[string]bool{}, map[string]bool{}
	for i := range sig {
		if up(i) == "AS" && i+1 < len(sig) {
			if n, ok := sqlName(sig[i+1]); ok {
				aliases[strings.ToLower(n)] = true
			}
			// WITH name [(cols)] AS ( …: name is a CTE.
			j := i - 1
			if j >= 0 && sig[j].Text == ")" {
				depth := 0
				for ; j >= 0; j-- {
					if sig[j].Text == ")" {
						depth++
					} else if sig[j].Text == "(" {
						depth--
						if depth == 0 {
							break
						}
					} else if depth == 1 {
						if n, ok := sqlName(sig[j]); ok {
							aliases[strings.ToLower(n)] = true
						}
					}
				}
				j--
			}
			if i+1 < len(sig) && (sig[i+1].Text == "(" || up(i+1) == "NOT" || up(i+1) == "MATERIALIZED") && j >= 0 && (up(j-1) == "WITH" || up(j-1) == "RECURSIVE" || j > 0 && sig[j-1].Text == ",") {
				if n, ok := sqlName(sig[j]); ok {
					ctes[strings.ToLower(n)] = true
				}
			}
		}
	}
	// Parenthesis kinds: a '(' followed by SELECT/WITH/VALUES opens a query.
	var refs []sqlRef
	consumed := map[int]bool{}
	var stack []bool // true: query parenthesis
	inFrom := map[int]bool{}
	depth := func() int { return len(stack) }
	queryLevel := func() bool { return len(stack) == 0 || stack[len(stack)-1] }
	for i := 0; i < len(sig); i++ {
		t := sig[i]
		switch {
		case t.Text == "(":
			stack = append(stack, up(i+1) == "SELECT" || up(i+1) == "WITH" || up(i+1) == "VALUES")
			continue
		case t.Text == ")":
			inFrom[depth()] = false
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		u := up(i)
		switch u {
		case "FROM", "JOIN":
			if !queryLevel() {
				continue
			}
			inFrom[depth()] = true
		case "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "SELECT", "ON", "USING", "QUALIFY", "VALUES":
			inFrom[depth()] = false
			continue
		default:
			if !(t.Text == "," && inFrom[depth()]) {
				continue
			}
		}
		// A relation starts at i+1.
		j := i + 1
		if j < len(sig) && sig[j].Text == "(" {
			continue // sub-query or parenthesised join; its alias is an alias
		}
		if up(j) == "LATERAL" || up(j) == "ONLY" {
			j++
		}
		var parts []string
		for j < len(sig) {
			n, ok := sqlName(sig[j])
			if !ok || sig[j].Kind == sqltext.Word && sqlKeywords[strings.ToUpper(n)] {
				break
			}
			parts = append(parts, n)
			consumed[j] = true
			if j+2 < len(sig) && sig[j+1].Text == "." {
				consumed[j+1] = true
				j += 2
				continue
			}
			j++
			break
		}
		if len(parts) == 0 {
			if j < len(sig) && sig[j].Kind == sqltext.String {
				consumed[j] = true
				parts = append(parts, strings.Trim(sig[j].Text, "'"))
				j++
			} else {
				continue
			}
		}
		ref := sqlRef{name: parts[len(parts)-1]}
		isFunc := j < len(sig) && sig[j].Text == "("
		if up(j) == "AS" {
			j++
		}
		if j < len(sig) {
			if n, ok := sqlName(sig[j]); ok && !(sig[j].Kind == sqltext.Word && sqlKeywords[strings.ToUpper(n)]) && !isFunc {
				ref.alias = n
				consumed[j] = true
			}
		}
		if !isFunc && !ctes[strings.ToLower(ref.name)] {
			ref.info, _ = s.Table(ref.name)
			if ref.info == nil {
				ref.name = "?" + ref.name // unknown table, reported below
			}
		} else {
			ref.name = ""
		}
		refs = append(refs, ref)
	}

	var reasons []string
	tables := part{}
	seenT := map[string]bool{}
	opaque := false // a relation whose columns are unknown
	for _, r := range refs {
		switch {
		case r.name == "":
			opaque = true
		case strings.HasPrefix(r.name, "?"):
			n := r.name[1:]
			if !seenT[strings.ToLower(n)] {
				seenT[strings.ToLower(n)] = true
				tables.n++
				reasons = append(reasons, fmt.Sprintf("table %s does not exist", n))
			}
			opaque = true
		default:
			if !seenT[strings.ToLower(r.info.Name)] {
				seenT[strings.ToLower(r.info.Name)] = true
				tables.n++
				tables.ok++
			}
		}
	}
	// Qualifiers: aliases and table names of the FROM relations.
	qual := map[string]*sqlRef{}
	for i := range refs {
		r := &refs[i]
		if r.alias != "" {
			qual[strings.ToLower(r.alias)] = r
		} else if r.name != "" {
			qual[strings.ToLower(strings.TrimPrefix(r.name, "?"))] = r
		}
	}
	cols := part{}
	seenC := map[string]bool{}
	col := func(key string, ok bool, reason string) {
		if seenC[key] {
			return
		}
		seenC[key] = true
		cols.n++
		if ok {
			cols.ok++
		} else {
			reasons = append(reasons, reason)
		}
	}
	for i := 0; i < len(sig); i++ {
		t := sig[i]
		n, isName := sqlName(t)
		if !isName || consumed[i] {
			continue
		}
		if t.Kind == sqltext.Word && sqlKeywords[strings.ToUpper(n)] {
			continue
		}
		if i > 0 && (up(i-1) == "AS") {
			continue
		}
		if i+1 < len(sig) && sig[i+1].Text == "(" {
			continue // function call
		}
		if i+2 < len(sig) && sig[i+1].Text == "." {
			// qualifier.column (or schema.table.column: use the last two)
			if i+4 < len(sig) && sig[i+3].Text == "." {
				continue
			}
			c, ok := sqlName(sig[i+2])
			i += 2
			if !ok || sig[i].Text == "*" {
				continue
			}
			r, found := qual[strings.ToLower(n)]
			switch {
			case !found:
				if ctes[strings.ToLower(n)] {
					continue
				}
				col(strings.ToLower(n+"."+c), false, fmt.Sprintf("%s.%s: no table or alias named %s in FROM", n, c, n))
			case r.info == nil:
				// CTE, sub-query or unknown table: not checked
			default:
				_, ok := columnOf(r.info, c)
				col(strings.ToLower(r.info.Name+"."+c), ok, fmt.Sprintf("column %s does not exist in table %s", c, r.info.Name))
			}
			continue
		}
		if i > 0 && sig[i-1].Text == "." {
			continue
		}
		ln := strings.ToLower(n)
		if aliases[ln] || ctes[ln] || qual[ln] != nil {
			continue
		}
		if t.Kind == sqltext.Quoted && t.Text[0] == '"' && !anyHas(refs, n) {
			continue // SQLite reads an unknown "name" as a string
		}
		if anyHas(refs, n) {
			col(ln, true, "")
			continue
		}
		if opaque || len(refs) == 0 {
			continue
		}
		var names []string
		for _, r := range refs {
			names = append(names, r.info.Name)
		}
		col(ln, false, fmt.Sprintf("column %s does not exist in %s", n, strings.Join(names, ", ")))
	}
	v, n := meanOf(tables, cols)
	return Score{Value: v, Checked: n, Reasons: reasons}
}

func columnOf(t *engine.TableInfo, name string) (*engine.ColumnInfo, bool) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

func anyHas(refs []sqlRef, col string) bool {
	for _, r := range refs {
		if r.info != nil {
			if _, ok := columnOf(r.info, col); ok {
				return true
			}
		}
	}
	return false
}

// sortedSet returns the keys of m in order.
func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
