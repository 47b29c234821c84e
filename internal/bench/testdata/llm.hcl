# The model-call throughput pipeline of the CLI benchmark
# (scripts/bench-cli.sh, docs/benchmarks-baseline.md): every item's
# question is distinct, so every prompt is; the model block's response
# cache is off; the model answers after a fixed latency (internal/bench/
# fakellm), so with C calls in flight the ideal is C / latency items a
# second. Inputs:
#
#   go run ./internal/bench/gen -kind llm -n N -out DIR
#   OPENAI_API_KEY=x evalflow run internal/bench/testdata/llm.hcl \
#     -var dir=DIR -var base_url=URL -var c=C -out RUN

variable "dir" {
  type        = string
  description = "Directory written by internal/bench/gen -kind llm (items.jsonl, t.sqlite)."
}

variable "base_url" {
  type        = string
  description = "Base URL of the OpenAI-compatible endpoint (…/v1)."
}

variable "c" {
  type        = number
  default     = 8
  description = "Model calls in flight: the model's max_concurrency and the generate stage's pool."
}

variable "cap" {
  type        = number
  default     = 0
  description = "The model's max_concurrency when it is not c (0: c); over all workers of a distributed run (scripts/bench-scaleout.sh)."
}

dataset "items" {
  source = "${fromcwd(var.dir)}/items.jsonl"
}

engine "main" {
  kind = "sqlite"
  path = "${fromcwd(var.dir)}/${item.db}.sqlite"
}

model "m" {
  provider        = "openai"
  base_url        = var.base_url
  model           = "bench"
  temperature     = 0
  max_tokens      = 64
  max_concurrency = var.cap > 0 ? var.cap : var.c
  cache           = false
}

stage "generate" {
  dataset     = dataset.items
  source      = "llm"
  model       = model.m
  language    = "sql"
  schema      = "none"
  concurrency = var.c
}

stage "execute" {
  input  = stage.generate
  engine = engine.main
}

stage "score" {
  input = stage.execute

  metric "jaro_winkler" {}
}
