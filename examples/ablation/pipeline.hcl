# ablation — a sweep over the quickstart: two replayed "models" × two refine
# depths, four cells in one run directory. It runs offline: each "model" is
# a file of its recorded answers (data/README.md).
#
#   go run ./cmd/evalflow plan examples/ablation
#   go run ./cmd/evalflow run examples/ablation -out runs/ablation
#   go run ./cmd/evalflow compare runs/ablation@model=small,max_iterations=2 runs/ablation@model=large,max_iterations=2
#   go run ./cmd/evalflow run examples/ablation -out runs/ablation -fail-under ex=0.5
#
# docs/experiments.md walks through it.

variable "model" {
  type        = string
  default     = "large"
  description = "Which replayed model answers: small or large (data/MODEL.jsonl)."

  validation {
    condition     = contains(["small", "large"], var.model)
    error_message = "model must be small or large."
  }
}

variable "max_iterations" {
  type        = number
  default     = 2
  description = "How many more attempts refine may take after a failed one."
}

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "Execution-match profile for the ex column (see `evalflow metrics`)."
}

sweep {
  model          = ["small", "large"]
  max_iterations = [0, 2]
}

dataset "questions" {
  source = "../quickstart/data/questions.jsonl"
}

engine "shop" {
  kind     = "sqlite"
  path     = "../quickstart/data/${item.db}.sqlite"
  root     = "../quickstart/data"
  timeout  = "1s"
  max_rows = 10000
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = "data/${var.model}.jsonl"
}

stage "validate" {
  input  = stage.generate
  engine = engine.shop
  safety = true
  syntax = true
}

stage "execute" {
  input  = stage.validate
  engine = engine.shop
}

stage "refine" {
  input          = stage.execute
  max_iterations = var.max_iterations
}

stage "score" {
  input = stage.refine

  metric "ex" {
    compare = var.compare
  }
}

stage "aggregate" {
  input    = stage.score
  group_by = ["difficulty"]
}
