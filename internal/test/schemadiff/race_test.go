//go:build race

package schemadiff_test

// The race detector makes the engines several times slower; the
// differential tests then compare fewer generated cases (CI runs every
// test with -race, and without it in the fuzz step).
func init() { raceEnabled = true }
