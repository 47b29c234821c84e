# spider-dev — score a Spider dev prediction file (Spider's or test-suite's
# pred.txt, or JSONL) by execution on Spider's SQLite databases.
#
# From the directory holding Spider (spider/dev.json, spider/database/):
#
#   evalflow run pipelines/spider-dev.hcl -var predictions=pred.txt
#
# Elsewhere, -var dataset=.../dev.json -var databases=.../database. The
# files are read as they are published (docs/formats.md): dev.json has no
# id, so items are "0".."1033" in file order, gold comes from query and db
# from db_id; line i of pred.txt (from 0) is item "i". Databases are
# DATABASES/<db_id>/<db_id>.sqlite; a missing one makes its items errors.
# ex uses test-suite's comparison by default (-var compare=...).
#
# Or generate with a model instead of replaying a file (the key from the
# provider's usual environment variable, e.g. OPENAI_API_KEY):
#
#   evalflow run pipelines/spider-dev.hcl -var model=gpt-4o-mini
#   evalflow run pipelines/spider-dev.hcl -var model=qwen2.5-coder -var base_url=http://localhost:11434/v1
#
# The variables, the id and ex columns of items.parquet are a public
# contract: later versions add to them and never rename them.

variable "predictions" {
  type        = string
  default     = ""
  description = "Predictions: a Spider / test-suite pred.txt (line i is item \"i\"), or JSONL keyed by id with pred, attempts or preds."
}

variable "dataset" {
  type        = string
  default     = "spider/dev.json"
  description = "Spider's dev.json (relative to the current directory), or any Spider-shaped JSON array or JSONL."
}

variable "databases" {
  type        = string
  default     = "spider/database"
  description = "Spider's database directory: <db_id>/<db_id>.sqlite for every db_id (relative to the current directory)."
}

variable "tables" {
  type        = string
  default     = "auto"
  description = "Spider's tables.json for exact-set-match (spider_esm, spider_esm_2018, spider_hardness): auto = tables.json beside the dataset when it is there; \"\" = off; or a path (relative to the current directory)."
  validation {
    condition     = contains(["auto", ""], var.tables) || fileexists(fromcwd(var.tables))
    error_message = "tables: no such file (give Spider's tables.json, \"auto\" or \"\")"
  }
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
  default     = "testsuite"
  description = "How ex is computed: testsuite (test-suite-sql-eval's exec match), testsuite_keep_distinct, evalflow or bird."
  validation {
    condition     = contains(["evalflow", "testsuite", "testsuite_keep_distinct", "bird"], var.compare)
    error_message = "compare must be one of evalflow, testsuite, testsuite_keep_distinct, bird"
  }
}

variable "group_by" {
  type        = list(string)
  default     = ["db"]
  description = "Columns the aggregates are grouped by; add \"hardness\" when the dataset carries it (Spider's dev.json does not)."
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

variable "concurrency" {
  type        = number
  default     = 4
  description = "Worker pool size of the validate, execute and score stages."
}

locals {
  databases = trimsuffix(fromcwd(var.databases), "/")
  beside    = regex_replace(fromcwd(var.dataset), "[^/]*$", "tables.json")
  tables    = var.tables == "" ? "" : (var.tables != "auto" ? fromcwd(var.tables) : (fileexists(local.beside) ? local.beside : ""))
}

dataset "questions" {
  source = fromcwd(var.dataset)
  # Pass through only the grouping columns, not Spider's token lists and
  # parsed sql object.
  columns = [for c in var.group_by : c if !contains(["db", "status"], c)]
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
  dynamic "metric" {
    for_each = local.tables == "" ? [] : ["spider_esm", "spider_esm_2018", "spider_hardness"]
    labels   = [metric.value]
    content {
      tables    = local.tables
      databases = local.databases
    }
  }
}

stage "aggregate" {
  input    = stage.score
  group_by = var.group_by
}
