# bird-dev — score a BIRD dev prediction file (BIRD's predict_dev.json, or
# JSONL) by execution on BIRD's SQLite databases.
#
# From the directory holding BIRD dev (bird/dev/dev.json,
# bird/dev/dev_databases/):
#
#   evalflow run pipelines/bird-dev.hcl -var predictions=predict_dev.json
#
# Elsewhere, -var dataset=.../dev.json -var databases=.../dev_databases.
# The files are read as they are published (docs/formats.md): ids come from
# question_id, gold from SQL, db from db_id, and evidence and difficulty are
# passed through to items.parquet; predict_dev.json's keys are the ids (the
# database after "\t----- bird -----\t" is ignored: db_id decides).
# Databases are DATABASES/<db_id>/<db_id>.sqlite; a missing one makes its
# items errors. ex follows BIRD's evaluation_ex.py by default (-var
# compare=...), bird_soft_f1 BIRD mini_dev's Soft-F1; the aggregates are
# grouped by difficulty and by database.
#
# Or generate with a model instead of replaying a file (the key from the
# provider's usual environment variable, e.g. OPENAI_API_KEY):
#
#   evalflow run pipelines/bird-dev.hcl -var model=gpt-4o-mini
#   evalflow run pipelines/bird-dev.hcl -var model=qwen2.5-coder -var base_url=http://localhost:11434/v1
#
# The variables, the id, ex and bird_soft_f1 columns of items.parquet are a
# public contract: later versions add to them and never rename them.

variable "predictions" {
  type        = string
  default     = ""
  description = "Predictions: BIRD's predict_dev.json ({\"question_id\": \"SQL\\t----- bird -----\\tdb_id\", ...}), or JSONL keyed by id with pred, attempts or preds."
}

variable "dataset" {
  type        = string
  default     = "bird/dev/dev.json"
  description = "BIRD's dev.json (relative to the current directory), or any BIRD-shaped JSON array or JSONL."
}

variable "databases" {
  type        = string
  default     = "bird/dev/dev_databases"
  description = "BIRD's dev_databases directory: <db_id>/<db_id>.sqlite for every db_id (relative to the current directory)."
}

variable "model" {
  type        = string
  default     = ""
  description = "Generate with this model instead of replaying predictions (e.g. gpt-4o-mini); empty: replay var.predictions."
  validation {
    condition     = var.model != "" || var.predictions != ""
    error_message = "set -var predictions=FILE (replay) or -var model=NAME (generate)"
  }
}

variable "provider" {
  type        = string
  default     = "openai"
  description = "With model: openai (also any OpenAI-compatible server through base_url), anthropic or gemini; the API key comes from the provider's usual environment variable."
  validation {
    condition     = contains(["openai", "anthropic", "gemini"], var.provider)
    error_message = "provider must be one of openai, anthropic, gemini"
  }
}

variable "base_url" {
  type        = string
  default     = ""
  description = "With model: the endpoint base URL; empty for the provider's own."
}

variable "price" {
  type        = object({ input = number, output = number })
  default     = null
  description = "With model: dollars per million tokens, { input = 2.5, output = 10 }, for max_cost and evalflow plan; null: unknown."
}

variable "max_cost" {
  type        = number
  default     = 0
  description = "With model: dollars after which no further model call is made (0: no limit; needs price)."
}

variable "compare" {
  type        = string
  default     = "bird"
  description = "How ex is computed: bird (BIRD's evaluation_ex.py), evalflow, testsuite or testsuite_keep_distinct."
  validation {
    condition     = contains(["evalflow", "testsuite", "testsuite_keep_distinct", "bird"], var.compare)
    error_message = "compare must be one of evalflow, testsuite, testsuite_keep_distinct, bird"
  }
}

variable "group_by" {
  type        = list(string)
  default     = ["difficulty", "db"]
  description = "Columns the aggregates are grouped by (dataset fields, db or status)."
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
  description = "Per-query timeout; a query past it is interrupted (BIRD's evaluation uses 30 s)."
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

variable "concurrency" {
  type        = number
  default     = 4
  description = "Worker pool size of the validate, execute and score stages."
}

locals {
  databases = trimsuffix(fromcwd(var.databases), "/")
}

dataset "questions" {
  source = fromcwd(var.dataset) # evidence, difficulty and any other field pass through
}

engine "main" {
  kind     = "sqlite"
  path     = "${local.databases}/${item.db}/${item.db}.sqlite"
  root     = local.databases
  timeout  = var.timeout
  max_rows = var.max_rows
}

model "generator" {
  provider    = var.provider
  base_url    = var.base_url
  model       = var.model != "" ? var.model : "unused"
  temperature = 0
  max_tokens  = 1024
  max_cost    = var.max_cost
  price       = var.price
}

# Replay var.predictions, or generate with var.model: the attributes of the
# source not chosen are null.
stage "generate" {
  dataset     = dataset.questions
  source      = var.model == "" ? "replay" : "llm"
  predictions = var.model == "" ? fromcwd(var.predictions) : null
  model       = var.model == "" ? null : model.generator
  engine      = var.model == "" ? null : engine.main
  # BIRD's external knowledge (evidence) goes with the question.
  prompt = var.model == "" ? null : "{{if .Schema}}Database schema:\n{{.Schema}}\n\n{{end}}{{with .Fields.evidence}}External knowledge: {{.}}\n{{end}}Write one SQLite query that answers the question.\nQuestion: {{.Question}}"
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
}

stage "aggregate" {
  input    = stage.score
  group_by = var.group_by
}
