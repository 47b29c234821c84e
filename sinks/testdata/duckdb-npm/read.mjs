// Reads Parquet files with DuckDB (an independent reader: not parquet-go)
// and prints, as one JSON document, each query's column names and types and
// its rows with every value rendered as DuckDB's own text (NULL as null).
// Usage: node read.mjs "SQL" ["SQL" ...]
import { DuckDBInstance } from "@duckdb/node-api";

const db = await DuckDBInstance.create(":memory:");
const conn = await db.connect();
const out = [];
for (const sql of process.argv.slice(2)) {
  const reader = await conn.runAndReadAll(sql);
  const names = reader.columnNames();
  const types = reader.columnTypes().map((t) => t.toString());
  const text = (v) => (v === null ? null : Object.is(v, -0) ? "-0" : String(v));
  const rows = reader.getRows().map((r) => r.map(text));
  out.push({ names, types, rows });
}
process.stdout.write(JSON.stringify(out));
