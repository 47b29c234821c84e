dataset "d" {
  source = "q.jsonl"
}
engine "main" {
  kind = "sqlit" # ERROR: Unknown engine kind
  path = "t.sqlite"
}
stage "generate" {
  predictions = "preds.jsonl"
}
