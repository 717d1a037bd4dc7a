package jsonimage_test

// randomCases is how many inputs a random test of n inputs checks: n, or
// a quarter of n in a build with the race detector (CI's go test -race).
// TestMergeRandom and TestImageMatchesReflectiveWalk check pure functions
// in one goroutine, where the race detector can find nothing, and it
// makes them several times slower (the package: 51 s in CI's race build);
// the plain build (go test ./...) checks every input. Inputs are made from their index (fuzzfill.Input), so the
// race build checks the first quarter of the plain build's.
func randomCases(n int) int {
	if raceEnabled {
		return n / 4
	}
	return n
}
