//go:build race

package jsonread_test

// raceEnabled: the race detector drops sync.Pool's items at random, so
// allocation budgets do not hold under it.
const raceEnabled = true
