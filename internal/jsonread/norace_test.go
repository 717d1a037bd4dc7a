//go:build !race

package jsonread_test

const raceEnabled = false
