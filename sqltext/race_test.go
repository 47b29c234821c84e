//go:build race

package sqltext

// raceEnabled: sync.Pool drops values at random under the race detector.
const raceEnabled = true
