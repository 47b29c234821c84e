// Package spider reproduces Spider's exact-set-match evaluation
// (taoyds/spider evaluation.py with process_sql.py, `--etype match`): the
// parser into Spider's SQL dict, the value/DISTINCT/foreign-key
// normalisation, the ten partial-match components, exact match under both
// historical rules, the gold's hardness level, and the printed report.
//
// It is hand-written because no Go library parses SQL into Spider's
// structure, and fidelity is the point: the reference's parser is a small
// recursive descent over NLTK tokens that accepts some invalid SQL, rejects
// some valid SQL (comma joins, `a>=1` without spaces, an alias equal to a
// table name, a non-integer LIMIT, `IN (1,2)`) and ignores trailing tokens.
// A general SQL parser would score those items differently. Every quirk
// below is copied on purpose; changing one changes published numbers.
//
// Tokenising (Tokenize). Single quotes become double quotes; quoted spans
// are kept whole (an apostrophe inside a literal makes the quote count odd
// or re-pairs the quotes); the rest is NLTK 3.8's NLTKWordTokenizer on the
// whole text (word_tokenize with preserve_line=True, the setting the
// reference outputs were produced with), lower-cased; "!", ">", "<" before
// a "=" token are glued. NLTK does not split "=", "-", "+" or "/", and a
// comma before a digit stays inside the token.
//
// Comparison (Normalize, PartialMatch, ExactMatch). With DISABLE_VALUE and
// DISABLE_DISTINCT, as the reference ships: literals in WHERE, HAVING and
// ON become None and DISTINCT flags are cleared; FROM sub-queries keep
// their values and sub-queries used as values keep their DISTINCT flags and
// column ids. JOIN … ON conditions are compared by no component; only
// their or/not/in/like keywords count. A prediction that does not parse is scored as the empty query;
// a gold that does not parse is an error (the reference stops). Where the
// reference raises TypeError or ValueError on odd inputs, the functions
// return an error wrapping ErrReference instead of guessing.
//
// The two rules. RuleCurrent is evaluation.py since commit 8e1c95e
// (2018-10-25): after all components match, the sorted FROM table units
// must be equal when the gold has at least one. Rule2018 is the initial
// commit 62399af: that check runs only when the gold has more than one
// table unit, so a single-table query on the wrong table matches (29 easy
// dev items of the published example, 0.725 vs 0.697). The published
// evaluation_examples/eval_result_example.txt is the Rule2018 output.
//
// Hardness copies eval_hardness including its quirks (see Hardness), and
// the partial table keeps the reference's and/or totals, which are swapped
// (label_total takes the prediction's connector count).
package spider
