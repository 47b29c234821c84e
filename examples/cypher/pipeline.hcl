# cypher — evaluate replayed text-to-Cypher predictions on a small company
# graph that ships with this example (data/README.md). By default evalflow
# starts a private FalkorDB (valkey-server with the falkordb module; `bash
# scripts/falkordb-server.sh install` installs both) and loads
# data/team.cypher into it. With neo4j_uri it queries a Neo4j server
# instead, which must already hold the graph (cypher-shell <
# examples/cypher/data/team.cypher); its password comes from NEO4J_PASSWORD.
#
#   go run ./cmd/evalflow run examples/cypher
#   go run ./cmd/evalflow run examples/cypher -var neo4j_uri=bolt://localhost:7687

variable "neo4j_uri" {
  type        = string
  default     = ""
  description = "Bolt URI of a Neo4j server holding data/team.cypher's graph, queried instead of a private FalkorDB."
}

variable "neo4j_user" {
  type        = string
  default     = "neo4j"
  description = "Neo4j user; the password comes from the NEO4J_PASSWORD environment variable."
}

variable "compare" {
  type        = string
  default     = "evalflow"
  description = "How ex compares results: evalflow, testsuite_keep_distinct or bird."
}

variable "max_iterations" {
  type        = number
  default     = 2
  description = "How many more attempts refine may take after a failed one."
}

variable "timeout" {
  type        = string
  default     = "1s"
  description = "Per-query timeout."
}

locals {
  neo4j = var.neo4j_uri != ""
}

dataset "questions" {
  source = "data/questions.jsonl"
}

engine "company" {
  kind    = local.neo4j ? "neo4j" : "falkordb"
  path    = local.neo4j ? "" : "company"
  timeout = var.timeout
  options = merge(
    { for k, v in { uri = var.neo4j_uri, username = var.neo4j_user, password = env("NEO4J_PASSWORD") } : k => v if local.neo4j },
    { for k, v in { start = true, load = { company = abspath("data/team.cypher") } } : k => v if !local.neo4j },
  )
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = "data/predictions.jsonl"
}

stage "validate" {
  input      = stage.generate
  engine     = engine.company
  schema     = true
  properties = true
}

stage "execute" {
  input       = stage.validate
  engine      = engine.company
  concurrency = 4
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
  metric "kg_valid_at_1" {
    as = "kg_valid"
  }
  metric "syntax_valid" {}
  metric "schema_score" {}
  metric "properties_score" {}
}

stage "aggregate" {
  input    = stage.score
  group_by = ["difficulty"]
}
