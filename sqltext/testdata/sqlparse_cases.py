#!/usr/bin/python3
"""Writes sqlparse_cases.jsonl: inputs and test-suite's remove_distinct of
them, as sqlparse 0.4.2 computes it (Debian bookworm's python3-sqlparse, the
version test-suite's verdicts in ../shared/data were taken with). The
inputs are random strings over SQL fragments chosen to reach every rule of
sqlparse's lexer and statement splitter that decides where a token or the
first statement ends. TestStripDistinctMatchesSqlparse reads the file.

    apt-get install python3-sqlparse
    /usr/bin/python3 sqltext/testdata/sqlparse_cases.py > sqltext/testdata/sqlparse_cases.jsonl

With a count, as many cases from another seed; with --shared DIR, every
SQL text of the benchmark data under DIR (its .json and .jsonl fields
named query, gold, pred, sql, ..., and its .sql and .txt lines). Either
file can stand in for the test's (docs/metrics.md):

    /usr/bin/python3 sqltext/testdata/sqlparse_cases.py 200000 > /tmp/c.jsonl
    /usr/bin/python3 sqltext/testdata/sqlparse_cases.py --shared ../shared/data > /tmp/real.jsonl
    SQLPARSE_CASES=/tmp/c.jsonl go test ./sqltext -run StripDistinctMatchesSqlparse
"""
import json
import os
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


def random_cases(n, seed):
    rng = random.Random(seed)
    seen = set()
    while n > 0:
        s = ''.join(rng.choice(ATOMS) for _ in range(rng.randint(1, 14)))
        if s in seen or not sqlparse.parse(s):
            continue  # parse(s)[0] fails: test-suite would crash
        seen.add(s)
        want = remove_distinct(s)
        if want == s and ';' not in s:
            continue  # nothing dropped, nothing cut: the fast path's case
        yield s, want
        n -= 1


SQL_FIELDS = {'query', 'gold', 'pred', 'sql', 'predicted', 'prediction',
              'gold_sql', 'pred_sql', 'sql_query'}


def shared_texts(root):
    texts = set()

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(v, str) and k.lower() in SQL_FIELDS:
                    texts.add(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            if any(x in path for x in ('sparql', 'cypher', 'buildingqa')):
                continue  # not SQL
            if not f.endswith(('.json', '.jsonl', '.sql', '.txt')) or os.path.getsize(path) > 60e6:
                continue
            try:
                data = open(path, encoding='utf-8').read()
                if f.endswith(('.sql', '.txt')):
                    texts.update(l.split('\t')[0] for l in data.split('\n') if l.strip())
                elif f.endswith('.jsonl'):
                    for l in data.splitlines():
                        if l.strip():
                            walk(json.loads(l))
                else:
                    walk(json.loads(data))
            except (UnicodeDecodeError, ValueError):
                continue
    for s in sorted(texts):
        if sqlparse.parse(s):
            yield s, remove_distinct(s)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--shared':
        cases = shared_texts(sys.argv[2])
    elif len(sys.argv) == 2:
        cases = random_cases(int(sys.argv[1]), 15)
    else:
        cases = random_cases(2000, 14)
    for s, want in cases:
        sys.stdout.write(json.dumps({"in": s, "want": want}) + "\n")


main()
