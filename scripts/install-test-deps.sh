#!/usr/bin/env bash
# Installs what evalflow's tests need on a fresh Debian 12 machine with Go
# and Node.js: PostgreSQL (throwaway test clusters), Debian's pandas and
# bubblewrap (the pandas sandbox), the embedded Oxigraph's npm package
# (SPARQL), valkey-server from bookworm-backports with the pinned FalkorDB
# module (Cypher). SQLite and DuckDB are embedded in the Go build.
# Idempotent: it installs only what is missing. `make test` runs it.
set -euo pipefail

need_apt=()
# PostgreSQL: engine/postgres tests start a throwaway cluster with initdb and
# pg_ctl from Debian's postgresql package (scripts/postgres-test-cluster.sh).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then need_apt+=(postgresql); fi
if ! /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || ! command -v bwrap >/dev/null; then need_apt+=(python3-pandas bubblewrap); fi # pandas engine: Debian's pandas for /usr/bin/python3, bubblewrap sandbox
if ! command -v xmllint >/dev/null; then need_apt+=(libxml2-utils); fi # junit: -junit output is checked against its XSD with xmllint
if ! command -v chromium >/dev/null; then need_apt+=(chromium); fi # report: report.html is rendered in headless Chromium (cmd/evalflow/report_test.go)
if ! dpkg -s fonts-liberation >/dev/null 2>&1; then need_apt+=(fonts-liberation); fi # report: the SVG charts name Liberation fonts; without them Chromium's fallback metrics make labels overlap (TestReportExamplesInChromium)
if ! command -v nats-server >/dev/null; then need_apt+=(nats-server); fi # cluster: -cluster and worker tests run on Debian 12's NATS server 2.9 (cmd/evalflow/cluster_test.go)
if ((${#need_apt[@]})); then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# The shared benchmark data must sit beside the checkout.
if [ ! -d "$(dirname "$0")/../../shared/data" ]; then
  echo "install-test-deps: ../shared/data is missing beside the checkout; conformance tests will fail under CI=true" >&2
fi
# SPARQL: the embedded Oxigraph server's npm dependencies (pinned by
# engine/sparql/oxigraph/package-lock.json; pure WASM, needs Node 18+).
oxi="$(cd "$(dirname "$0")/.." && pwd)/engine/sparql/oxigraph"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-test-deps: node and npm (Node.js 18+) are needed for the SPARQL engine tests" >&2
  exit 1
elif [ ! -f "$oxi/node_modules/oxigraph/package.json" ] || [ "$oxi/package-lock.json" -nt "$oxi/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$oxi" --no-audit --no-fund --loglevel=error
fi
# An independent Parquet reader for the sink and run-directory tests: DuckDB
# through its Node bindings (pinned by sinks/testdata/duckdb-npm/
# package-lock.json; the linux-x64 binary ships inside the npm package).
duck="$(cd "$(dirname "$0")/.." && pwd)/sinks/testdata/duckdb-npm"
if [ ! -f "$duck/node_modules/@duckdb/node-api/package.json" ] || [ "$duck/package-lock.json" -nt "$duck/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$duck" --no-audit --no-fund --loglevel=error
fi
go mod download

# FalkorDB (Cypher engine tests): valkey-server from bookworm-backports and
# the pinned falkordb.so module (engine/cypher/falkordb-npm).
bash "$(dirname "$0")/falkordb-server.sh" install

# docs/output.md's polars code, checked by examples/output_docs_test.go with
# nodejs-polars (the Rust Parquet reader of Python polars, which Debian 12
# does not package): pinned by examples/testdata/readers-npm/package-lock.json.
readers="$(cd "$(dirname "$0")/.." && pwd)/examples/testdata/readers-npm"
if [ ! -f "$readers/node_modules/nodejs-polars/package.json" ] || [ "$readers/package-lock.json" -nt "$readers/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$readers" --no-audit --no-fund --loglevel=error
fi
