package check

import "testing"

// safetyCase is one labelled query of the per-language safety tables:
// read-only decoys that must pass, unsafe variants that must be refused.
type safetyCase struct {
	name   string
	query  string
	unsafe bool
}

// runSafetyCases checks each case with Safe(lang, …).
func runSafetyCases(t *testing.T, lang string, cases []safetyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := Safe(lang, tc.query)
			switch {
			case tc.unsafe && ok:
				t.Errorf("unsafe query accepted: %q", tc.query)
			case !tc.unsafe && !ok:
				t.Errorf("read-only query refused: %q: %s", tc.query, reason)
			case !ok && reason == "":
				t.Errorf("refused without a reason: %q", tc.query)
			}
		})
	}
}

// TestSafeSPARQLContexts covers separators and keywords inside GROUP_CONCAT
// arguments, predicate-object lists, string literals, IRIs, comments and
// function arguments, each with an unsafe variant.
func TestSafeSPARQLContexts(t *testing.T) {
	runSafetyCases(t, SPARQL, []safetyCase{
		// GROUP_CONCAT's separator.
		{"group_concat separator", `SELECT ?e (GROUP_CONCAT(DISTINCT ?s; SEPARATOR=", ") AS ?ss) WHERE { ?e ?p ?s } GROUP BY ?e`, false},
		{"group_concat separator lower case", `SELECT (GROUP_CONCAT(?s; separator=", ") AS ?ss) WHERE { ?e ?p ?s }`, false},
		{"group_concat separator spaced", "SELECT (GROUP_CONCAT( ?s ;\n\tSeparator = ' | ' ) AS ?ss) WHERE { ?e ?p ?s }", false},
		{"group_concat separator long string", `SELECT (GROUP_CONCAT(?s; SEPARATOR="""; """) AS ?ss) WHERE { ?e ?p ?s }`, false},
		{"group_concat separator semicolon", `SELECT (GROUP_CONCAT(?s; SEPARATOR=";") AS ?ss) WHERE { ?e ?p ?s }`, false},
		{"group_concat separator comment", "SELECT (GROUP_CONCAT(?s; # join\n SEPARATOR=',') AS ?ss) WHERE { ?e ?p ?s }", false},
		{"group_concat in having, no space", `PREFIX ex: <http://ex.org/>SELECT ?d (GROUP_CONCAT(DISTINCT ?n; SEPARATOR=", ") AS ?ns)WHERE { ?e ex:d ?d; ex:n ?n }GROUP BY ?dHAVING (COUNT(?e) > 5)`, false},
		{"update after group_concat", `SELECT (GROUP_CONCAT(?s; SEPARATOR=",") AS ?ss) WHERE { ?e ?p ?s } ; CLEAR ALL`, true},
		{"semicolon in parens not a separator", `SELECT (COUNT(?s; ?t) AS ?n) WHERE { ?s ?p ?t } ; ASK {}`, true},
		{"separator without string", `SELECT * WHERE { ?s ?p ?o } ; SEPARATOR = ?x`, true},
		{"second query after separator", `SELECT (GROUP_CONCAT(?s; SEPARATOR=",") AS ?ss) WHERE { ?e ?p ?s } ; SELECT * {}`, true},
		// Predicate-object lists.
		{"predicate-object list", `SELECT ?z WHERE { ?z a <http://ex.org/Zone> ; <http://ex.org/label> ?l ; <http://ex.org/p> ?p . }`, false},
		{"predicate-object list trailing", `SELECT ?z WHERE { ?z a ?t ; }`, false},
		{"construct template list", `CONSTRUCT { ?s a ?t ; ?p ?o } WHERE { ?s a ?t ; ?p ?o }`, false},
		{"update with object list", `INSERT DATA { <a> <b> <c> ; <d> <e> }`, true},
		{"stacked clear after list", `SELECT ?z WHERE { ?z a ?t ; ?p ?o } ; CLEAR DEFAULT`, true},
		// String literals.
		{"keyword in string", `SELECT ?s WHERE { ?s ?p "DELETE WHERE { ?s ?p ?o }; DROP ALL" }`, false},
		{"keyword in single-quoted string", `SELECT ?s WHERE { ?s ?p 'INSERT DATA; LOAD <http://x>' }`, false},
		{"escaped quote in string", `SELECT ?s WHERE { ?s ?p "say \"hi\"; CLEAR ALL" }`, false},
		{"backslash before closing quote", `SELECT ?s WHERE { ?s ?p "a\\" } ; CLEAR ALL`, true},
		{"long string with quotes", `SELECT ?s WHERE { ?s ?p """it's "quoted"; DROP ALL""" }`, false},
		{"long single-quoted string", `SELECT ?s WHERE { ?s ?p '''x '' ; SERVICE''' }`, false},
		{"keyword after a closed long string", `SELECT ?s WHERE { ?s ?p """x""" } ; DROP ALL`, true},
		{"hash in string", `SELECT ?s WHERE { ?s ?p "#1; INSERT" }`, false},
		{"language tag", `SELECT ?s WHERE { ?s ?p "delete"@en }`, false},
		// IRIs.
		{"keyword in IRI", `SELECT ?s WHERE { ?s <http://ex.org/delete;insert> ?o }`, false},
		{"service in IRI", `SELECT ?s WHERE { ?s a <http://ex.org/SERVICE#LOAD> }`, false},
		{"hash in IRI is not a comment", `SELECT ?s WHERE { ?s a <https://brickschema.org/schema/Brick#Sensor> } ; DROP ALL`, true},
		{"hash in IRI then comment", "SELECT ?s WHERE { ?s a <http://ex.org/x#y> } # ; DROP ALL", false},
		{"less-than in filter", `SELECT ?s WHERE { ?s ?p ?o FILTER(?o < 5 && ?o > 1) }`, false},
		{"less-than without spaces", `SELECT ?s WHERE { ?s ?p ?o FILTER(?o<5&&?o>1) }`, false},
		{"less-than then update", `SELECT ?s WHERE { ?s ?p ?o FILTER(?o<5) } ; CLEAR ALL`, true},
		{"fake IRI hiding an update", "SELECT ?n (COUNT(?s) AS ?c) WHERE { ?s ?p ?n } GROUP BY ?n HAVING(?c<1);CLEAR#>\nALL", true},
		{"fake IRI hiding a query", "SELECT ?n WHERE { ?s ?p ?n } HAVING(?n<1);ASK#>\n{}", true},
		{"IRI in prefix with semicolon", `PREFIX ex: <http://ex.org/a;b/> SELECT ?s WHERE { ?s ex:p ?o }`, false},
		{"IRI in values with semicolon", `SELECT ?x WHERE { VALUES (?x ?y) { (<http://ex.org/a;b> <http://ex.org/c;d>) } }`, false},
		{"pname named like keyword", `PREFIX drop: <http://ex.org/> SELECT ?s WHERE { ?s drop:load ?o ; drop:service ?x }`, false},
		{"variable named like keyword", `SELECT ?insert ?delete WHERE { ?insert ?load ?delete }`, false},
		// Comments.
		{"keyword in comment", "SELECT ?s WHERE { ?s ?p ?o } # DELETE WHERE { ?s ?p ?o }; DROP ALL", false},
		{"update after comment line", "SELECT ?s WHERE { ?s ?p ?o } # x\n; DROP ALL", true},
		{"comment hides the brace", "SELECT ?s WHERE { ?s ?p ?o # }\n} ; LOAD <http://evil>", true},
		// Function arguments.
		{"replace function", `SELECT (REPLACE(?s, "a", "b") AS ?r) WHERE { ?x ?p ?s }`, false},
		{"keyword in function string", `SELECT ?s WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?o), "SERVICE; LOAD")) }`, false},
		{"regex with semicolon", `SELECT ?s WHERE { ?s ?p ?o FILTER(REGEX(?o, "a;b", "i")) }`, false},
		{"service in filter exists", `SELECT ?s WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <http://x> { ?s ?p ?o } } }`, true},
		// FROM.
		{"from http graph", `SELECT * FROM <http://ex.org/g> WHERE { ?s ?p ?o }`, false},
		{"from named http graph", `SELECT * FROM NAMED <http://ex.org/g> WHERE { GRAPH ?g { ?s ?p ?o } }`, false},
		{"from http graph through prefix", `PREFIX g: <http://ex.org/graphs/> SELECT * FROM g:one WHERE { ?s ?p ?o }`, false},
		{"from file", `SELECT * FROM <file:///etc/passwd> WHERE { ?s ?p ?o }`, true},
		{"from file through prefix", `PREFIX f: <file:///etc/> SELECT * FROM f:passwd WHERE { ?s ?p ?o }`, true},
		{"from file through base", `BASE <file:///etc/> SELECT * FROM <passwd> WHERE { ?s ?p ?o }`, true},
		{"from relative IRI", `SELECT * FROM <data.ttl> WHERE { ?s ?p ?o }`, true},
		{"from relative IRI with http base", `BASE <http://ex.org/> SELECT * FROM <g1> WHERE { ?s ?p ?o }`, false},
	})
}
