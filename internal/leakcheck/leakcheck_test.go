package leakcheck_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

func parkedUntil(release <-chan struct{}) { <-release }

// TestLeaked: a goroutine started after the snapshot is reported while it
// runs, with its stack, and not once it has ended.
func TestLeaked(t *testing.T) {
	before := leakcheck.Take()
	release := make(chan struct{})
	go parkedUntil(release)

	leaked := before.Leaked(10 * time.Millisecond)
	if len(leaked) != 1 || !strings.Contains(leaked[0], "parkedUntil") {
		t.Fatalf("leaked %q, want the one parked goroutine", leaked)
	}
	close(release)
	if leaked := before.Leaked(10 * time.Second); leaked != nil {
		t.Fatalf("after it ended: leaked %q", leaked)
	}
}

// TestEndingGoroutinesAreWaitedFor: a goroutine that is about to end is
// not a leak.
func TestEndingGoroutinesAreWaitedFor(t *testing.T) {
	before := leakcheck.Take()
	release := make(chan struct{})
	go parkedUntil(release)
	time.AfterFunc(20*time.Millisecond, func() { close(release) })
	if leaked := before.Leaked(10 * time.Second); leaked != nil {
		t.Fatalf("leaked %q", leaked)
	}
}
