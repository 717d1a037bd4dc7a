package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

// TestFaults: SQLite's failures are the storage faults of the README's
// table: a key over the limit is ErrTooLarge and writes nothing; a full
// disk is ErrNoSpace; an I/O error in a commit is ErrUnavailable with an
// unknown outcome, since a WAL write that failed may have reached the disk.
func TestFaults(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	if _, err := s.Create(t.Context(), "/"+strings.Repeat("k", 64<<10), []byte("v")); !errors.Is(err, storage.ErrTooLarge) {
		t.Errorf("a key over the limit: %v, want ErrTooLarge", err)
	}
	if res, err := s.List(t.Context(), "/", storage.ListOptions{}); err != nil || len(res.Items) != 0 {
		t.Errorf("after the refused write the store lists %v, %v", res.Items, err)
	}
	for _, tc := range []struct {
		name    string
		err     error
		fault   error
		unknown bool
	}{
		{"Full", fmt.Errorf("commit: %w", sqliteError(13)), storage.ErrNoSpace, false},
		{"IOErrFsync", fmt.Errorf("commit: %w", sqliteError(10|4<<8)), storage.ErrUnavailable, true},
		{"Busy", sqliteError(5), storage.ErrTimeout, true},
		{"Other", errors.New("boom"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sqlite.CommitError(tc.err)
			if tc.fault != nil && !errors.Is(got, tc.fault) || errors.Is(got, storage.ErrOutcomeUnknown) != tc.unknown {
				t.Errorf("%v: %v, want %v (outcome unknown: %v)", tc.err, got, tc.fault, tc.unknown)
			}
		})
	}
}

// sqliteError is an error with an SQLite result code, as the driver's.
type sqliteError int

func (e sqliteError) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e sqliteError) Code() int     { return int(e) }

// TestDiskFull fills the file (SQLite's max_page_count makes it full at a
// size): the write that does not fit is ErrNoSpace, not applied, and the
// store goes on serving reads and the writes that fit.
func TestDiskFull(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), sqlite.WithWritePragma("max_page_count(64)"))
	big := make([]byte, 16<<10)
	var full error
	n := 0
	for ; n < 100; n++ {
		if _, full = s.Create(ctx, fmt.Sprintf("/k/%03d", n), big); full != nil {
			break
		}
	}
	if !errors.Is(full, storage.ErrNoSpace) || errors.Is(full, storage.ErrOutcomeUnknown) {
		t.Fatalf("after %d writes: %v, want ErrNoSpace, outcome known", n, full)
	}
	if _, err := s.Get(ctx, fmt.Sprintf("/k/%03d", n), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the refused write: Get = %v, want ErrNotFound", err)
	}
	if res, err := s.List(ctx, "/k/", storage.ListOptions{}); err != nil || len(res.Items) != n {
		t.Errorf("List: %d items, %v; want %d", len(res.Items), err, n)
	}
	if _, err := s.Update(ctx, "/k/000", []byte("small"), 0); err != nil {
		t.Errorf("a small update once full: %v", err)
	}
	mustCheck(t, s)
}
