#!/usr/bin/python3
"""Writes sqlparse_cases.jsonl: inputs and test-suite's remove_distinct of
them, as sqlparse 0.4.2 computes it (Debian bookworm's python3-sqlparse, the
version test-suite's verdicts in ../shared/data were taken with). The
inputs are random strings over SQL fragments chosen to reach every rule of
sqlparse's lexer and statement splitter that decides where a token or the
first statement ends. TestStripDistinctMatchesSqlparse reads the file.

    apt-get install python3-sqlparse
    /usr/bin/python3 sqltext/testdata/sqlparse_cases.py > sqltext/testdata/sqlparse_cases.jsonl
"""
import json
import random
import sys

import sqlparse

assert sqlparse.__version__ == "0.4.2", sqlparse.__version__

ATOMS = ["'", '"', '`', '´', '\\', ';', 'a', ' ', 'DISTINCT', 'distinct',
         'DiStInCt', 'select', '(', ')', '--', '--+', '/*', '/*+', '*/', '#',
         '# ', '##', '@', '\n', '\r', '\r\n', 'x.', '.', 'END', 'END IF',
         'end  if', 'END LOOP', 'END WHILE', "''", '""', 'ſ', 'é', 'ж', 'ı',
         'İ', '\u212a', '[', ']', '1', '0x1f', '12', '1e5', '1.5', '.5', 'e',
         '-', '$', '$$', '$t$', '%s', '%(x)s', '%', ':x', ':', '::', ':=', '?',
         '\\cmd', 'NOT', 'IN', 'NOT IN', 'CASE', 'CREATE', 'create or replace',
         'BEGIN', 'DECLARE', 'IF', 'FOR', 'WHILE', 'AT TIME ZONE', "WITH'",
         'TIME', 'ZONE', 'LEFT JOIN', 'JOIN', 'GROUP BY', '\x85', '\x1c',
         '\u00a0', '\t', '\u2028', '٣', '_', '<=', '!', '^', '|', '&', '{',
         ',', 'K', '$aσ$', '$aς$', '$AΣ$', '$aµ$', '$aμ$', '$İ$', '$i$', '$I$',
         '$\u212a$', '$k$', '$aß$', '$a\u1e9e$', '\U00031350', '\U00011f50',
         'µ', 'ς']


def remove_distinct(s):
    # test-suite-sql-eval's process_sql.py / exec_eval.py
    toks = [t.value for t in sqlparse.parse(s)[0].flatten()]
    return ''.join([t for t in toks if t.lower() != 'distinct'])


def main():
    rng = random.Random(14)
    seen = set()
    n = 0
    while n < 2000:
        s = ''.join(rng.choice(ATOMS) for _ in range(rng.randint(1, 14)))
        if s in seen or not sqlparse.parse(s):
            continue  # parse(s)[0] fails: test-suite would crash
        seen.add(s)
        want = remove_distinct(s)
        if want == s and ';' not in s:
            continue  # nothing dropped, nothing cut: the fast path's case
        sys.stdout.write(json.dumps({"in": s, "want": want}) + "\n")
        n += 1


main()
