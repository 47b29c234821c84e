# text2sparql-replay — evaluate SPARQL predictions against RDF graphs on the
# embedded Oxigraph (or any endpoint).
#
#   evalflow run pipelines/text2sparql-replay.hcl \
#     -var dataset=questions.jsonl -var predictions=preds.jsonl \
#     -var graph=building.ttl -out runs/sparql
#
# The variables and the metric columns are a public contract: later versions
# add to them and never rename them.

variable "dataset" {
  type        = string
  description = "JSONL with id, question, gold (SPARQL) and any extra columns (passed through)."
}

variable "predictions" {
  type        = string
  description = "JSONL keyed by id with pred (one query), attempts (list, for refine) or preds (samples)."
}

variable "graph" {
  type        = string
  default     = ""
  description = "RDF file(s) loaded for every item: one path, or several separated by commas."
}

variable "graph_dir" {
  type        = string
  default     = ""
  description = "Directory of per-item graphs: item db X reads <graph_dir>/X.ttl (BuildingQA's one graph per building)."
  validation {
    condition     = var.graph != "" || var.graph_dir != ""
    error_message = "set -var graph=FILE[,FILE...] or -var graph_dir=DIR"
  }
}

variable "endpoint" {
  type        = string
  default     = ""
  description = "A SPARQL endpoint URL to query instead of the embedded Oxigraph (graph and graph_dir are then ignored)."
}

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "How the F1s compare results: evalflow (declared columns, exact values), buildingqa or text2sparql."
  validation {
    condition     = contains(["evalflow", "buildingqa", "text2sparql"], var.compare)
    error_message = "compare must be one of evalflow, buildingqa, text2sparql"
  }
}

variable "data_prefixes" {
  type        = bool
  default     = true
  description = "Let queries use the prefixes the Turtle files declare without declaring them (rdflib's behaviour, which BuildingQA's golds rely on)."
}

variable "timeout" {
  type        = string
  default     = "30s"
  description = "Per-query timeout; the embedded server is killed and restarted past it."
}

variable "max_iterations" {
  type        = number
  default     = 0
  description = "Extra attempts refine takes from a prediction's attempts list when one fails."
}

variable "concurrency" {
  type        = number
  default     = 2
  description = "Worker pool size of the validate, execute and score stages."
}

locals {
  files   = [for f in split(",", var.graph) : fromcwd(trimspace(f)) if trimspace(f) != ""]
  profile = var.compare == "evalflow" ? "strict" : "buildingqa"
  options = merge(
    { for k, v in { endpoint = var.endpoint } : k => v if var.endpoint != "" },
    { for k, v in { files = local.files, data_prefixes = var.data_prefixes } : k => v if var.endpoint == "" },
  )
}

dataset "questions" {
  source = fromcwd(var.dataset)
  format = "jsonl"
}

engine "kg" {
  kind    = "sparql"
  path    = var.graph_dir != "" && var.endpoint == "" ? "${trimsuffix(fromcwd(var.graph_dir), "/")}/${item.db}.ttl" : ""
  root    = var.graph_dir != "" ? fromcwd(var.graph_dir) : ""
  timeout = var.timeout
  options = local.options
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = fromcwd(var.predictions)
}

stage "validate" {
  input       = stage.generate
  engine      = engine.kg
  concurrency = var.concurrency
}

stage "execute" {
  input       = stage.validate
  engine      = engine.kg
  concurrency = var.concurrency
}

stage "refine" {
  input          = stage.execute
  max_iterations = var.max_iterations
}

stage "score" {
  input       = stage.refine
  concurrency = var.concurrency

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
  metric "text2sparql_precision" {}
  metric "text2sparql_recall" {}
  metric "text2sparql_f1" {}
}

stage "aggregate" {
  input = stage.score
}
