package metrics

// String similarity between a predicted and a gold query (Metrics Reference Documentation, “5. String Similarity Metrics”):
// BLEU, ROUGE-L, Jaro-Winkler and token Jaccard, each computed exactly as
// the reference implementation the document's system called does, on the token
// stream kg-axel's cypher_metrics.py builds (docs/metrics.md):
//
//   - bleu: kg-axel's format_rouge_bleu (spaces around ( ) : { } -> <- - [ ]
//     , . * / < >, whitespace collapsed), split on whitespace, then nltk 3.8
//     sentence_bleu with its defaults: 4-gram uniform weights, no smoothing
//     (method0: a zero n-gram precision becomes sys.float_info.min, so the
//     score is tiny but not 0), 0 when no unigram matches.
//   - rouge_l: rouge-score's RougeScorer(["rougeL"], use_stemmer=True) as
//     kg-axel calls it: lower-case, every run of [^a-z0-9] is a separator,
//     nltk's Porter stemmer on tokens longer than 3, LCS F1. Either side
//     without tokens gives 0, both empty included.
//   - jaro_winkler: jellyfish/textdistance Jaro-Winkler (prefix weight 0.1,
//     boost only above 0.7, prefix capped at 4) on code points of kg-axel's
//     format_jaccard_jaro text (spaced specials, Cypher keywords upper-cased).
//     Both strings empty gives 1 (textdistance, which kg-axel calls; jellyfish
//     gives 0).
//   - jaccard_query: set Jaccard over the whitespace tokens of
//     format_jaccard_jaro(q, sub=True) (specials removed, keywords
//     upper-cased, other tokens case-sensitive); both empty gives 1.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalflow/evalflow/item"
)

// Text formats a metric option can name: FormatKGAxel (the default) runs
// kg-axel's query formatting first; FormatRaw uses the text as it is.
const (
	FormatKGAxel = "kg_axel"
	FormatRaw    = "raw"
)

// kgKeywords are the words kg-axel upper-cases, in its order.
var kgKeywords = []string{
	"MATCH", "WHERE", "RETURN", "OPTIONAL", "MERGE", "DELETE", "CREATE",
	"ORDER BY", "LIMIT", "COUNT", "DISTINCT", "EXISTS", "IN", "AND", "OR",
	"MIN", "MAX", "AVG", "UNWIND", "WITH", "SET", "REMOVE", "FILTER",
	"COLLECT", "AS", "FOREACH", "REDUCE", "CASE", "toFloat", "NOT", "NULL",
	"THEN", "ELSE", "END", "TRUE", "FALSE", "DESC", "ASC", "IS", "WHEN", "SIZE",
}

// isPySpace reports whether Python's str.isspace (and so re's \s and
// str.split()) treats r as whitespace: Go's unicode.IsSpace plus the
// information separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// isPyWord reports whether r is in Python re's Unicode \w.
func isPyWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// collapseSpace is Python's re.sub(r"\s+", " ", s).strip().
func collapseSpace(s string) string {
	return string(appendCollapsed(make([]byte, 0, len(s)), s))
}

// appendCollapsed appends s's whitespace-separated fields (isPySpace) to b,
// joined by single spaces: strings.Join(strings.FieldsFunc(s, isPySpace),
// " ") without the slice of fields.
func appendCollapsed(b []byte, s string) []byte {
	start := len(b)
	inField := false
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if isPySpace(r) {
			inField = false
		} else {
			if !inField && len(b) > start {
				b = append(b, ' ')
			}
			inField = true
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// specialLen returns the byte length of the match of kg-axel's
// special-character pattern, `\(|\)|:|\{|\}|->|<-|-|\[|\]|,|\.|\*|/|<|>`, at
// the start of s (0: none). The pattern's alternatives are ASCII and tried in its order,
// so "->" and "<-" win over "-" and "<" as leftmost-first does.
func specialLen(s string) int {
	switch s[0] {
	case '(', ')', ':', '{', '}', '[', ']', ',', '.', '*', '/', '>':
		return 1
	case '-':
		if len(s) > 1 && s[1] == '>' {
			return 2
		}
		return 1
	case '<':
		if len(s) > 1 && s[1] == '-' {
			return 2
		}
		return 1
	}
	return 0
}

// replaceSpecials is that pattern's ReplaceAllString(q, " $0 ") (keep) or
// ReplaceAllString(q, " ") without the regexp: the specials are
// ASCII, and a byte of a multi-byte or invalid sequence never matches one,
// as it never matches in the regexp's rune-wise scan.
func replaceSpecials(q string, keep bool) string {
	var b []byte
	last := 0
	for i := 0; i < len(q); {
		n := specialLen(q[i:])
		if n == 0 {
			i++
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(q)+16)
		}
		b = append(b, q[last:i]...)
		b = append(b, ' ')
		if keep {
			b = append(b, q[i:i+n]...)
			b = append(b, ' ')
		}
		i += n
		last = i
	}
	if b == nil {
		return q
	}
	return string(append(b, q[last:]...))
}

// FormatQuery is kg-axel's format_rouge_bleu: a space on each side of every
// special character, whitespace collapsed and trimmed.
func FormatQuery(q string) string {
	return collapseSpace(replaceSpecials(q, true))
}

// FormatQueryKeywords is kg-axel's format_jaccard_jaro: FormatQuery (or, with
// removeSpecial, the special characters replaced by spaces) followed by
// upper-casing the Cypher keywords wherever they stand as whole words,
// matched case-insensitively as Python's re does.
func FormatQueryKeywords(q string, removeSpecial bool) string {
	return upperKeywords(collapseSpace(replaceSpecials(q, !removeSpecial)))
}

// kgKeywordsLower are kgKeywords in lower case, for upperKeywordsASCII.
var kgKeywordsLower = func() []string {
	out := make([]string, len(kgKeywords))
	for i, k := range kgKeywords {
		out[i] = strings.ToLower(k)
	}
	return out
}()

// isASCIIWord is isPyWord for an ASCII byte.
func isASCIIWord(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// upperKeywords upper-cases each whole-word, case-insensitive occurrence of
// a kgKeywords entry, scanning left to right like re.sub.
func upperKeywords(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return upperKeywordsRunes(s)
		}
	}
	return upperKeywordsASCII(s)
}

// upperKeywordsASCII is upperKeywords for an ASCII s: no rune decoding, and
// Python's case folding of ASCII is ASCII's. It returns s itself when
// nothing changes.
func upperKeywordsASCII(s string) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); {
		if !isASCIIWord(s[i]) || (i > 0 && isASCIIWord(s[i-1])) {
			i++
			continue
		}
		n := 0
		for _, kw := range kgKeywordsLower {
			if len(kw) > len(s)-i || !asciiFoldPrefix(s[i:], kw) {
				continue
			}
			if j := i + len(kw); j < len(s) && isASCIIWord(s[j]) {
				continue
			}
			n = len(kw)
			break
		}
		if n == 0 {
			i++
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:i]...)
		for _, c := range []byte(s[i : i+n]) {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
		}
		i += n
		last = i
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// asciiFoldPrefix reports whether s starts with the lower-case ASCII kw,
// ASCII letters compared case-insensitively.
func asciiFoldPrefix(s, kw string) bool {
	for j := 0; j < len(kw); j++ {
		c := s[j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[j] {
			return false
		}
	}
	return true
}

// upperKeywordsRunes is upperKeywords for any s, rune by rune.
func upperKeywordsRunes(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	prev := rune(-1) // rune before i; -1 at the start
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isPyWord(r) && (prev < 0 || !isPyWord(prev)) {
			if n := matchKeyword(s[i:]); n > 0 {
				b.WriteString(strings.ToUpper(s[i : i+n]))
				last, _ := utf8.DecodeLastRuneInString(s[i : i+n])
				prev = last
				i += n
				continue
			}
		}
		b.WriteString(s[i : i+size])
		prev = r
		i += size
	}
	return b.String()
}

// matchKeyword returns the byte length of the first keyword that s starts
// with case-insensitively and that ends at a word boundary, or 0.
func matchKeyword(s string) int {
	for _, kw := range kgKeywords {
		j := 0 // byte offset in s
		ok := true
		for _, k := range kw {
			if j >= len(s) {
				ok = false
				break
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if !foldEqualPy(k, r) {
				ok = false
				break
			}
			j += size
		}
		if !ok {
			continue
		}
		if j < len(s) {
			if next, _ := utf8.DecodeRuneInString(s[j:]); isPyWord(next) {
				continue
			}
		}
		return j
	}
	return 0
}

// foldEqualPy reports whether r matches the ASCII pattern character k under
// Python's re.IGNORECASE: simple lower-case equality plus sre's extra
// equivalences (ſ~s, ı~i; the Kelvin sign lower-cases to k already).
func foldEqualPy(k, r rune) bool {
	lk := unicode.ToLower(k)
	if unicode.ToLower(r) == lk {
		return true
	}
	return (lk == 's' && r == 'ſ') || (lk == 'i' && r == 'ı')
}

// BLEUTokens returns the tokens BLEU compares: kg-axel's FormatQuery split
// on whitespace, or with format FormatRaw a plain whitespace split.
func BLEUTokens(q, format string) []string {
	if format == FormatRaw {
		return strings.FieldsFunc(q, isPySpace)
	}
	return strings.FieldsFunc(FormatQuery(q), isPySpace)
}

// smallestNormal is Python's sys.float_info.min, which nltk's method0
// substitutes for a zero n-gram precision.
const smallestNormal = 0x1p-1022

// SentenceBLEU is nltk 3.8 sentence_bleu([ref], hyp) with its defaults:
// weights (¼,¼,¼,¼), no smoothing, no auto re-weighting. It is 0 when no
// unigram matches (empty hypothesis or reference included); a higher order
// with no match contributes log(sys.float_info.min), so a short or partial
// match scores a tiny positive number, as nltk does.
func SentenceBLEU(ref, hyp []string) float64 {
	const maxN = 4
	if len(hyp) == 0 {
		return 0
	}
	var num, den [maxN + 1]int
	for n := 1; n <= maxN; n++ {
		num[n], den[n] = modifiedPrecision(ref, hyp, n)
	}
	if num[1] == 0 {
		return 0
	}
	// Brevity penalty against the single reference.
	var bp float64
	r, c := len(ref), len(hyp)
	if c > r {
		bp = 1
	} else {
		bp = math.Exp(1 - float64(r)/float64(c))
	}
	terms := make([]float64, 0, maxN)
	for n := 1; n <= maxN; n++ {
		p := smallestNormal
		if num[n] != 0 {
			p = float64(num[n]) / float64(den[n])
		}
		terms = append(terms, 0.25*math.Log(p))
	}
	return bp * math.Exp(fsum(terms))
}

// modifiedPrecision is nltk's clipped n-gram count and max(1, total).
func modifiedPrecision(ref, hyp []string, n int) (num, den int) {
	if len(hyp) < n {
		return 0, 1
	}
	counts := ngramCounts(hyp, n)
	var refCounts map[string]int
	if len(ref) >= n {
		refCounts = ngramCounts(ref, n)
	}
	total := 0
	for g, c := range counts {
		total += c
		num += min(c, refCounts[g])
	}
	return num, max(1, total)
}

func ngramCounts(toks []string, n int) map[string]int {
	m := make(map[string]int, len(toks))
	for i := 0; i+n <= len(toks); i++ {
		m[strings.Join(toks[i:i+n], "\x00")]++
	}
	return m
}

// fsum is Python's math.fsum: a correctly rounded sum (Shewchuk's partials).
func fsum(xs []float64) float64 {
	var partials []float64
	for _, x := range xs {
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = append(partials[:i], x)
	}
	s := 0.0
	for _, p := range partials {
		s += p
	}
	return s
}

// RougeTokens is rouge-score's tokenize: lower-case, every run of characters
// outside [a-z0-9] is a separator, and with stem the tokens longer than three
// characters go through nltk's Porter stemmer (NLTK_EXTENSIONS mode).
func RougeTokens(text string, stem bool) []string {
	// Python's str.lower maps U+0130 to "i" + U+0307; Go's maps it to "i".
	text = strings.ReplaceAll(text, "\u0130", "i\u0307")
	text = strings.ToLower(text)
	toks := strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	if stem {
		for i, t := range toks {
			if len(t) > 3 {
				toks[i] = porterStem(t)
			}
		}
	}
	return toks
}

// RougeL is rouge-score's _score_lcs(target, prediction): precision =
// LCS/|prediction|, recall = LCS/|target|, F1 their harmonic mean. Either
// side empty gives (0, 0, 0).
func RougeL(target, prediction []string) (precision, recall, f1 float64) {
	if len(target) == 0 || len(prediction) == 0 {
		return 0, 0, 0
	}
	l := float64(lcsLen(target, prediction))
	precision = l / float64(len(prediction))
	recall = l / float64(len(target))
	if precision+recall > 0 {
		f1 = 2 * precision * recall / (precision + recall)
	}
	return precision, recall, f1
}

// lcsLen is the length of the longest common subsequence, in O(len(b))
// memory.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// JaroWinkler is the Jaro-Winkler similarity of jellyfish 0.8 and
// textdistance 4.5 over Unicode code points: match window
// max(len)/2-1 floored at 0, greedy matching, half the out-of-order matches
// as transpositions, and a Winkler boost of ℓ·0.1·(1-jaro) with the common
// prefix ℓ capped at 4, applied only when jaro > 0.7. It is case and
// whitespace sensitive. One empty string gives 0; both empty gives 1
// (textdistance; jellyfish returns 0 there).
func JaroWinkler(a, b string) float64 {
	if a == "" && b == "" {
		return 1
	}
	return jaroWinkler([]rune(a), []rune(b))
}

func jaroWinkler(s1, s2 []rune) float64 {
	l1, l2 := len(s1), len(s2)
	if l1 == 0 || l2 == 0 {
		return 0
	}
	window := max(l1, l2)/2 - 1
	if window < 0 {
		window = 0
	}
	f1 := make([]bool, l1)
	f2 := make([]bool, l2)
	common := 0
	for i, c := range s1 {
		lo := max(0, i-window)
		hi := min(i+window, l2-1)
		for j := lo; j <= hi; j++ {
			if !f2[j] && s2[j] == c {
				f1[i], f2[j] = true, true
				common++
				break
			}
		}
	}
	if common == 0 {
		return 0
	}
	trans, k := 0, 0
	for i := range s1 {
		if !f1[i] {
			continue
		}
		j := k
		for ; j < l2; j++ {
			if f2[j] {
				k = j + 1
				break
			}
		}
		if s1[i] != s2[j] {
			trans++
		}
	}
	trans /= 2
	m := float64(common)
	w := (m/float64(l1) + m/float64(l2) + (m-float64(trans))/m) / 3
	if w > 0.7 {
		p, lim := 0, min(l1, l2, 4)
		for p < lim && s1[p] == s2[p] {
			p++
		}
		if p > 0 {
			w += float64(p) * 0.1 * (1 - w)
		}
	}
	return w
}

// JaccardTokens returns the token set jaccard_query compares: the words of
// kg-axel's format_jaccard_jaro(q, sub=True), or with FormatRaw the
// whitespace-separated words of q.
func JaccardTokens(q, format string) map[string]struct{} {
	var words []string
	if format == FormatRaw {
		words = strings.FieldsFunc(q, isPySpace)
	} else {
		words = strings.FieldsFunc(FormatQueryKeywords(q, true), isPySpace)
	}
	set := make(map[string]struct{}, len(words))
	for _, w := range words {
		set[w] = struct{}{}
	}
	return set
}

// Jaccard is |a ∩ b| / |a ∪ b| over two sets; two empty sets give 1.
func Jaccard[K comparable](a, b map[K]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// QueryJaccard is jaccard_query's value for two query texts.
func QueryJaccard(gold, pred, format string) float64 {
	return Jaccard(JaccardTokens(gold, format), JaccardTokens(pred, format))
}

// QueryJaroWinkler is jaro_winkler's value for two query texts.
func QueryJaroWinkler(gold, pred, format string) float64 {
	if format != FormatRaw {
		gold, pred = FormatQueryKeywords(gold, false), FormatQueryKeywords(pred, false)
	}
	return JaroWinkler(gold, pred)
}

// QueryBLEU is bleu's value for two query texts (gold is the reference).
func QueryBLEU(gold, pred, format string) float64 {
	return SentenceBLEU(BLEUTokens(gold, format), BLEUTokens(pred, format))
}

// QueryRougeL is rouge_l's (precision, recall, F1) for two query texts.
func QueryRougeL(gold, pred string, stem bool) (precision, recall, f1 float64) {
	return RougeL(RougeTokens(gold, stem), RougeTokens(pred, stem))
}

// errNoAttempt is the failure of a query metric on an item with no attempt.
var errNoAttempt = errors.New("item has no attempt to score")

// queryPair returns the final query of sample 0 and the item's gold query.
// ok is false with a score to return when the metric cannot apply: no gold
// (Null) or no attempt (failed).
func queryPair(name string, rec *item.Record) (gold, pred string, s item.Score, ok bool) {
	if rec == nil {
		return "", "", Failed(name, errors.New("no record")), false
	}
	if rec.Item.Gold == "" {
		return "", "", item.Score{Name: name, Null: true}, false
	}
	a := rec.Final()
	if a == nil {
		return "", "", Failed(name, errNoAttempt), false
	}
	return rec.Item.Gold, a.Query, item.Score{}, true
}

// textFormatOption reads and checks the "format" option.
func textFormatOption(o Options) (string, error) {
	f, err := o.String("format", FormatKGAxel)
	if err != nil {
		return "", err
	}
	if f != FormatKGAxel && f != FormatRaw {
		return "", &ChoiceError{Option: "format", Value: f, What: "a format", Valid: []string{FormatKGAxel, FormatRaw}}
	}
	return f, nil
}

// queryTextMetric is an item metric comparing the final query with the gold
// query through fn.
type queryTextMetric struct {
	info Info
	fn   func(gold, pred string) float64
}

func (m *queryTextMetric) Info() Info { return m.info }

func (m *queryTextMetric) Score(_ context.Context, in Input) item.Score {
	gold, pred, s, ok := queryPair(m.info.Name, in.Record)
	if !ok {
		return s
	}
	return item.Score{Name: m.info.Name, Value: m.fn(gold, pred)}
}

var (
	bleuInfo = Info{
		Name:        "bleu",
		Description: "Sentence BLEU (4-gram, no smoothing) of the final query against the gold query.",
		Reference:   "*Metrics Reference Documentation*, “5.1 BLEU Score”; Papineni et al. 2002; nltk 3.8 sentence_bleu on kg-axel format_rouge_bleu tokens",
		Inputs:      "Record.Final().Query, Record.Item.Gold",
		Range:       "[0,1]",
	}
	rougeLInfo = Info{
		Name:        "rouge_l",
		Description: "ROUGE-L (LCS) F1 of the final query against the gold query, rouge-score tokens.",
		Reference:   "*Metrics Reference Documentation*, “5.2 ROUGE-L”; Lin 2004; rouge-score RougeScorer(['rougeL'], use_stemmer=True) as kg-axel calls it",
		Inputs:      "Record.Final().Query, Record.Item.Gold",
		Range:       "[0,1]",
	}
	jaroWinklerInfo = Info{
		Name:        "jaro_winkler",
		Description: "Jaro-Winkler character similarity of the final query and the gold query.",
		Reference:   "*Metrics Reference Documentation*, “5.3 Jaro-Winkler Similarity”; Winkler 1990; jellyfish/textdistance jaro_winkler on kg-axel format_jaccard_jaro text",
		Inputs:      "Record.Final().Query, Record.Item.Gold",
		Range:       "[0,1]",
	}
	jaccardQueryInfo = Info{
		Name:        "jaccard_query",
		Description: "Jaccard similarity of the word sets of the final query and the gold query.",
		Reference:   "*Metrics Reference Documentation*, “5.4 Jaccard Similarity”; Jaccard 1912; kg-axel jaccard_similarity_cypher",
		Inputs:      "Record.Final().Query, Record.Item.Gold",
		Range:       "[0,1]",
	}
)

func init() {
	Register(Def{
		Info:    bleuInfo,
		Options: []string{"format"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := textFormatOption(o)
			if err != nil {
				return nil, err
			}
			return &queryTextMetric{info: bleuInfo, fn: func(g, p string) float64 { return QueryBLEU(g, p, f) }}, nil
		},
	})
	Register(Def{
		Info:    rougeLInfo,
		Options: []string{"stemmer", "measure"},
		NewItem: func(o Options) (ItemMetric, error) {
			stem, err := o.Bool("stemmer", true)
			if err != nil {
				return nil, err
			}
			measure, err := o.String("measure", "f1")
			if err != nil {
				return nil, err
			}
			var pick func(p, r, f float64) float64
			switch measure {
			case "f1":
				pick = func(_, _, f float64) float64 { return f }
			case "precision":
				pick = func(p, _, _ float64) float64 { return p }
			case "recall":
				pick = func(_, r, _ float64) float64 { return r }
			default:
				return nil, fmt.Errorf("option \"measure\" must be \"f1\", \"precision\" or \"recall\", got %q", measure)
			}
			return &queryTextMetric{info: rougeLInfo, fn: func(g, p string) float64 { return pick(QueryRougeL(g, p, stem)) }}, nil
		},
	})
	Register(Def{
		Info:    jaroWinklerInfo,
		Options: []string{"format"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := textFormatOption(o)
			if err != nil {
				return nil, err
			}
			return &queryTextMetric{info: jaroWinklerInfo, fn: func(g, p string) float64 { return QueryJaroWinkler(g, p, f) }}, nil
		},
	})
	Register(Def{
		Info:    jaccardQueryInfo,
		Options: []string{"format"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := textFormatOption(o)
			if err != nil {
				return nil, err
			}
			return &queryTextMetric{info: jaccardQueryInfo, fn: func(g, p string) float64 { return QueryJaccard(g, p, f) }}, nil
		},
	})
}
