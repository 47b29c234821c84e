// Reads a run directory the way docs/output.md's "Reading the results" does
// with polars — here nodejs-polars, the same Rust Parquet reader as Python
// polars — and once more with hyparquet (pure JS, a second independent
// reader), and prints the results as one JSON document for
// examples/output_docs_test.go to compare with evalflow's own numbers.
// Usage: node read.mjs RUN_DIR
import pl from "nodejs-polars";

const run = process.argv[2];
const rows = (df) => df.toRecords();

// items = pl.read_parquet(f"{run}/items.parquet")
const items = pl.readParquet(`${run}/items.parquet`);
// items.group_by("difficulty").agg(pl.col("ex").mean()).sort("difficulty")
const exByDifficulty = items.groupBy("difficulty").agg(pl.col("ex").mean()).sort("difficulty");
// items.filter(pl.col("ex") == 0).select("id", "question", "gold", "prediction", "error_class")
const wrong = items.filter(pl.col("ex").eq(0)).select("id", "question", "gold", "prediction", "error_class");
// pl.scan_parquet(f"{run}/attempts.parquet").group_by("id").len().sort("id").collect()
const attemptsPerItem = await pl.scanParquet(`${run}/attempts.parquet`).groupBy("id").len().sort("id").collect();
// pl.read_parquet(f"{run}/aggregates.parquet").filter(pl.col("group_by") == "all").select("metric", "mean", "ci_low", "ci_high")
const overall = pl.readParquet(`${run}/aggregates.parquet`)
  .filter(pl.col("group_by").eq(pl.lit("all")))
  .select("metric", "mean", "ci_low", "ci_high")
  .sort("metric");

const num = (v) => (typeof v === "bigint" ? Number(v) : v);
const plain = (rs) => rs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, num(v)])));
process.stdout.write(JSON.stringify({
  ex_by_difficulty: plain(rows(exByDifficulty)),
  wrong: plain(rows(wrong)),
  attempts_per_item: plain(rows(attemptsPerItem)),
  overall: plain(rows(overall)),
}));
