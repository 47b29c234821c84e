package spider

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Tokenize splits a query the way process_sql.tokenize does: every single
// quote becomes a double quote, each quoted span (pairs of double quotes,
// counted from the end) is kept whole as one value token with its original
// case, the rest goes through nltk.word_tokenize (NLTKWordTokenizer on one
// line, see wordTokenize) and is lower-cased, and "!", ">" or "<" followed by
// a "=" token are glued into "!=", ">=", "<=". An odd number of quotes is an
// error, as process_sql's assertion is. An apostrophe inside a string
// literal therefore either fails ("it's") or silently re-pairs the quotes.
func Tokenize(query string) ([]string, error) {
	s := []rune(strings.ReplaceAll(query, "'", "\""))
	var quotes []int
	for i, r := range s {
		if r == '"' {
			quotes = append(quotes, i)
		}
	}
	if len(quotes)%2 != 0 {
		return nil, fmt.Errorf("unexpected quote")
	}
	vals := map[string]string{}
	for i := len(quotes) - 1; i >= 0; i -= 2 {
		q1, q2 := quotes[i-1], quotes[i]
		val := string(s[q1 : q2+1])
		key := fmt.Sprintf("__val_%d_%d__", q1, q2)
		ns := make([]rune, 0, len(s))
		ns = append(ns, s[:q1]...)
		ns = append(ns, []rune(key)...)
		ns = append(ns, s[q2+1:]...)
		s = ns
		vals[key] = val
	}
	words := wordTokenize(string(s))
	toks := make([]string, len(words))
	for i, w := range words {
		toks[i] = strings.ToLower(w)
		if v, ok := vals[toks[i]]; ok {
			toks[i] = v
		}
	}
	// Glue "!", ">", "<" with a following "=", scanning from the right as
	// process_sql does (Python's toks[-1] when "=" is the first token).
	var eqs []int
	for i, t := range toks {
		if t == "=" {
			eqs = append(eqs, i)
		}
	}
	for k := len(eqs) - 1; k >= 0; k-- {
		eq := eqs[k]
		if len(toks) == 0 {
			break
		}
		pi := pyIndex(eq-1, len(toks))
		pre := toks[pi]
		if pre == "!" || pre == ">" || pre == "<" {
			var nt []string
			nt = append(nt, toks[:pyIndex(eq-1, len(toks))]...)
			nt = append(nt, pre+"=")
			if eq+1 <= len(toks) {
				nt = append(nt, toks[eq+1:]...)
			}
			toks = nt
		}
	}
	return toks, nil
}

// pyIndex maps a possibly negative Python index onto [0, n).
func pyIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	if i < 0 {
		i = 0
	}
	return i
}

// NLTK 3.8 NLTKWordTokenizer rules (nltk/tokenize/destructive.py), in order.
// Python's \d and \s are Unicode-aware; the classes below say so explicitly.
// The quote rules that need an apostrophe or a double quote are kept for
// completeness although Tokenize never passes either character.
const (
	pyWS    = `\t\n\v\f\r \x1c-\x1f\x85\p{Z}`
	closers = `\]\)}>"'»”’ `
)

type subst struct {
	re   *regexp.Regexp
	repl string
}

// tokenizer holds the word tokenizer's patterns, compiled at first use:
// every command links this package, few tokenize.
type tokenizer struct {
	startingQuotes, punctuation1, endingQuotes []subst
	parensBrackets, doubleDashes               subst
	contractions2, contractions3               []*regexp.Regexp
	wanna, apostropheWord                      *regexp.Regexp
}

var tok = sync.OnceValue(func() *tokenizer {
	return &tokenizer{
		startingQuotes: []subst{
			{regexp.MustCompile("([«“‘„]|[`]+)"), " $1 "},
			{regexp.MustCompile(`^"`), "``"},
			{regexp.MustCompile("(``)"), " $1 "},
			{regexp.MustCompile(`([ \(\[{<])("|'{2})`), "$1 `` "},
		},
		punctuation1: []subst{
			{regexp.MustCompile(`([^\.])(\.)([` + closers + `]*)[` + pyWS + `]*$`), "$1 $2 $3 "},
			{regexp.MustCompile(`([:,])([^\p{Nd}])`), " $1 $2"},
			{regexp.MustCompile(`([:,])$`), " $1 "},
			{regexp.MustCompile(`\.{2,}`), " $0 "},
			{regexp.MustCompile(`[;@#$%&]`), " $0 "},
			{regexp.MustCompile(`([^\.])(\.)([\]\)}>"']*)[` + pyWS + `]*$`), "$1 $2$3 "},
			{regexp.MustCompile(`[?!]`), " $0 "},
			{regexp.MustCompile(`([^'])' `), "$1 ' "},
			{regexp.MustCompile(`[*]`), " $0 "},
		},
		parensBrackets: subst{regexp.MustCompile(`[\]\[\(\)\{\}\<\>]`), " $0 "},
		doubleDashes:   subst{regexp.MustCompile(`--`), " -- "},
		endingQuotes: []subst{
			{regexp.MustCompile("([»”’])"), " $1 "},
			{regexp.MustCompile(`''`), " '' "},
			{regexp.MustCompile(`"`), " '' "},
			{regexp.MustCompile(`([^' ])('[sS]|'[mM]|'[dD]|') `), "$1 $2 "},
			{regexp.MustCompile(`([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `), "$1 $2 "},
		},
		contractions2: []*regexp.Regexp{
			regexp.MustCompile(`(?i)\b(can)(not)\b`),
			regexp.MustCompile(`(?i)\b(d)('ye)\b`),
			regexp.MustCompile(`(?i)\b(gim)(me)\b`),
			regexp.MustCompile(`(?i)\b(gon)(na)\b`),
			regexp.MustCompile(`(?i)\b(got)(ta)\b`),
			regexp.MustCompile(`(?i)\b(lem)(me)\b`),
			regexp.MustCompile(`(?i)\b(more)('n)\b`),
		},
		wanna: regexp.MustCompile(`(?i)\b(wan)(na)`),
		contractions3: []*regexp.Regexp{
			regexp.MustCompile(`(?i) ('t)(is)\b`),
			regexp.MustCompile(`(?i) ('t)(was)\b`),
		},
		apostropheWord: regexp.MustCompile(`(?i)(')(\w)\b`),
	}
})

// wordTokenize is nltk.word_tokenize(text, preserve_line=True): NLTK 3.8's
// NLTKWordTokenizer on the whole text as one sentence. (Without
// preserve_line NLTK first splits sentences with the punkt model; the
// reference outputs in ../shared/data/spider were produced with
// preserve_line=True and reproduce byte for byte.)
func wordTokenize(text string) []string {
	t := tok()
	for _, s := range t.startingQuotes {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	text = apostropheRule(text)
	for _, s := range t.punctuation1 {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	text = t.parensBrackets.re.ReplaceAllString(text, t.parensBrackets.repl)
	text = t.doubleDashes.re.ReplaceAllString(text, t.doubleDashes.repl)
	text = " " + text + " "
	for _, s := range t.endingQuotes {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	for _, re := range t.contractions2 {
		text = re.ReplaceAllString(text, " $1 $2 ")
	}
	text = wannaRule(text)
	for _, re := range t.contractions3 {
		text = re.ReplaceAllString(text, " $1 $2 ")
	}
	return strings.FieldsFunc(text, pyIsSpace)
}

// apostropheRule is `(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b` → `\1 \2`, written
// out because RE2 has no look-ahead.
func apostropheRule(text string) string {
	if !strings.Contains(text, "'") {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range tok().apostropheWord.FindAllStringSubmatchIndex(text, -1) {
		rest := strings.ToLower(text[m[0]+1:])
		skip := false
		for _, p := range []string{"re", "ve", "ll", "m", "t", "s", "d", "n"} {
			if strings.HasPrefix(rest, p) {
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		b.WriteString(text[last:m[0]])
		b.WriteString("' ")
		b.WriteString(text[m[4]:m[5]])
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// wannaRule is `(?i)\b(wan)(na)(?=\s)` → ` \1 \2 `.
func wannaRule(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range tok().wanna.FindAllStringSubmatchIndex(text, -1) {
		if m[1] >= len(text) {
			continue
		}
		next := []rune(text[m[1]:])[0]
		if !pyIsSpace(next) {
			continue
		}
		b.WriteString(text[last:m[0]])
		b.WriteString(" " + text[m[2]:m[3]] + " " + text[m[4]:m[5]] + " ")
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// pyIsSpace is Python's str.isspace for one character (what str.split uses).
func pyIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return unicode.Is(unicode.Z, r)
}
