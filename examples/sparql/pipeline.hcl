# sparql — evaluate replayed text-to-SPARQL predictions on a small library
# graph that ships with this example (data/README.md), on the embedded
# Oxigraph. The first run installs Oxigraph's npm package into the user
# cache directory (it needs node and npm) and says so on one line.
#
#   go run ./cmd/evalflow run examples/sparql
#   go run ./cmd/evalflow run examples/sparql -var compare=buildingqa

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "How the F1s compare results: evalflow (declared columns, exact values) or buildingqa."
  validation {
    condition     = contains(["evalflow", "buildingqa"], var.compare)
    error_message = "compare must be evalflow or buildingqa"
  }
}

variable "max_iterations" {
  type        = number
  default     = 2
  description = "How many more attempts refine may take after a failed one."
}

variable "timeout" {
  type        = string
  default     = "2s"
  description = "Per-query timeout; the embedded server is killed and restarted past it."
}

locals {
  profile = var.compare == "evalflow" ? "strict" : "buildingqa"
}

dataset "questions" {
  source = "data/questions.jsonl"
}

engine "library" {
  kind    = "sparql"
  path    = "data/library.ttl"
  timeout = var.timeout
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = "data/predictions.jsonl"
}

stage "validate" {
  input  = stage.generate
  engine = engine.library
}

stage "execute" {
  input       = stage.validate
  engine      = engine.library
  concurrency = 2
}

stage "refine" {
  input          = stage.execute
  max_iterations = var.max_iterations
}

stage "score" {
  input = stage.refine

  metric "arity_f1" {
    profile = local.profile
  }
  metric "entity_set_f1" {
    profile = local.profile
  }
  metric "row_match_f1" {
    as      = "row_f1"
    profile = local.profile
  }
  metric "exact_match_f1" {
    profile = local.profile
  }
  metric "text2sparql_f1" {}
}

stage "aggregate" {
  input    = stage.score
  group_by = ["difficulty"]
}
