# text2sql-replay — evaluate a prediction file against a SQLite benchmark.
#
#   evalflow run pipelines/text2sql-replay.hcl \
#     -var dataset=questions.jsonl -var predictions=preds.jsonl \
#     -var databases=dbs/ -out runs/mine
#
# Benchmark files work as they are (docs/formats.md): the dataset may be
# JSONL, a JSON array (Spider's or BIRD's dev.json: id from question_id or
# the row index, gold from query or SQL, db from db_id), CSV or Parquet; the
# predictions JSONL, BIRD's predict_dev.json or a Spider pred.txt (line i is
# the item with id "i": pair it with a dataset without ids, like Spider's
# dev.json). Formats come from the extension and the content.
#
#   evalflow run pipelines/text2sql-replay.hcl \
#     -var dataset=spider/dev.json -var predictions=pred.txt \
#     -var databases=spider/database -out runs/spider
#
# The variables, the `id` and `ex` columns of items.parquet are a public
# contract: later versions add to them and never rename them.

variable "dataset" {
  type        = string
  description = "JSONL with id, question, gold, db and any extra columns (passed through)."
}

variable "predictions" {
  type        = string
  description = "JSONL keyed by id with pred (one query), attempts (list, for refine) or preds (samples, for pass@k)."
}

variable "databases" {
  type        = string
  default     = ""
  description = "Directory holding <db>.sqlite or <db>/<db>.sqlite (<db>.duckdb for engine=duckdb); not used for postgres."
  validation {
    condition     = var.databases != "" || var.engine == "postgres"
    error_message = "databases is required unless engine is postgres (set -var databases=DIR)"
  }
}

variable "engine" {
  type        = string
  default     = "sqlite"
  description = "Query engine: sqlite, duckdb or postgres (with -var dsn=...; each item's db names the database)."
  validation {
    condition     = contains(["sqlite", "duckdb", "postgres"], var.engine)
    error_message = "engine must be sqlite, duckdb or postgres"
  }
}

variable "dsn" {
  type        = string
  default     = ""
  description = "PostgreSQL connection string (engine=postgres), e.g. postgres://user@localhost:5432/?sslmode=disable."
  validation {
    condition     = var.engine != "postgres" || var.dsn != ""
    error_message = "engine=postgres needs -var dsn=..."
  }
}

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "How ex is computed: evalflow, testsuite, testsuite_keep_distinct or bird."
  validation {
    condition     = contains(["evalflow", "testsuite", "testsuite_keep_distinct", "bird"], var.compare)
    error_message = "compare must be one of evalflow, testsuite, testsuite_keep_distinct, bird"
  }
}

variable "tables" {
  type        = string
  default     = ""
  description = "Spider's tables.json: adds spider_esm, spider_esm_2018 and spider_hardness (exact-set-match as Spider's evaluation.py; schemas from <databases>/<db>/<db>.sqlite)."
}

variable "ves_repeat" {
  type        = number
  default     = 0
  description = "BIRD R-VES: 0 = off; N > 0 adds bird_ves and bird_r_ves (mini_dev's evaluation_ves.py, N timed runs of gold and prediction per item, 100 in mini_dev). Timing-dependent; never cached; run with -var concurrency=1 for stable timings."
  validation {
    condition     = var.ves_repeat >= 0
    error_message = "ves_repeat must be 0 (off) or a positive number of timed runs"
  }
}

variable "timeout" {
  type        = string
  default     = "30s"
  description = "Per-query timeout; a query past it is interrupted."
}

variable "max_rows" {
  type        = number
  default     = 100000
  description = "Rows read per query at most."
}

variable "max_iterations" {
  type        = number
  default     = 0
  description = "Extra attempts refine takes from a prediction's attempts list when one fails."
}

variable "k" {
  type        = number
  default     = 1
  description = "k for pass_at_k."
}

variable "concurrency" {
  type        = number
  default     = 4
  description = "Worker pool size of the validate, execute and score stages."
}

locals {
  databases = trimsuffix(fromcwd(var.databases), "/")
  ext       = var.engine == "duckdb" ? "duckdb" : "sqlite"
}

dataset "questions" {
  source = fromcwd(var.dataset) # format from the extension and content
}

engine "main" {
  kind     = var.engine
  path     = var.engine == "postgres" ? item.db : (fileexists("${local.databases}/${item.db}/${item.db}.${local.ext}") ? "${local.databases}/${item.db}/${item.db}.${local.ext}" : "${local.databases}/${item.db}.${local.ext}")
  root     = local.databases
  timeout  = var.timeout
  max_rows = var.max_rows
  options  = { for k, v in { dsn = var.dsn } : k => v if var.engine == "postgres" }
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = fromcwd(var.predictions)
}

stage "validate" {
  input       = stage.generate
  engine      = engine.main
  concurrency = var.concurrency
}

stage "execute" {
  input       = stage.validate
  engine      = engine.main
  concurrency = var.concurrency
}

stage "refine" {
  input          = stage.execute
  max_iterations = var.max_iterations
}

stage "score" {
  input       = stage.refine
  concurrency = var.concurrency

  metric "ex" {
    compare = var.compare
  }
  metric "bird_soft_f1" {}
  metric "pass_at_k" {
    k = var.k
  }
  dynamic "metric" {
    for_each = var.ves_repeat > 0 ? ["bird_ves"] : []
    labels   = [metric.value]
    content {
      repeat = var.ves_repeat
    }
  }
  dynamic "metric" {
    for_each = var.ves_repeat > 0 ? ["bird_r_ves"] : []
    labels   = [metric.value]
    content {}
  }
  dynamic "metric" {
    for_each = var.tables == "" ? [] : ["spider_esm", "spider_esm_2018", "spider_hardness"]
    labels   = [metric.value]
    content {
      tables    = fromcwd(var.tables)
      databases = local.databases
    }
  }
}

stage "aggregate" {
  input = stage.score
}
