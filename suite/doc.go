// Package suite builds distilled test suites of databases for any schema,
// after Zhong, Yu and Klein, "Semantic Evaluation for Text-to-SQL with
// Distilled Test Suites" (EMNLP 2020; taoyds/test-suite-sql-eval), in the
// layout evalflow's testsuite profile reads: OUT/<db>/<db>.sqlite (a copy
// of the original) beside OUT/<db>/<db>_NNN.sqlite.
//
// For each database, Build
//
//  1. reads the schema from the database itself (ReadSQLite, ReadDuckDB):
//     types, primary keys, UNIQUE, NOT NULL, foreign keys;
//  2. makes neighbours of every gold query by mutating its parsed AST
//     (Neighbours): aggregates, comparison, arithmetic and boolean
//     operators, ASC/DESC, LIKE/NOT LIKE, IN/NOT IN, columns of the same
//     kind swapped, constants changed (integers ±1 and random, floats
//     ±epsilon, strings cut and turned into % patterns), subtrees dropped
//     (a WHERE conjunct, DISTINCT, LIMIT, a JOIN condition, HAVING). A
//     neighbour is kept only if it runs on the original, two at a time,
//     within Options.ScreenTimeout (or twenty times its gold's time there):
//     one that runs out, typically a cross product left by a dropped join
//     condition, is dropped as "timeout on the original";
//  3. draws random databases that respect the schema (parents first,
//     foreign keys copied from parent rows, key and UNIQUE tuples never
//     repeated, NOT NULL held), from value pools seeded by the original
//     database and by every constant a gold compares a column with (with
//     its ±1/±epsilon neighbours); columns a gold compares with each other
//     share one pool so joins find partners. Every other draw is focused:
//     it aims at one to six golds that still have unseparated neighbours
//     (those aimed at least so far), whose columns draw from all of those
//     golds' constants and at most two other values, in tables of up to
//     twice MaxRows rows, so the constants, their duplicates and both
//     sides of their boundaries appear;
//  4. checks each drawn database: every gold runs on it, and no gold's row
//     order is left open by ties under ORDER BY (… LIMIT), at the top level
//     or in a sub-query with ORDER BY … LIMIT (ties at its limit decide
//     which rows it gives). On ties, up to six rows of that gold's tables
//     are dropped one at a time and the checks run again;
//  5. distils greedily over a pool: draws come in batches of
//     Samples/MaxDBs; each database that passes is run once on the
//     neighbours not yet separated, and after each batch the pool's
//     database that separates the most of those still open is kept, until
//     all are separated, MaxDBs are kept or the Samples are spent and the
//     pool adds nothing;
//  6. measures: Options.Verify more databases, drawn the same way from a
//     seed stream of their own and never kept, are run on the neighbours
//     left unseparated. Separable neighbours are those the suite separates
//     plus those a pooled database not kept or a verification database
//     separates; the report gives separated/separable as separation_rate
//     and lists every unseparated neighbour with its reason.
//
// "Separates" means the two results differ under the comparison of a
// metrics.Profile (default testsuite_keep_distinct: bag semantics, column
// permutations allowed, row order when the gold says ORDER BY), through
// metrics.CompareTables; queries run on evalflow's own engines.
//
// # Why this parser
//
// Neighbours are made on an AST, printed back to SQL. The parser is
// github.com/pingcap/tidb/pkg/parser (TiDB's, MySQL dialect, maintained,
// a module of its own with a small dependency set), with its lightweight
// test_driver for literals. Candidates were measured on the shared gold
// queries: github.com/rqlite/sql (the SQLite dialect) is refused by the Go
// module proxy here (403 for every version); vitess's parser pulls in all
// of vitess; xwb1989/sqlparser is an unmaintained 2018 copy of it. TiDB's
// parser reads 307/307 distinct GeoQuery golds and 23/23 Restaurants golds,
// and printed back (double-quoted names, single-quoted strings, no charset
// introducers) each gives the gold's result on its SQLite database
// (TestRoundTripShared); it reads 1030 of Spider dev's 1034 golds. Its
// MySQL reading of "text" as a string literal is what SQLite's
// double-quoted-string fallback does for these golds, and the printed
// 'text' is unambiguous on SQLite and DuckDB alike.
//
// # Determinism
//
// All randomness comes from PCG streams seeded by Options.Seed, the
// database name and the sample number, and everything is done in a fixed
// order (the neighbours screened in parallel are read back in order), so
// the same inputs and seed give byte-identical SQLite files and the same
// report apart from its elapsed times (TestOwnSuite). The one exception is
// time itself: a neighbour whose run on the original takes about its
// screen timeout may be kept on one run and dropped on a loaded machine.
// The default screen timeout is Timeout (5 s), far from what neighbours
// take in practice (cross products run for minutes); a short one
// (-screen-timeout 200ms) builds much faster on such databases but makes
// that exception likelier.
package suite
