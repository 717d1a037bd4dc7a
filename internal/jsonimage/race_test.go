//go:build race

package jsonimage_test

// raceEnabled: the build has the race detector (CI's go test -race).
const raceEnabled = true
