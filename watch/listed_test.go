package watch_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// TestListExpired: the pages of a list expire once no list at its revision
// has been read for longer than the history's age; a revision the hub has
// no list of has not expired (another server read it, or this one before a
// restart); without an age, nothing expires.
func TestListExpired(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })

	long := watch.New(store, "/", watch.WithHistory(10, time.Hour))
	long.Listed(5)
	if long.ListExpired(5) || long.ListExpired(6) {
		t.Error("a list read now, or never, has expired within an hour")
	}

	short := watch.New(store, "/", watch.WithHistory(10, time.Nanosecond))
	short.Listed(5)
	giveUp := time.Now().Add(30 * time.Second) // a bound on the wait, not a timing
	for !short.ListExpired(5) {
		if time.Now().After(giveUp) {
			t.Fatal("a list read at 5 has not expired with an age of 1ns")
		}
		time.Sleep(time.Millisecond)
	}
	if short.ListExpired(6) {
		t.Error("a revision never listed has expired")
	}
	// A later list forgets the one at 5 for its age: its token stays
	// expired, and so does one at an earlier revision.
	time.Sleep(time.Millisecond)
	short.Listed(7)
	if !short.ListExpired(5) || !short.ListExpired(4) {
		t.Error("a list forgotten for its age is valid again")
	}

	none := watch.New(store, "/", watch.WithHistory(10, 0))
	none.Listed(5)
	time.Sleep(time.Millisecond)
	if none.ListExpired(5) {
		t.Error("without an age a list expired")
	}
}
