// Package race tells tests whether they run under the race detector (CI
// runs every test with go test -race), so that they can keep to what holds
// there: allocation budgets (the detector drops sync.Pool's items at
// random) and the counts of random tests (it makes them several times
// slower).
package race

// Cases is how many cases a random property test of n cases runs: n, or a
// quarter of n under the race detector. It is for tests of pure functions
// in one goroutine, where the detector can find nothing; the plain build
// (go test ./...) runs every case. A test whose cases are made from a fixed
// seed or from their index runs the first quarter of the plain build's
// under the detector, the same ones on every run.
func Cases(n int) int {
	if Enabled {
		return n / 4
	}
	return n
}
