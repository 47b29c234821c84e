package check

import (
	"fmt"
	"strings"
	"sync"

	"github.com/evalflow/evalflow/sqltext"
)

// Languages the checks understand.
const (
	SQL    = "sql"
	Cypher = "cypher"
	SPARQL = "sparql"
)

// Safe reports whether query, in lang (SQL, Cypher or SPARQL), is a single
// read-only query that touches nothing outside the database, and when it is
// not, a reason a person can act on. It rejects writes, DDL, administration
// commands and procedures, several statements, and file and network access
// (LOAD CSV, COPY, ATTACH, SERVICE, APOC load/import/export, file-reading
// table functions); docs/validation.md lists every rule. Keywords inside
// string literals, comments and quoted identifiers do not count, but where
// engines lex a query differently every reading is checked, so recall on
// unsafe queries comes before the false-positive rate. An unknown language
// is unsafe.
//
// It is a lexical check that stops accidents and common injection tricks
// before a query reaches the engine; engines must still open databases
// read-only.
func Safe(lang, query string) (ok bool, reason string) {
	q := normalize(query)
	switch strings.ToLower(lang) {
	case SQL:
		return safeSQL(q)
	case Cypher:
		for _, bs := range []bool{true, false} {
			if ok, reason := safeCypher(sigToks(lexCypher(q, bs))); !ok {
				return false, reason
			}
		}
		return true, ""
	case SPARQL:
		return safeSPARQLReadings(q)
	case Pandas:
		return safePandas(query)
	}
	return false, fmt.Sprintf("unknown query language %q (want sql, cypher, sparql or pandas)", lang)
}

// ---- SQL ----

// sqlReadings are the texts the SQL check reads: the query as SQLite lexes
// it, then rewritten so that SQLite's lexer sees what MySQL (backslash
// escapes, # comments, [ is not a quote) and PostgreSQL and DuckDB ([ is a
// subscript or list, not a quote; E'…' backslash escapes, $$ dollar
// quoting) would see.
func sqlReadings(q string) []string {
	out := []string{q}
	if strings.Contains(q, `\`) || strings.Contains(q, "#") {
		bs := strings.NewReplacer(`\\`, "__", `\'`, "''", `\"`, `""`).Replace(q)
		out = append(out, bs, stripHashComments(unbracket(bs)))
	}
	// Without [ or $ the PostgreSQL/DuckDB reading is the text itself.
	if strings.ContainsAny(q, "[$") {
		if pg := replaceDollarQuotes(unbracket(q)); pg != q {
			out = append(out, pg)
		}
	}
	return out
}

// unbracket blanks every '[', so that a [ … ] SQLite quoted name is read as
// the engines without that quoting read it: SELECT a[1;DROP TABLE t;--] is
// a subscript and two more statements to PostgreSQL and DuckDB.
func unbracket(s string) string { return strings.ReplaceAll(s, "[", " ") }

// stripHashComments cuts every # … end of line outside string literals,
// quoted names and -- or /* */ comments (MySQL's # comment).
func stripHashComments(s string) string {
	var b strings.Builder
	for {
		cut := -1
		for _, t := range sqltext.Lex(s) {
			if t.Kind == sqltext.String || t.Kind == sqltext.Quoted || t.Kind == sqltext.Comment {
				continue
			}
			if k := strings.IndexByte(t.Text, '#'); k >= 0 {
				cut = t.Pos + k
				break
			}
		}
		if cut < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:cut])
		j := strings.IndexByte(s[cut:], '\n')
		if j < 0 {
			return b.String()
		}
		s = s[cut+j:]
	}
}

// replaceDollarQuotes turns PostgreSQL $tag$…$tag$ strings into empty '…' strings, as
// PostgreSQL reads them: not inside '…' strings (E'…' with backslash
// escapes), "…" names or comments, and not after an identifier character
// (a$b$ is a name).
func replaceDollarQuotes(s string) string {
	var b strings.Builder
	identByte := func(c byte) bool {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			esc := c == '\'' && i > 0 && (s[i-1] == 'E' || s[i-1] == 'e') && (i < 2 || !identByte(s[i-2]))
			j := i + 1
			for j < len(s) {
				if esc && s[j] == '\\' {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			i = j
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			end := len(s)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(s[i:end])
			i = end
		case c == '$' && (i == 0 || !identByte(s[i-1])):
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 0x80 || j > i+1 && s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j >= len(s) || s[j] != '$' {
				b.WriteString(s[i:j])
				i = j
				continue
			}
			tag := s[i : j+1]
			k := strings.Index(s[j+1:], tag)
			if k < 0 {
				b.WriteString(s[i:])
				i = len(s)
				continue
			}
			b.WriteString("''")
			i = j + 1 + k + len(tag)
		default:
			j := i + 1
			for j < len(s) && s[j] != '\'' && s[j] != '"' && s[j] != '$' && s[j] != '-' && s[j] != '/' {
				j++
			}
			b.WriteString(s[i:j])
			i = j
		}
	}
	return b.String()
}

func safeSQL(q string) (bool, string) {
	buf := sqlBufs.Get().(*sqlBuf)
	defer buf.put()
	for _, r := range sqlReadings(q) {
		// Lexed once per reading: sqlExtra reads the significant tokens as
		// written, sqltext's read-only check the same tokens with writer
		// keywords used as function names masked.
		buf.toks = sqltext.AppendTokens(buf.toks[:0], r)
		buf.sig = buf.sig[:0]
		for _, t := range buf.toks {
			if t.Significant() {
				buf.sig = append(buf.sig, t)
			}
		}
		maskFunctionCalls(buf.toks)
		if ok, reason := sqltext.ReadOnlyTokens(buf.toks); !ok {
			return false, reason
		}
		if ok, reason := sqlExtra(buf.sig); !ok {
			return false, reason
		}
	}
	return true, ""
}

// sqlBuf is safeSQL's scratch space, reused through sqlBufs.
type sqlBuf struct{ toks, sig []sqltext.Token }

var sqlBufs = sync.Pool{New: func() any { return &sqlBuf{} }}

// put returns b to sqlBufs without the texts its tokens point into (a
// huge buffer is left to the collector).
func (b *sqlBuf) put() {
	if cap(b.toks) > 1<<16 {
		return
	}
	clear(b.toks)
	clear(b.sig)
	b.toks, b.sig = b.toks[:0], b.sig[:0]
	sqlBufs.Put(b)
}

// sqlWriters are sqltext.ReadOnly's data-modifying keywords.
var sqlWriters = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "MERGE": true, "UPSERT": true}

// maskFunctionCalls renames, in toks (a text's tokens), a writer keyword
// used as a function name (SELECT (replace(a, 'x', 'y'))), which
// sqltext.ReadOnly would read as a data-modifying sub-statement; a
// statement keyword is never directly followed by '('. The renamed word
// (fn_replace) is one word token, as lexing the renamed text gives.
func maskFunctionCalls(toks []sqltext.Token) {
	for i, t := range toks {
		if t.Kind == sqltext.Word && foldHas(sqlWriters, t.Text, true) && nextSignificant(toks[i+1:]).Text == "(" {
			toks[i].Text = "fn_" + t.Text
		}
	}
}

// nextSignificant returns the first token of toks that is neither space
// nor comment (REPLACE /* c */ (a, 'x', 'y') is a call too).
func nextSignificant(toks []sqltext.Token) sqltext.Token {
	for _, t := range toks {
		if t.Significant() {
			return t
		}
	}
	return sqltext.Token{}
}

func sqlSig(q string) []sqltext.Token {
	toks := sqltext.Lex(q)
	out := toks[:0]
	for _, t := range toks {
		if t.Significant() {
			out = append(out, t)
		}
	}
	return out
}

// foldLookup is m[strings.ToUpper(w)] (upper) or m[strings.ToLower(w)].
func foldLookup(m map[string]string, w string, upper bool) (string, bool) {
	var buf [24]byte
	if len(w) <= len(buf) {
		n := 0
		for ; n < len(w) && w[n] < 0x80; n++ {
			c := w[n]
			if upper && 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			} else if !upper && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
		}
		if n == len(w) {
			v, ok := m[string(buf[:n])]
			return v, ok
		}
	}
	if upper {
		v, ok := m[strings.ToUpper(w)]
		return v, ok
	}
	v, ok := m[strings.ToLower(w)]
	return v, ok
}

// foldHas is m[strings.ToUpper(w)] (upper) or m[strings.ToLower(w)],
// without allocating for a short ASCII word.
func foldHas(m map[string]bool, w string, upper bool) bool {
	var buf [24]byte
	if len(w) <= len(buf) {
		n := 0
		for ; n < len(w) && w[n] < 0x80; n++ {
			c := w[n]
			if upper && 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			} else if !upper && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
		}
		if n == len(w) {
			return m[string(buf[:n])]
		}
	}
	if upper {
		return m[strings.ToUpper(w)]
	}
	return m[strings.ToLower(w)]
}

// upperIs is strings.ToUpper(w) == up (up upper-case ASCII), without
// allocating for an ASCII word.
func upperIs(w, up string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			return strings.ToUpper(w) == up
		}
	}
	return len(w) == len(up) && strings.EqualFold(w, up)
}

// sqlDangerousFuncs are functions that write, reach files or the network,
// run dynamic SQL or administer the server, by engine.
var sqlDangerousFuncs = map[string]string{
	// SQLite
	"load_extension": "loads a native extension", "readfile": "reads a file", "writefile": "writes a file",
	"edit": "starts an editor", "fts3_tokenizer": "registers native code",
	// MySQL
	"load_file": "reads a file", "sys_exec": "runs a shell command", "sys_eval": "runs a shell command",
	// PostgreSQL
	"pg_read_file": "reads a server file", "pg_read_binary_file": "reads a server file",
	"pg_ls_dir": "lists a server directory", "pg_stat_file": "reads server file metadata",
	"pg_file_write": "writes a server file", "lo_import": "reads a server file", "lo_export": "writes a server file",
	"lo_unlink": "deletes a large object", "lo_create": "creates a large object", "lo_put": "writes a large object",
	"lo_from_bytea": "creates a large object",
	"dblink":        "connects to another database", "dblink_exec": "runs SQL on another database",
	"dblink_connect": "connects to another database", "query_to_xml": "runs dynamic SQL",
	"query_to_xml_and_xmlschema": "runs dynamic SQL", "query_to_xmlschema": "runs dynamic SQL",
	"cursor_to_xml": "reads a cursor", "pg_terminate_backend": "kills a session", "pg_cancel_backend": "cancels a session",
	"pg_reload_conf": "reloads server configuration", "pg_rotate_logfile": "rotates server logs", "pg_promote": "promotes a standby",
	"set_config": "changes a setting", "nextval": "advances a sequence", "setval": "sets a sequence",
	// SQL Server
	"xp_cmdshell": "runs a shell command", "openrowset": "reads external data", "opendatasource": "reads external data",
	"openquery": "runs a remote query",
	// DuckDB
	"read_csv": "reads a file", "read_csv_auto": "reads a file", "read_parquet": "reads a file", "parquet_scan": "reads a file",
	"read_json": "reads a file", "read_json_auto": "reads a file", "read_json_objects": "reads a file",
	"read_ndjson": "reads a file", "read_ndjson_auto": "reads a file", "read_ndjson_objects": "reads a file",
	"read_text": "reads a file", "read_blob": "reads a file", "sniff_csv": "reads a file",
	"parquet_metadata": "reads a file", "parquet_schema": "reads a file", "delta_scan": "reads external data",
	"iceberg_scan": "reads external data", "sqlite_scan": "reads another database", "sqlite_attach": "attaches a database",
	"postgres_scan": "reads another database", "postgres_attach": "attaches a database", "postgres_query": "runs a remote query",
	"postgres_execute": "runs remote SQL", "mysql_scan": "reads another database", "mysql_query": "runs a remote query",
	"getenv": "reads the environment", "duckdb_secrets": "reads credentials",
}

// sqlSecretTables hold credentials or server configuration.
var sqlSecretTables = map[string]bool{
	"pg_shadow": true, "pg_authid": true, "pg_hba_file_rules": true, "pg_file_settings": true, "pg_user_mappings": true,
}

// sqlParenStatements are statement keywords that, right after '(', start a
// sub-statement no read-only query contains.
var sqlParenStatements = map[string]bool{
	"DROP": true, "CREATE": true, "ALTER": true, "TRUNCATE": true, "GRANT": true, "REVOKE": true, "COPY": true,
	"ATTACH": true, "DETACH": true, "PRAGMA": true, "VACUUM": true, "CALL": true, "EXEC": true, "EXECUTE": true,
	"INSTALL": true, "LOAD": true, "SET": true,
}

// sqlExtra are the rules beyond sqltext.ReadOnly: dangerous functions,
// INTO OUTFILE/DUMPFILE or INTO at any depth, row locks, ATTACH/PRAGMA
// anywhere, statements inside parentheses, and DuckDB's replacement scans
// of a file or URL (FROM 'data/x.csv').
func sqlExtra(sig []sqltext.Token) (bool, string) {
	for i, t := range sig {
		next := func(k int) sqltext.Token {
			if i+k < len(sig) {
				return sig[i+k]
			}
			return sqltext.Token{}
		}
		word := t.Kind == sqltext.Word
		switch {
		case word && next(1).Text == "(" && !(i > 0 && sig[i-1].Text == "."):
			if why, bad := foldLookup(sqlDangerousFuncs, t.Text, false); bad {
				return false, fmt.Sprintf("%s() %s; not allowed in a read-only query", strings.ToLower(t.Text), why)
			}
			if strings.EqualFold(t.Text, "glob") && singleArg(sig[i+1:]) {
				return false, "glob() lists files; not allowed in a read-only query"
			}
		case word && upperIs(t.Text, "INTO"):
			if n := strings.ToUpper(next(1).Text); n == "OUTFILE" || n == "DUMPFILE" {
				return false, "SELECT … INTO " + n + " writes a file"
			}
			return false, "SELECT … INTO writes a table or variables; only read-only queries are allowed"
		case word && upperIs(t.Text, "FOR"):
			n1, n2 := strings.ToUpper(next(1).Text), strings.ToUpper(next(2).Text)
			if n1 == "UPDATE" || n1 == "SHARE" || n1 == "NO" && n2 == "KEY" || n1 == "KEY" && n2 == "SHARE" {
				return false, "FOR UPDATE/SHARE locks rows; only read-only queries are allowed"
			}
		case word && (upperIs(t.Text, "ATTACH") || upperIs(t.Text, "DETACH") || upperIs(t.Text, "PRAGMA")) && !(i > 0 && sig[i-1].Text == "."):
			return false, strings.ToUpper(t.Text) + " changes the connection; not allowed"
		case word && foldHas(sqlSecretTables, t.Text, false):
			return false, fmt.Sprintf("%s holds credentials or server configuration; not allowed", strings.ToLower(t.Text))
		case t.IsWord("mysql") && next(1).Text == "." && next(2).IsWord("user"):
			return false, "mysql.user holds credentials; not allowed"
		case t.Kind == sqltext.Punct && t.Text == "(" && next(1).Kind == sqltext.Word && foldHas(sqlParenStatements, next(1).Text, true) && next(2).Text != "(":
			return false, fmt.Sprintf("%s inside parentheses is not a read-only query", strings.ToUpper(next(1).Text))
		case t.Kind == sqltext.String && inFromPosition(sig, i) && looksLikePath(t.Text):
			return false, fmt.Sprintf("FROM %s reads a file or URL; not allowed", t.Text)
		case t.Kind == sqltext.Quoted && !strings.HasPrefix(t.Text, "[") && inFromPosition(sig, i) && looksLikeFileName(t.Text[1:max(len(t.Text)-1, 1)]):
			return false, fmt.Sprintf("FROM %s reads a file or URL (a DuckDB replacement scan); not allowed", t.Text)
		}
	}
	return true, ""
}

// singleArg reports whether the parenthesised list that starts at toks[0]
// = '(' has exactly one argument.
func singleArg(toks []sqltext.Token) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case t.Text == "(":
			depth++
		case t.Text == ")":
			depth--
			if depth == 0 {
				return true
			}
		case t.Text == "," && depth == 1:
			return false
		}
	}
	return true
}

// inFromList reports whether the last FROM before the end of toks, at the
// same parenthesis depth, has not been closed by another clause.
func inFromList(toks []sqltext.Token) bool {
	depth := 0
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i]
		switch {
		case t.Text == ")":
			depth++
		case t.Text == "(":
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && t.Kind == sqltext.Word:
			switch strings.ToUpper(t.Text) {
			case "FROM", "JOIN":
				return true
			case "SELECT", "WHERE", "GROUP", "ORDER", "HAVING", "ON", "LIMIT", "VALUES", "SET":
				return false
			}
		}
	}
	return false
}

// inFromPosition reports whether sig[i] is a table reference of a FROM or
// JOIN list.
func inFromPosition(sig []sqltext.Token, i int) bool {
	return i > 0 && (sig[i-1].IsWord("FROM") || sig[i-1].IsWord("JOIN") || sig[i-1].Text == "," && inFromList(sig[:i]))
}

// fileExtensions are the suffixes of files DuckDB's replacement scans read.
var fileExtensions = []string{".csv", ".tsv", ".parquet", ".json", ".jsonl", ".ndjson", ".txt", ".gz", ".zst",
	".xlsx", ".arrow", ".avro", ".orc", ".db", ".sqlite", ".duckdb"}

// looksLikeFileName reports whether a quoted table name names a file, glob
// or URL: FROM "data/x.csv" or FROM "x.parquet" is a replacement scan in
// DuckDB, FROM "Order Items" is a table.
func looksLikeFileName(name string) bool {
	if strings.ContainsAny(name, "/\\*") {
		return true
	}
	lower := strings.ToLower(name)
	for _, ext := range fileExtensions {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// looksLikePath reports whether a '…' literal names a file, glob or URL.
func looksLikePath(lit string) bool {
	return strings.ContainsAny(lit, "/\\*:") || strings.Contains(lit, ".")
}

// ---- Cypher ----

// cypherWriteClauses are clause keywords that write or administer.
var cypherWriteClauses = map[string]string{
	"CREATE": "writes", "MERGE": "writes", "DELETE": "deletes", "DETACH": "deletes", "SET": "writes",
	"REMOVE": "writes", "DROP": "drops schema or data", "FOREACH": "runs updating clauses",
	"LOAD": "reads a file or URL (LOAD CSV)", "PERIODIC": "commits writes (USING PERIODIC COMMIT)",
	"ALTER": "administers the server",
	"GRANT": "administers privileges", "REVOKE": "administers privileges", "DENY": "administers privileges",
	"SHOW": "is an administration command", "TERMINATE": "administers transactions", "START": "administers databases",
	"STOP": "administers databases", "USE": "switches the database", "RENAME": "administers the server",
	"ENABLE": "administers the server", "DEALLOCATE": "administers the server", "REALLOCATE": "administers the server",
}

// cypherAdminClauses are the administration keywords of
// cypherWriteClauses, each followed by a name in a command (START DATABASE
// x, SHOW INDEXES, USE movies, TERMINATE TRANSACTIONS 'id'). Unlike
// CREATE (n) or SET n.x = 1, such a word followed by punctuation or by a
// clause keyword is a variable, as start and stop are in path queries.
var cypherAdminClauses = map[string]bool{
	"SHOW": true, "TERMINATE": true, "START": true, "STOP": true, "USE": true, "RENAME": true, "ENABLE": true,
	"ALTER": true, "GRANT": true, "REVOKE": true, "DENY": true, "DEALLOCATE": true, "REALLOCATE": true,
}

// cypherAfterVariable are words that follow a variable, never an
// administration keyword.
var cypherAfterVariable = map[string]bool{
	"AS": true, "ORDER": true, "LIMIT": true, "SKIP": true, "OFFSET": true, "WHERE": true, "IS": true, "IN": true,
	"AND": true, "OR": true, "XOR": true, "STARTS": true, "ENDS": true, "CONTAINS": true, "ASC": true, "DESC": true,
	"ASCENDING": true, "DESCENDING": true, "RETURN": true, "WITH": true, "MATCH": true, "OPTIONAL": true,
	"UNION": true, "UNWIND": true,
}

// cypherVariableAt reports whether the administration keyword at sig[i] is
// used as a variable: it ends the query, or punctuation follows it
// ((start:Station), start.name, RETURN start, stop), or a word that only
// follows an expression (RETURN start ORDER BY …, WHERE stop IS NULL).
func cypherVariableAt(sig []tok, i int) bool {
	if i+1 >= len(sig) {
		return true
	}
	n := sig[i+1]
	switch n.Kind {
	case tPunct:
		return true
	case tWord:
		return cypherAfterVariable[strings.ToUpper(n.Text)]
	}
	return false
}

// cypherReadProcedures are the procedures a CALL may name; any other is
// unsafe (a procedure's mode is not visible in the query text). Entries
// ending in '.' are prefixes.
var cypherReadProcedures = []string{
	"db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization", "db.schema.nodetypeproperties",
	"db.schema.reltypeproperties", "db.indexes", "db.constraints", "db.index.fulltext.querynodes",
	"db.index.fulltext.queryrelationships", "db.index.vector.querynodes", "db.index.vector.queryrelationships",
	"db.idx.fulltext.querynodes", "db.idx.vector.querynodes", "db.idx.vector.queryrelationships", "db.meta.stats",
	"db.info", "db.ping",
	"apoc.meta.", "apoc.path.", "apoc.neighbors.", "apoc.help", "apoc.algo.", "apoc.coll.", "apoc.text.",
	"apoc.map.", "apoc.convert.", "apoc.date.", "apoc.label.exists", "apoc.nodes.get", "apoc.spatial.sortbydistance",
	"algo.pagerank", "algo.bfs", "algo.spath", "algo.sspath", "algo.wcc", "algo.betweenness", "algo.labelpropagation",
	"gds.graph.list", "gds.graph.exists", "gds.version", "gds.list",
}

// cypherDangerousFuncs are function prefixes (used without CALL) that run
// dynamic Cypher, reach files or the network, or administer.
var cypherDangerousFuncs = []string{
	"apoc.cypher.", "apoc.load.", "apoc.import.", "apoc.export.", "apoc.periodic.", "apoc.trigger.", "apoc.bolt.",
	"apoc.systemdb.", "apoc.do.", "apoc.util.sleep", "dbms.", "apoc.static.set", "apoc.custom.",
}

// cypherKeyword reports whether sig[i] is a keyword in keyword position: a
// word, not a property key (.name), label or type (:Name), map key
// ({name: …}) or function name (apoc.create.uuid()).
func cypherKeywordAt(sig []tok, i int) bool {
	t := sig[i]
	if t.Kind != tWord {
		return false
	}
	if i > 0 && (sig[i-1].p(".") || sig[i-1].p(":") || sig[i-1].p("$")) {
		return false
	}
	if i+1 < len(sig) && sig[i+1].p(":") && i > 0 && (sig[i-1].p("{") || sig[i-1].p(",")) {
		return false
	}
	if i+1 < len(sig) && sig[i+1].p(".") {
		return false
	}
	return true
}

func safeCypher(sig []tok) (bool, string) {
	if len(sig) == 0 {
		return false, "the query is empty"
	}
	if sig[0].p(":") {
		return false, "client commands (:begin, :param, :use, …) are not queries"
	}
	for i, t := range sig {
		if t.p(";") {
			if i+1 < len(sig) {
				return false, "multiple statements are not allowed"
			}
			continue
		}
		if !cypherKeywordAt(sig, i) {
			continue
		}
		up := strings.ToUpper(t.Text)
		if up == "CALL" {
			if i+1 < len(sig) && (sig[i+1].p("{") || sig[i+1].p("(")) {
				continue // CALL { … } subquery; its clauses are checked in place
			}
			name, _ := dottedName(sig[i+1:])
			if name == "" {
				return false, "CALL without a procedure name"
			}
			if !readProcedure(name) {
				return false, fmt.Sprintf("CALL %s: only known read-only procedures are allowed", name)
			}
			continue
		}
		if i > 0 && sig[i-1].is("AS") {
			continue // an alias: RETURN count(f) AS transactions
		}
		if up == "TRANSACTIONS" && inTransactions(sig[:i]) {
			return false, "CALL { … } IN TRANSACTIONS commits in batches; only read-only queries are allowed"
		}
		if cypherAdminClauses[up] && cypherVariableAt(sig, i) {
			continue // MATCH (start:Station)-[*]->(stop:Station) RETURN start, stop
		}
		if why, bad := cypherWriteClauses[up]; bad {
			return false, fmt.Sprintf("%s %s; only read-only queries are allowed", up, why)
		}
	}
	// Functions called without CALL (`apoc`.load.json(…) and
	// `apoc.load.json`(…) too).
	for i := 0; i < len(sig); i++ {
		if _, ok := ident(sig[i]); !ok || i > 0 && sig[i-1].p(".") {
			continue
		}
		name, n := dottedName(sig[i:])
		if strings.Contains(name, ".") && i+n < len(sig) && sig[i+n].p("(") {
			for _, p := range cypherDangerousFuncs {
				if strings.HasPrefix(name, p) || name+"." == p {
					return false, fmt.Sprintf("%s() runs dynamic Cypher, reaches files or the network, or administers; not allowed", name)
				}
			}
		}
	}
	return true, ""
}

// inTransactions reports whether the tokens before TRANSACTIONS end in IN,
// IN n, IN CONCURRENT or IN n CONCURRENT.
func inTransactions(before []tok) bool {
	for k := 1; k <= 3 && k <= len(before); k++ {
		t := before[len(before)-k]
		if t.is("IN") {
			return true
		}
		if !(t.is("CONCURRENT") || t.Kind == tNumber || t.Kind == tParam) {
			return false
		}
	}
	return false
}

// dottedName reads a procedure or function name a.b.c (parts may be
// `quoted`) at the start of toks; it returns the lower-cased name and the
// number of tokens it spans.
func dottedName(toks []tok) (string, int) {
	var parts []string
	n := 0
	for n < len(toks) {
		id, ok := ident(toks[n])
		if !ok {
			break
		}
		parts = append(parts, strings.ToLower(id))
		n++
		if n+1 < len(toks) && toks[n].p(".") {
			n++
			continue
		}
		break
	}
	return strings.Join(parts, "."), n
}

func readProcedure(name string) bool {
	for _, p := range cypherReadProcedures {
		if name == p || strings.HasSuffix(p, ".") && strings.HasPrefix(name, p) {
			return true
		}
	}
	if strings.HasPrefix(name, "gds.") {
		last := name[strings.LastIndexByte(name, '.')+1:]
		return last == "stream" || last == "stats" || last == "estimate"
	}
	return false
}

// ---- SPARQL ----

// sparqlUpdate are the keywords of SPARQL 1.1 Update.
var sparqlUpdate = map[string]bool{
	"INSERT": true, "DELETE": true, "LOAD": true, "CLEAR": true, "CREATE": true, "DROP": true,
	"COPY": true, "MOVE": true, "ADD": true, "WITH": true, "USING": true,
}

var sparqlForms = map[string]bool{"SELECT": true, "ASK": true, "CONSTRUCT": true, "DESCRIBE": true}

// safeSPARQLReadings checks q under both readings of '<' (lexSPARQLReading).
func safeSPARQLReadings(q string) (bool, string) {
	for _, lessThan := range []bool{false, true} {
		if ok, reason := safeSPARQL(sigToks(lexSPARQLReading(q, lessThan))); !ok {
			return false, reason
		}
	}
	return true, ""
}

func safeSPARQL(sig []tok) (bool, string) {
	braces, parens, forms := 0, 0, 0
	prefixes := map[string]string{} // "ex:" → IRI text without <>
	base := ""
	for i, t := range sig {
		switch {
		case t.p("{"):
			braces++
		case t.p("}"):
			if braces > 0 {
				braces--
			}
		case t.p("("):
			parens++
		case t.p(")"):
			if parens > 0 {
				parens--
			}
		case t.p(";") && braces == 0 && i+1 < len(sig):
			if parens > 0 && groupConcatSeparator(sig[i+1:]) {
				continue // GROUP_CONCAT(?x; SEPARATOR=", ")
			}
			return false, "multiple operations are not allowed"
		case t.Kind == tWord:
			up := strings.ToUpper(t.Text)
			switch {
			case sparqlUpdate[up]:
				return false, fmt.Sprintf("%s is a SPARQL Update operation; only queries are allowed", up)
			case up == "SERVICE":
				return false, "SERVICE sends a federated query to another endpoint; not allowed"
			case up == "PREFIX" && i+2 < len(sig) && sig[i+1].Kind == tPName && sig[i+2].Kind == tIRI:
				prefixes[sig[i+1].Text] = iriText(sig[i+2])
			case up == "BASE" && i+1 < len(sig) && sig[i+1].Kind == tIRI:
				base = resolveIRI(base, iriText(sig[i+1]))
			case up == "FROM":
				j := i + 1
				if j < len(sig) && sig[j].is("NAMED") {
					j++
				}
				if j < len(sig) {
					if ok, reason := sparqlFromTarget(sig[j], base, prefixes); !ok {
						return false, reason
					}
				}
			case sparqlForms[up] && braces == 0:
				forms++
				if forms > 1 {
					return false, "multiple queries are not allowed"
				}
			}
		}
	}
	if forms == 0 {
		return false, "no SELECT, ASK, CONSTRUCT or DESCRIBE query form"
	}
	return true, ""
}

// groupConcatSeparator reports whether toks, which follow a ';', are
// GROUP_CONCAT's "SEPARATOR = 'string'" (any case, any spacing).
func groupConcatSeparator(toks []tok) bool {
	return len(toks) >= 3 && toks[0].is("SEPARATOR") && toks[1].p("=") && toks[2].Kind == tString
}

// iriText is the text of an <IRI> token without its brackets.
func iriText(t tok) string {
	return strings.TrimSuffix(strings.TrimPrefix(t.Text, "<"), ">")
}

// hasScheme reports whether iri starts with a scheme (RFC 3986: a letter,
// then letters, digits, '+', '-' or '.', then ':').
func hasScheme(iri string) bool {
	for k := 0; k < len(iri); k++ {
		c := iri[k]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case k > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case k > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// resolveIRI resolves iri against base as far as the scheme goes: an
// absolute iri is itself; a relative one takes base's scheme (base + iri is
// enough to tell a file: IRI from an http: one).
func resolveIRI(base, iri string) string {
	if hasScheme(iri) || base == "" {
		return iri
	}
	return base + iri
}

// sparqlFromTarget checks the graph a FROM or FROM NAMED clause names: a
// file: IRI (directly, through BASE or through a PREFIX) reads a local
// file, and so does a relative IRI with no BASE, which Jena resolves
// against its working directory.
func sparqlFromTarget(t tok, base string, prefixes map[string]string) (bool, string) {
	var iri string
	switch t.Kind {
	case tIRI:
		iri = resolveIRI(base, iriText(t))
	case tPName:
		k := strings.IndexByte(t.Text, ':')
		ns, ok := prefixes[t.Text[:k+1]]
		if !ok {
			return true, "" // an undeclared prefix does not parse
		}
		iri = resolveIRI(base, ns+t.Text[k+1:])
	default:
		return true, ""
	}
	switch {
	case strings.HasPrefix(strings.ToLower(iri), "file:"):
		return false, fmt.Sprintf("FROM %s reads a local file (file:…); not allowed", t.Text)
	case !hasScheme(iri):
		return false, fmt.Sprintf("FROM %s is a relative IRI, which an engine may resolve to a local file; not allowed", t.Text)
	}
	return true, ""
}
