package metrics

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled when first used rather than
// at package init: every command links every metric (`evalflow version`
// included), few runs use most of them. It has the methods of
// *regexp.Regexp the package calls; an invalid pattern panics at first use,
// and TestLazyRegexpsCompile compiles every one.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// allLazyRegexps lists every lazyRegexp made at package level (for the
// test that compiles them all).
var allLazyRegexps []*lazyRegexp

func lazyRE(src string) *lazyRegexp {
	l := &lazyRegexp{src: src}
	allLazyRegexps = append(allLazyRegexps, l)
	return l
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRegexp) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRegexp) FindString(s string) string           { return l.get().FindString(s) }
func (l *lazyRegexp) FindStringIndex(s string) []int       { return l.get().FindStringIndex(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
func (l *lazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }
