package listcache

import (
	"context"
	"runtime"
	"testing"
)

// Kept lists share one budget per server: a list that does not fit is not
// kept, and lists whose collection has changed give their bytes back when
// another needs them.
func TestListBudget(t *testing.T) {
	var budget Budget
	var a, b Bodies
	changeA, changeB := int64(1), int64(1)
	budget.Add(&a, func() int64 { return changeA })
	budget.Add(&b, func() int64 { return changeB })
	big := make([]byte, BodyMax)
	fill := func(l *Bodies, prefix string, change int64) bool {
		t.Helper()
		for range 2 { // a first sighting, and the second, which keeps
			if _, _, err := l.Share(context.Background(), prefix, change, 1, func() ([][]byte, error) { return [][]byte{big[:BodyMax-1]}, nil }, 1, "", "x"); err != nil {
				t.Fatal(err)
			}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.lists[prefix] != nil && l.lists[prefix].data != nil
	}
	for i, p := range []string{"/a/1", "/a/2", "/a/3", "/a/4"} {
		if !fill(&a, p, changeA) {
			t.Fatalf("list %d not kept with the budget at %d", i, budget.bytes)
		}
	}
	if fill(&b, "/b/1", changeB) {
		t.Fatalf("a list beyond the budget was kept (%d bytes)", budget.bytes)
	}
	changeA = 2 // a's lists are stale now
	if !fill(&b, "/b/1", changeB) {
		t.Fatalf("a list was not kept after the stale ones went (%d bytes)", budget.bytes)
	}
	if budget.bytes != BodyMax {
		t.Errorf("budget holds %d bytes, want %d", budget.bytes, BodyMax)
	}
	// A list of another state replaces the one kept, bytes and all.
	b.get("/b/1", 2, 1)
	if budget.bytes != 0 {
		t.Errorf("budget holds %d bytes after the list changed, want 0", budget.bytes)
	}
	if l := Join([][]byte{make([]byte, BodyMax)}, 1, "", ",", "x"); l != nil {
		t.Errorf("Join made %d bytes, more than a list kept holds", len(l))
	}
	if got := string(Join([][]byte{[]byte("a"), nil, []byte("b"), []byte("c"), []byte("d"), nil}, 3, "<", ",", ">")); got != "<ab>,<cd>" {
		t.Errorf("Join = %q", got)
	}
}

// A list that comes while another makes the same collection's bytes at the
// same change waits for it and writes what it joined: the informers of a
// fleet starting at once make them once, not once each. One that gives up
// waiting (its client left) ends with its context's error.
func TestShareWaitsForTheMaker(t *testing.T) {
	var budget Budget
	var l Bodies
	budget.Add(&l, func() int64 { return 1 })
	made, started, release := 0, make(chan struct{}), make(chan struct{})
	makePieces := func() ([][]byte, error) {
		if made++; made == 1 {
			close(started)
		}
		<-release
		return [][]byte{[]byte("a"), []byte("b")}, nil
	}
	first := make(chan []byte)
	go func() {
		data, _, err := l.Share(context.Background(), "/a", 1, 2, makePieces, 1, "<", ">")
		if err != nil {
			t.Error(err)
		}
		first <- data
	}()
	<-started // the first list makes the bytes
	waiting := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		b := l.lists["/a"]
		return b != nil && b.waiting > 0
	}
	gaveUp := make(chan error)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _, err := l.Share(ctx, "/a", 1, 2, makePieces, 1, "<", ">")
		gaveUp <- err
	}()
	for !waiting() {
		runtime.Gosched()
	}
	cancel()
	if err := <-gaveUp; err != context.Canceled {
		t.Fatalf("a list that gave up waiting: %v", err)
	}
	second := make(chan []byte)
	go func() {
		data, pieces, err := l.Share(context.Background(), "/a", 1, 2, makePieces, 1, "<", ">")
		if err != nil || pieces != nil {
			t.Errorf("the waiting list: pieces %q, %v", pieces, err)
		}
		second <- data
	}()
	for !waiting() {
		runtime.Gosched()
	}
	close(release)
	if data := <-first; string(data) != "<a><b>" {
		t.Errorf("the maker, waited for, joined %q", data)
	}
	if data := <-second; string(data) != "<a><b>" {
		t.Errorf("the waiting list got %q", data)
	}
	if made != 1 {
		t.Errorf("the bytes were made %d times, want 1", made)
	}
	if data, _, _ := l.Share(context.Background(), "/a", 1, 2, makePieces, 1, "<", ">"); string(data) != "<a><b>" || made != 1 {
		t.Errorf("a later list got %q, the bytes made %d times", data, made)
	}
}

// Lists waiting for a maker whose bytes the full budget cannot keep
// write those bytes, rather than making them again one after another,
// each the next maker of bytes the budget cannot keep either.
func TestShareWithTheBudgetFull(t *testing.T) {
	var budget Budget
	var full, l Bodies
	budget.Add(&full, func() int64 { return 1 })
	budget.Add(&l, func() int64 { return 1 })
	big := make([]byte, BodyMax-1)
	for _, p := range []string{"/f/1", "/f/2", "/f/3", "/f/4"} { // the whole budget, kept and current
		for range 2 {
			if _, _, err := full.Share(context.Background(), p, 1, 1, func() ([][]byte, error) { return [][]byte{big}, nil }, 1, "", "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	made, release := make(chan struct{}, 4), make(chan struct{})
	makePieces := func() ([][]byte, error) { made <- struct{}{}; <-release; return [][]byte{[]byte("a")}, nil }
	waiting := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		if b := l.lists["/a"]; b != nil {
			return b.waiting
		}
		return 0
	}
	done := make(chan []byte, 3)
	share := func() {
		data, pieces, err := l.Share(context.Background(), "/a", 1, 1, makePieces, 1, "<", ">")
		if err != nil {
			t.Error(err)
		}
		if data == nil {
			data = Join(pieces, 1, "<", "", ">")
		}
		done <- data
	}
	go share() // the first sighting
	<-made
	release <- struct{}{}
	<-done
	go share() // the second list makes them, to keep
	<-made
	go share() // and two wait for it
	go share()
	for waiting() < 2 { // both: one still on its way would make them again
		runtime.Gosched()
	}
	close(release) // the budget has no room for what it joined
	for range 3 {
		if data := <-done; string(data) != "<a>" {
			t.Errorf("a list wrote %q", data)
		}
	}
	if n := len(made); n != 0 {
		t.Errorf("the waiting lists made the bytes %d more times, want none", n)
	}
	if held := budget.Held(); held != 4*(BodyMax-1+1) {
		t.Errorf("the budget holds %d bytes, want %d", held, 4*BodyMax)
	}
}
