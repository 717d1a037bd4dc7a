//go:build !race

package jsonimage_test

const raceEnabled = false
