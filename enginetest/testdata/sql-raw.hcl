# sql-raw — replayed predictions straight to the engine, with no validate
# stage: the lexical safety check never sees them, so whatever a prediction
# tries is stopped (or not) by the engine alone. The adversarial tests run
# it to check the engines' own read-only guarantees and timeouts.

variable "dataset" { type = string }
variable "predictions" { type = string }
variable "engine" { type = string }
variable "databases" {
  type    = string
  default = ""
}
variable "dsn" {
  type    = string
  default = ""
}
variable "timeout" {
  type    = string
  default = "1s"
}
variable "concurrency" {
  type    = number
  default = 4
}

dataset "questions" {
  source = var.dataset
  format = "jsonl"
}

engine "main" {
  kind     = var.engine
  path     = var.engine == "postgres" ? item.db : "${var.databases}/${item.db}.${var.engine}"
  root     = var.databases
  timeout  = var.timeout
  max_rows = 1000
  options  = { for k, v in { dsn = var.dsn } : k => v if var.engine == "postgres" }
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = var.predictions
}

stage "execute" {
  input       = stage.generate
  engine      = engine.main
  concurrency = var.concurrency
}

stage "score" {
  input = stage.execute
  metric "ex" {}
}
