//go:build race

package suite

// RaceEnabled reports whether the tests run under the race detector:
// the tests that build whole suites of the shared data (minutes each,
// five to ten times that instrumented) then skip, and `make test` runs
// them again without it (the Makefile's test target).
const RaceEnabled = true
