# sparql — replayed SPARQL predictions on the embedded Oxigraph. Each item's
# db is an RDF file (absolute: BuildingQA's graphs are read in place) or
# empty, and `files` are loaded for every item (the TEXT2SPARQL'25 graph).
# With validate = false predictions go straight to the engine.

variable "dataset" { type = string }
variable "predictions" { type = string }
variable "files" {
  type    = list(string)
  default = []
}
variable "graph_root" {
  type        = string
  default     = ""
  description = "The directory item graph files must stay inside."
}
variable "timeout" {
  type    = string
  default = "10s"
}
variable "validate" {
  type    = bool
  default = true
}
variable "concurrency" {
  type    = number
  default = 2
}

dataset "questions" {
  source = var.dataset
  format = "jsonl"
}

engine "kg" {
  kind     = "sparql"
  path     = item.db
  root     = var.graph_root
  timeout  = var.timeout
  max_rows = 100000
  options  = merge({ data_prefixes = true }, length(var.files) > 0 ? { files = var.files } : {})
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = var.predictions
}

stage "validate" {
  input       = stage.generate
  engine      = engine.kg
  safety      = var.validate
  syntax      = var.validate
  concurrency = var.concurrency
}

stage "execute" {
  input       = stage.validate
  engine      = engine.kg
  concurrency = var.concurrency
}

stage "score" {
  input = stage.execute
  metric "entity_set_f1" {}
  metric "row_match_f1" {}
}
