package check

import "testing"

// TestSafeSQLContexts covers separators and keywords inside string
// literals, quoted identifiers, comments and function arguments under the
// SQLite, MySQL, PostgreSQL and DuckDB readings, each with an unsafe
// variant.
func TestSafeSQLContexts(t *testing.T) {
	runSafetyCases(t, SQL, []safetyCase{
		// String literals.
		{"keyword in string", `SELECT name FROM singer WHERE note = 'DROP TABLE t; DELETE FROM u'`, false},
		{"doubled quote", `SELECT name FROM singer WHERE name = 'O''Brien; DROP TABLE t'`, false},
		{"double-quoted string", `SELECT name FROM singer WHERE name = "x; DELETE FROM t"`, false},
		{"stacked after string", `SELECT name FROM singer WHERE name = 'x'; DROP TABLE t`, true},
		{"backslash quote, stacked in MySQL", `SELECT name FROM singer WHERE name = 'a\'; DROP TABLE t; -- '`, true},
		{"E string, stacked in PostgreSQL", `SELECT E'\''; DROP TABLE t; --'`, true},
		{"backslash at the end of a string", `SELECT name FROM singer WHERE path = 'C:\dir\'`, false},
		{"hash in string", `SELECT name FROM singer WHERE tag = '#1'`, false},
		{"hash in string across lines", "SELECT name FROM singer WHERE tag = '#a'\n  AND note = 'x; y'", false},
		{"hash comment hides nothing", "SELECT name FROM singer # a note\nWHERE x = 1", false},
		// A # comment is MySQL's alone: to SQLite and PostgreSQL the ';'
		// after it separates statements.
		{"hash comment with a separator", "SELECT name FROM singer # DROP TABLE t; DELETE\nWHERE x = 1", true},
		{"hash comment hides a quote", "SELECT name FROM singer # '\n; DROP TABLE t; -- '", true},
		{"dollar in string", `SELECT name FROM singer WHERE price = '$5; $x$' AND code = '$x$'`, false},
		{"dollar in identifier", `SELECT a$b$c FROM t WHERE x = ';' AND y = 1`, false},
		{"dollar quoting, stacked in PostgreSQL", `SELECT $$x$$; DROP TABLE t; SELECT '$$'`, true},
		{"dollar quoting hides a quote", `SELECT $q$'$q$; DROP TABLE t; --'`, true},
		// Quoted identifiers.
		{"keyword in double-quoted name", `SELECT "DELETE", "x;y" FROM "DROP TABLE"`, false},
		{"keyword in backtick name", "SELECT `into`, `for` FROM `update`", false},
		{"keyword in bracket name", `SELECT [delete], [order] FROM [drop table]`, false},
		// [ is not a quote to MySQL, PostgreSQL or DuckDB: a ';' inside
		// [ … ] separates statements there.
		{"separator in bracket name", `SELECT [x;y] FROM t`, true},
		{"write after quoted name", `SELECT "a" FROM t; UPDATE t SET a = 1`, true},
		{"bracket subscript hides a statement", `SELECT arr[1;DROP TABLE t;--] FROM t`, true},
		{"bracket subscript hides a write", "SELECT a[1] FROM t WHERE b = c[2;DELETE FROM t;--]", true},
		{"quoted table name", `SELECT * FROM "Order Items" JOIN "my.table" ON 1 = 1`, false},
		{"duckdb scan of quoted file", `SELECT * FROM "data/secrets.csv"`, true},
		{"duckdb scan of quoted parquet", `SELECT * FROM t, "x.parquet"`, true},
		{"duckdb scan of string path", `SELECT * FROM 'data/x.csv'`, true},
		{"sqlite string table name", `SELECT * FROM 'singer'`, false},
		// Comments.
		{"keyword in line comment", "SELECT name FROM singer -- ; DROP TABLE t\n", false},
		{"keyword in block comment", "SELECT name /* ; DELETE FROM t; */ FROM singer", false},
		{"write after block comment", "SELECT name FROM singer /* x */; DELETE FROM singer", true},
		{"nested block comment", "SELECT 1 /* a /* b */ ; DROP TABLE t; */", true},
		// Function arguments and keyword-named functions.
		{"replace function", `SELECT replace(name, 'a', 'b') FROM singer`, false},
		{"replace function with space", `SELECT (replace (name, 'a', 'b')) FROM singer`, false},
		{"replace function with comment", `SELECT (REPLACE /* r */ (name, 'a', 'b')) FROM singer`, false},
		{"insert string function", `SELECT (INSERT(name, 1, 2, 'x')) FROM singer`, false},
		{"keyword in function string", `SELECT lower('DROP TABLE t') FROM singer WHERE instr(note, ';') > 0`, false},
		{"replace into in parens", `SELECT * FROM (REPLACE INTO t VALUES (1))`, true},
		{"delete in CTE", `WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d`, true},
		{"dangerous function", `SELECT load_extension('x')`, true},
		{"dangerous function with space", `SELECT readfile ('/etc/passwd')`, true},
		{"dangerous function in comment", `SELECT 1 -- readfile('/etc/passwd')`, false},
	})
}
