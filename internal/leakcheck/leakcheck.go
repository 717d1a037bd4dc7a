// Package leakcheck finds goroutines that outlive the tests that started
// them: a request, a watch or a store that leaves one behind holds memory
// and often a lock or a connection for ever, and nothing else notices.
//
// # Use
//
// A package checks all of its tests at once:
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
//
// and a test can check a stretch of itself (not with t.Parallel, whose
// goroutines it would count):
//
//	before := leakcheck.Take()
//	... requests, watches ...
//	if leaked := before.Leaked(10 * time.Second); len(leaked) > 0 { t.Errorf(...) }
//
// Goroutines that are ending are waited for: the comparison is retried until
// the new goroutines are gone or the wait is over, so a check never depends
// on how fast a machine is, only on whether the goroutines end at all.
package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Snapshot is the set of goroutines running at one moment, by id.
type Snapshot map[int]string

// Take records the goroutines running now.
func Take() Snapshot {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	s := Snapshot{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		stack := string(g)
		header, _, _ := strings.Cut(stack, "\n")
		// "goroutine 42 [chan receive]:"
		fields := strings.Fields(header)
		if len(fields) < 2 || fields[0] != "goroutine" {
			continue
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		s[id] = stack
	}
	return s
}

// ignored are goroutines that belong to the runtime or the test framework,
// not to the code under test.
var ignored = []string{
	"testing.(*T).Run(",
	"testing.(*M).",
	"testing.tRunner(",
	"testing.runTests(",
	"os/signal.signal_recv",
	"os/signal.loop",
	"runtime.goexit0",
	"runtime/trace.",
}

// owned says whether the goroutine is the tested code's business rather
// than the runtime's or the test framework's.
func owned(stack string) bool {
	for _, s := range ignored {
		if strings.Contains(stack, s) {
			return false
		}
	}
	return true
}

// Leaked waits up to wait for the goroutines started since s to end, and
// returns the stacks of those still running then (nil if none).
func (s Snapshot) Leaked(wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		var leaked []string
		for id, stack := range Take() {
			if _, ok := s[id]; !ok && owned(stack) && !isCurrent(stack) {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			slices.Sort(leaked)
			return leaked
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// isCurrent says whether the stack is the goroutine taking the snapshot.
func isCurrent(stack string) bool {
	return strings.Contains(stack, "leakcheck.Take(")
}

// Wait is how long Main and Check wait for goroutines that are ending.
const Wait = 10 * time.Second

// Check fails t, when it ends, if goroutines started during it are still
// running. Call it first in the test, so that it runs after every other
// cleanup (they run last-in first-out). Tests that use t.Parallel cannot use
// it: it would count the goroutines of the tests running beside them.
func Check(t testing.TB) {
	t.Helper()
	before := Take()
	t.Cleanup(func() {
		if leaked := before.Leaked(Wait); len(leaked) > 0 {
			t.Errorf("leakcheck: %d goroutine(s) outlived the test:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
	})
}

// Main runs the package's tests, then reports every goroutine they started
// that is still running, and fails the run if there is one. It returns the
// exit code for os.Exit.
func Main(m *testing.M) int {
	before := Take()
	code := m.Run()
	if code != 0 {
		return code // the failure is already reported; leftovers of failed tests are noise
	}
	if leaked := before.Leaked(Wait); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "leakcheck: %d goroutine(s) outlived the tests:\n\n%s\n", len(leaked), strings.Join(leaked, "\n\n"))
		return 1
	}
	return 0
}
