//go:build unix

package bolt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kapi-dev/kapi/storage/bolt"
)

// TestPreallocated: past the pages bbolt has allocated, the file is
// written, not holes left by extending it, so that commits that grow the
// data overwrite blocks the filesystem already has. After the store is
// opened again too; and the file stays sound.
func TestPreallocated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kapi.db")
	s := mustOpen(t, path)
	value := strings.Repeat("v", 1000)
	check := func(when string) {
		t.Helper()
		hwm, err := bolt.HighWater(s)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		written := fi.Sys().(*syscall.Stat_t).Blocks * 512
		if written < hwm+bolt.PreallocAhead/2 {
			t.Errorf("%s: %d bytes of the file are written, the pages in use end at %d: want %d more written past them",
				when, written, hwm, bolt.PreallocAhead/2)
		}
		if err := bolt.Check(s); err != nil {
			t.Fatal(err)
		}
	}
	// ~3 MiB of values each time, so that the file grows past its first
	// preallocation; from 8 writers, for fewer commits.
	write := func(prefix string) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range 3000 / 8 {
					mustWrite(t, s, fmt.Sprintf("%s%d/%d", prefix, w, i), value)
				}
			})
		}
		wg.Wait()
	}
	write("/p/")
	check("after 3000 writes")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	mustWrite(t, s, "/p/again", value)
	check("opened again")
	write("/q/")
	check("after 3000 more")
}
