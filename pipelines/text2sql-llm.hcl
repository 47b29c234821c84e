# text2sql-llm — generate SQL with a model, validate and run it on SQLite,
# repair failures with the engine's error, score with execution match,
# pass@k and LLM judges.
#
#   evalflow run pipelines/text2sql-llm.hcl \
#     -var dataset=questions.jsonl -var databases=dbs/ -out runs/gpt
#
# One -var points it elsewhere (keys come from the provider's usual
# environment variable: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY):
#   -var provider=anthropic            (Claude; default model below)
#   -var provider=gemini
#   -var base_url=http://localhost:11434/v1 -var model=qwen2.5-coder   (Ollama, vLLM, llama.cpp, LM Studio)
#
# The variables, and items.parquet's id, ex, pass_at_1, pass_at_k,
# query_correctness, qas_score columns, are a public contract: later
# versions add to them and never rename them. attempts.parquet has one row
# per sample × attempt with the raw completion, the extracted query,
# tokens, cost, latency and cache hit.

variable "dataset" {
  type        = string
  description = "JSONL with id, question, gold, db and any extra columns (passed through)."
}

variable "databases" {
  type        = string
  description = "Directory holding <db>.sqlite or <db>/<db>.sqlite."
}

variable "predictions" {
  type        = string
  default     = ""
  description = "Unused here (the model generates); accepted so the replay pipeline's command lines work unchanged."
}

variable "provider" {
  type        = string
  default     = "openai"
  description = "openai (also any OpenAI-compatible server through base_url), anthropic or gemini."
  validation {
    condition     = contains(["openai", "anthropic", "gemini"], var.provider)
    error_message = "provider must be one of openai, anthropic, gemini"
  }
}

variable "base_url" {
  type        = string
  default     = ""
  description = "Endpoint base URL; empty for the provider's own. A local OpenAI-compatible server: http://localhost:8000/v1."
}

variable "model" {
  type        = string
  default     = ""
  description = "Model name; empty for the provider's default (gpt-4o-mini, claude-3-5-haiku-latest, gemini-2.0-flash)."
}

variable "judge_model" {
  type        = string
  default     = ""
  description = "Model of the LLM judges (query_correctness, qas_semantic), same provider and endpoint; empty: the generator's model."
}

variable "samples" {
  type        = number
  default     = 1
  description = "Independent samples per question (pass@k draws from them)."
}

variable "temperature" {
  type        = number
  default     = 0
  description = "Sampling temperature (raise it with samples > 1)."
}

variable "max_iterations" {
  type        = number
  default     = 2
  description = "Repairs refine asks for when an attempt fails validation or execution."
}

variable "max_concurrency" {
  type        = number
  default     = 8
  description = "Model calls in flight at most (shared by generation, repair and judges)."
}

variable "max_cost" {
  type        = number
  default     = 0
  description = "Dollars after which no further model call is made (0: no limit)."
}

variable "price" {
  type        = object({ input = number, output = number })
  default     = null
  description = "Model prices in dollars per million tokens, e.g. { input = 2.5, output = 10 }, for max_cost and evalflow plan's estimate; null: unknown (plan says so)."
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

variable "k" {
  type        = number
  default     = 1
  description = "k for pass_at_k (at most samples)."
}

variable "concurrency" {
  type        = number
  default     = 4
  description = "Worker pool size of the stages."
}

locals {
  databases = trimsuffix(fromcwd(var.databases), "/")
  default_model = {
    openai    = "gpt-4o-mini"
    anthropic = "claude-3-5-haiku-latest"
    gemini    = "gemini-2.0-flash"
  }
  model       = var.model != "" ? var.model : local.default_model[var.provider]
  judge_model = var.judge_model != "" ? var.judge_model : local.model
}

dataset "questions" {
  source = fromcwd(var.dataset)
  format = "jsonl"
}

engine "main" {
  kind     = "sqlite"
  path     = fileexists("${local.databases}/${item.db}/${item.db}.sqlite") ? "${local.databases}/${item.db}/${item.db}.sqlite" : "${local.databases}/${item.db}.sqlite"
  root     = local.databases
  timeout  = var.timeout
  max_rows = var.max_rows
}

model "generator" {
  provider        = var.provider
  base_url        = var.base_url
  model           = local.model
  temperature     = var.temperature
  max_tokens      = 1024
  max_concurrency = var.max_concurrency
  max_cost        = var.max_cost
  price           = var.price
}

model "judge" {
  provider        = var.provider
  base_url        = var.base_url
  model           = local.judge_model
  temperature     = 0
  max_tokens      = 256
  max_concurrency = var.max_concurrency
  price           = var.price
}

stage "generate" {
  dataset     = dataset.questions
  source      = "llm"
  model       = model.generator
  samples     = var.samples
  language    = "sql"
  engine      = engine.main
  schema      = "full"
  concurrency = var.concurrency
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
  concurrency    = var.concurrency
}

stage "score" {
  input       = stage.refine
  concurrency = var.concurrency

  metric "ex" {
    compare = var.compare
  }
  metric "pass_at_1" {}
  metric "pass_at_k" {
    k = var.k
  }
  metric "query_correctness" {
    model = model.judge
  }
  metric "qas_semantic" {
    model = model.judge
  }
  metric "qas_score" {}
}

stage "aggregate" {
  input = stage.score
}
