variable "compare" {
  default = "evalflow"
}

dataset "questions" {
  source  = "q.jsonl"
  columns = []
}

engine "main" {
  kind    = "sqlite"
  path    = "./${item.db}.sqlite"
  timeout = "2s"
}

stage "generate" {
  predictions = "preds.jsonl"
}

stage "validate" {
  input = stage.generate
}

stage "execute" {
  input       = stage.validate
  concurrency = 2
}

stage "refine" {
  input          = stage.execute
  max_iterations = 2
}

stage "score" {
  input = stage.refine
  metric "ex" {
    compare = var.compare
  }
  metric "pass_at_k" {
    k = 1
  }
}

stage "aggregate" {
  input    = stage.score
  group_by = ["db"]
}
