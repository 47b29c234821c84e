# The trivial pipeline of the CLI throughput benchmark
# (scripts/bench-cli.sh, docs/benchmarks-baseline.md): replay → execute
# "SELECT 1" on an empty SQLite database → a string metric → the run
# directory's Parquet files. What it costs is evalflow's own per-item work:
# reading the inputs, the stage hops, the stage cache, the metric, the
# durable Parquet parts and the merge. Inputs come from
#
#   go run ./internal/bench/gen -kind trivial -n N -out DIR
#   evalflow run internal/bench/testdata/trivial.hcl -var dir=DIR -out RUN

variable "dir" {
  type        = string
  description = "Directory written by internal/bench/gen -kind trivial (items.jsonl, preds.jsonl, t.sqlite)."
}

variable "concurrency" {
  type        = number
  default     = 4
  description = "Worker pool size of the execute and score stages."
}

dataset "items" {
  source = "${fromcwd(var.dir)}/items.jsonl"
}

engine "main" {
  kind = "sqlite"
  path = "${fromcwd(var.dir)}/${item.db}.sqlite"
}

stage "generate" {
  dataset     = dataset.items
  source      = "replay"
  predictions = "${fromcwd(var.dir)}/preds.jsonl"
}

stage "execute" {
  input       = stage.generate
  engine      = engine.main
  concurrency = var.concurrency
}

stage "score" {
  input       = stage.execute
  concurrency = var.concurrency

  metric "jaro_winkler" {}
}
