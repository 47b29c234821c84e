package check

import "testing"

// TestSafeCypherContexts covers separators and keywords inside string
// literals, backtick-quoted names, comments, property keys, map keys,
// variables and function arguments, each with an unsafe variant.
func TestSafeCypherContexts(t *testing.T) {
	runSafetyCases(t, Cypher, []safetyCase{
		// String literals.
		{"keyword in string", `MATCH (n) WHERE n.note = 'DETACH DELETE n; DROP INDEX x' RETURN n`, false},
		{"keyword in double-quoted string", `MATCH (n) WHERE n.q = "CALL apoc.load.json('x'); CREATE (m)" RETURN n`, false},
		{"doubled quote", `MATCH (n) WHERE n.name = 'O''Brien; SET n.x = 1' RETURN n`, false},
		{"escaped double quote", `MATCH (n) WHERE n.q = "say \"x\"; DELETE n" RETURN n`, false},
		{"backslash at end of string", `MATCH (n) WHERE n.path = 'C:\\' RETURN n`, false},
		{"stacked write after escaped backslash", `MATCH (n) WHERE n.path = 'C:\\' DETACH DELETE n`, true},
		{"stacked write after string", `MATCH (n) WHERE n.name = 'x'; MATCH (m) DELETE m`, true},
		{"comment marker in string", `MATCH (n) WHERE n.url = 'http://ex.org/a' RETURN n`, false},
		{"write after comment marker in string", `MATCH (n) WHERE n.url = 'http://x' SET n.a = 1`, true},
		// Backtick-quoted names.
		{"keyword as quoted label", "MATCH (n:`DELETE`) RETURN n.`SET`", false},
		{"semicolon in quoted name", "MATCH (n) RETURN n.`a;b` AS `x; DROP`", false},
		{"doubled backtick", "MATCH (n) RETURN n.`a``; DELETE n` AS x", false},
		{"write after quoted name", "MATCH (n:`Person`) SET n.`x` = 1", true},
		{"quoted dangerous function", "RETURN `apoc`.`load`.json('file:///etc/passwd') AS x", true},
		{"quoted dangerous function in one name", "RETURN `apoc.load.json`('file:///etc/passwd') AS x", true},
		{"quoted procedure", "CALL `apoc`.`create`.`node`(['X'], {}) YIELD node RETURN node", true},
		// Comments.
		{"keyword in line comment", "MATCH (n) RETURN n // DETACH DELETE n; DROP", false},
		{"keyword in block comment", "MATCH (n) /* CREATE (m); */ RETURN n", false},
		{"write after block comment", "MATCH (n) /* x */ DELETE n", true},
		{"write after line comment", "MATCH (n) // x\nDELETE n", true},
		{"statement after comment", "MATCH (n) RETURN n /* c */ ; MATCH (m) DETACH DELETE m", true},
		// Property keys, labels, map keys, aliases.
		{"keywords as property keys", `MATCH (n) RETURN n.set, n.load, n.create, n.delete, n.call, n.use`, false},
		{"keywords as labels and types", `MATCH (n:Create)-[:DELETE]->(m:Load) RETURN m`, false},
		{"keywords as map keys", `MATCH (n {delete: 1, load: 'csv'}) RETURN n {.set, show: 1}`, false},
		{"keywords as aliases", `MATCH (n) RETURN count(n) AS transactions, n.x AS show`, false},
		// Variables named like administration keywords.
		{"start and stop as variables", `MATCH p = (start:Station {name: 'A'})-[:LINK*]->(stop:Station) RETURN start.name, stop.name, length(p)`, false},
		{"start bare in return", `MATCH (start)-[r]->(end) RETURN start, end ORDER BY start.name`, false},
		{"start before order by", `MATCH (start) RETURN start ORDER BY id(start) LIMIT 3`, false},
		{"start with semicolon", `MATCH (start) RETURN start;`, false},
		{"stop in shortest path", `MATCH (a {id: 1}), (stop {id: 2}) MATCH p = shortestPath((a)-[*]-(stop)) WHERE stop IS NOT NULL RETURN p`, false},
		{"show as variable", `MATCH (show:TVShow) WHERE show.title STARTS WITH 'A' RETURN show`, false},
		{"start database", `START DATABASE neo4j`, true},
		{"stop database after query", `MATCH (n) RETURN n; STOP DATABASE neo4j`, true},
		{"show databases", `SHOW DATABASES`, true},
		{"show quoted", "SHOW `users`", true},
		{"use database", `USE system MATCH (n) RETURN n`, true},
		{"use quoted database", "USE `system` MATCH (n) RETURN n", true},
		{"terminate transactions", `TERMINATE TRANSACTIONS 'neo4j-transaction-1'`, true},
		{"create with start variable", `MATCH (start) CREATE (start)-[:X]->(m)`, true},
		{"set on start variable", `MATCH (start) SET start.x = 1`, true},
		{"grant", `GRANT ROLE admin TO bob`, true},
		// Function arguments and keyword-named functions.
		{"replace function", `MATCH (n) RETURN replace(n.name, 'DELETE', 'x')`, false},
		{"call inside string argument", `MATCH (n) WHERE toLower(n.q) CONTAINS 'call dbms.security' RETURN n`, false},
		{"apoc text function", `RETURN apoc.text.join(['a', 'b'], ';') AS s`, false},
		{"apoc create uuid", `RETURN apoc.create.uuid() AS id`, false},
		{"dangerous function with spaces", `RETURN apoc . load . json ('http://evil') AS x`, true},
		{"load csv", `LOAD CSV FROM 'file:///x.csv' AS row RETURN row`, true},
		{"foreach", `MATCH p = (a)-->(b) FOREACH (n IN nodes(p) | SET n.x = 1)`, true},
		{"call subquery write", `MATCH (n) CALL { WITH n DELETE n } RETURN 1`, true},
		{"in transactions", `MATCH (n) CALL { WITH n RETURN n } IN TRANSACTIONS RETURN n`, true},
	})
}
