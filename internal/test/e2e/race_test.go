//go:build race

package e2e

// raceEnabled: the build has the race detector (CI's go test -race).
const raceEnabled = true
