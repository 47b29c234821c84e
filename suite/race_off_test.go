//go:build !race

package suite

// RaceEnabled: see race_on_test.go.
const RaceEnabled = false
