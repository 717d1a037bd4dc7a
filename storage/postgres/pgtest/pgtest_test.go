package pgtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A file this process holds open without close-on-exec, as flock(1) hands
// its lock to the command it runs, is not held by the server too: a server
// left running by a killed test would keep the lock taken.
func TestServerHoldsNoInheritedFiles(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "held.lock")
	fd, err := syscall.Open(lock, syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	c, err := Start()
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	pid, err := c.PID()
	if err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot read the server's descriptors: %v", err)
	}
	for _, e := range fds {
		if target, _ := os.Readlink(filepath.Join(dir, e.Name())); target == lock {
			t.Fatalf("the postmaster %d holds %s open (descriptor %s)", pid, lock, e.Name())
		}
	}
}
