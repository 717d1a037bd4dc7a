//go:build race

package apiserver_test

const raceEnabled = true
