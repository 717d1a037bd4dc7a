package patch

// randomRounds is how many cases a random property test of n cases runs:
// n, or a quarter of n in a build with the race detector (CI's go test
// -race). The tests that use it check pure functions in one goroutine,
// where the race detector can find nothing, and it makes them about 7
// times slower (TestAppliedSetShapeRandom: 10 s, 74 s under -race); the
// plain build (go test ./...) runs them in full. Their seeds are fixed:
// each build runs the same cases on every run.
func randomRounds(n int) int {
	if raceEnabled {
		return n / 4
	}
	return n
}
