package llm

import (
	"regexp"
	"strings"
	"sync"
)

// Languages whose queries Extract knows, with the fence info strings that
// name them.
var languageFences = map[string][]string{
	"sql":    {"sql", "sqlite", "postgresql", "postgres", "mysql", "duckdb", "tsql", "plsql"},
	"cypher": {"cypher", "neo4j", "opencypher", "gql"},
	"sparql": {"sparql", "rq"},
	"pandas": {"python", "py", "pandas"},
}

// Statement starts that mark a bare query in prose. The patterns here are
// compiled at first use, not at init (every command links this package).
var queryStarts = sync.OnceValue(func() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		"sql":    regexp.MustCompile(`(?im)^\s*(SELECT|WITH)\b`),
		"cypher": regexp.MustCompile(`(?im)^\s*(MATCH|OPTIONAL\s+MATCH|WITH|UNWIND|CALL|RETURN)\b`),
		"sparql": regexp.MustCompile(`(?im)^\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b`),
		"pandas": regexp.MustCompile(`(?m)^\s*(import |from |df|result\s*=)`),
	}
})

var (
	fenceRe = lazyRegexp("(?s)```[ \\t]*([A-Za-z0-9_+-]*)[^\\n]*\\n(.*?)(?:```|$)")
	thinkRe = lazyRegexp(`(?is)<think>.*?</think>`)
	labelRe = lazyRegexp(`(?i)^\s*(sql|cypher|sparql|query|answer)\s*:\s*`)
)

// lazyRegexp returns a function compiling expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Extract returns the query in a completion for language (sql, cypher,
// sparql, pandas): the last fenced block labelled with the language, else
// the last unlabelled fenced block, else the last fenced block of any
// label, else a bare query — from the first line that starts a statement
// to the end of that statement (a line ending in ";" or a blank line).
// Reasoning in <think> tags is skipped. With nothing recognisable it
// returns the trimmed text itself, so the engine reports why it is not a
// query.
func Extract(text, language string) string {
	if strings.IndexByte(text, '<') >= 0 { // no <think> without a '<'
		text = thinkRe().ReplaceAllString(text, "")
	}
	lang := strings.ToLower(language)
	names := languageFences[lang]
	var labelled, unlabelled, other string
	var fences [][]string
	if strings.Contains(text, "```") { // no fence without one
		if f, ok := oneFence(text); ok {
			fences = [][]string{f}
		} else {
			fences = fenceRe().FindAllStringSubmatch(text, -1)
		}
	}
	for _, m := range fences {
		info, body := strings.ToLower(m[1]), strings.TrimSpace(m[2])
		if body == "" {
			continue
		}
		switch {
		case info == "":
			unlabelled = body
		case contains(names, info):
			labelled = body
		default:
			other = body
		}
	}
	for _, q := range []string{labelled, unlabelled, other} {
		if q != "" {
			return q
		}
	}
	if re := queryStarts()[lang]; re != nil {
		if loc := re.FindStringIndex(text); loc != nil {
			return bareQuery(text[loc[0]:])
		}
	}
	return strings.TrimSpace(labelRe().ReplaceAllString(strings.TrimSpace(text), ""))
}

// oneFence is fenceRe's FindAllStringSubmatch for the completion models
// send most — one fenced block, opened and closed once — without the
// regexp: ok is false for anything else (it then runs).
func oneFence(text string) (m []string, ok bool) {
	open := strings.Index(text, "```")
	if open < 0 {
		return nil, false
	}
	rest := text[open+3:]
	nl := strings.IndexByte(rest, '\n')
	close := strings.Index(rest, "```")
	if nl < 0 || close < 0 || close < nl || strings.Contains(rest[close+3:], "```") {
		return nil, false
	}
	// ```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```
	i := 0
	for i < nl && (rest[i] == ' ' || rest[i] == '\t') {
		i++
	}
	j := i
	for j < nl && isFenceLabel(rest[j]) {
		j++
	}
	return []string{text[open : open+3+close+3], rest[i:j], rest[nl+1 : close]}, true
}

func isFenceLabel(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '+' || c == '-'
}

// bareQuery cuts a statement out of prose: up to and including the first
// line ending in ";" or up to the first blank line.
func bareQuery(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" && len(out) > 0 {
			break
		}
		out = append(out, l)
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			break
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
