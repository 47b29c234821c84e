# pandas — evaluate replayed text-to-pandas predictions on two small CSV
# tables of a bike-share scheme that ship with this example
# (data/README.md). Each prediction runs in a sandbox (bubblewrap, Debian's
# python3 with pandas; `sudo apt-get install python3-pandas bubblewrap`)
# that sees the tables as stations and rides and nothing else.
#
#   go run ./cmd/evalflow run examples/pandas

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "Execution-match profile for the ex column (see `evalflow metrics`)."
}

variable "max_iterations" {
  type        = number
  default     = 2
  description = "How many more attempts refine may take after a failed one."
}

variable "timeout" {
  type        = string
  default     = "3s"
  description = "Per-query timeout; the sandbox is killed past it."
}

dataset "questions" {
  source = "data/questions.jsonl"
}

engine "bikes" {
  kind    = "pandas"
  path    = "data/bikes"
  timeout = var.timeout
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = "data/predictions.jsonl"
}

stage "validate" {
  input  = stage.generate
  engine = engine.bikes
}

stage "execute" {
  input       = stage.validate
  engine      = engine.bikes
  concurrency = 2
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
  metric "jaccard_output" {}
}

stage "aggregate" {
  input    = stage.score
  group_by = ["difficulty"]
}
