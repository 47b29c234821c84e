//go:build !race

package sqltext

const raceEnabled = false
