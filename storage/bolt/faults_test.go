package bolt_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
)

// TestFaults: bolt's failures are the storage faults of the README's
// table: a key over the limit is ErrTooLarge and writes nothing; a full
// disk is ErrNoSpace; another I/O error in a commit is ErrUnavailable
// with an unknown outcome, since an fsync that failed may have written.
func TestFaults(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	if _, err := s.Create(t.Context(), "/"+strings.Repeat("k", 64<<10), []byte("v")); !errors.Is(err, storage.ErrTooLarge) {
		t.Errorf("a key over bolt's limit: %v, want ErrTooLarge", err)
	}
	if res, err := s.List(t.Context(), "/", storage.ListOptions{}); err != nil || len(res.Items) != 0 {
		t.Errorf("after the refused write the store lists %v, %v", res.Items, err)
	}
	for _, tc := range []struct {
		err     error
		fault   error
		unknown bool
	}{
		{&fs.PathError{Op: "write", Path: "kapi.db", Err: syscall.ENOSPC}, storage.ErrNoSpace, false},
		{&fs.PathError{Op: "write", Path: "kapi.db", Err: syscall.EDQUOT}, storage.ErrNoSpace, false},
		{&fs.PathError{Op: "fdatasync", Path: "kapi.db", Err: syscall.EIO}, storage.ErrUnavailable, true},
		{syscall.EIO, storage.ErrUnavailable, true},
		{berrors.ErrDatabaseNotOpen, storage.ErrClosed, false},
	} {
		got := bolt.CommitError(tc.err)
		if !errors.Is(got, tc.fault) || errors.Is(got, storage.ErrOutcomeUnknown) != tc.unknown {
			t.Errorf("%v: %v, want %v (outcome unknown: %v)", tc.err, got, tc.fault, tc.unknown)
		}
	}
}
