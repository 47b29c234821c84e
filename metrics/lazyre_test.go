package metrics

import (
	"regexp"
	"testing"
)

// Every package-level pattern compiles (they are compiled lazily, so a bad
// one would otherwise panic only when its metric first runs).
func TestLazyRegexpsCompile(t *testing.T) {
	if len(allLazyRegexps) < 40 {
		t.Fatalf("only %d lazy regexps registered", len(allLazyRegexps))
	}
	for _, l := range allLazyRegexps {
		if _, err := regexp.Compile(l.src); err != nil {
			t.Errorf("%q: %v", l.src, err)
		}
		if l.get().String() != l.src {
			t.Errorf("%q compiled as %q", l.src, l.get().String())
		}
	}
}
