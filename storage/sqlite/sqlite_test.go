package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/sqlite"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*sqlite.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	})
}

// mustOpen opens the store at path, closed when the test ends.
func mustOpen(t testing.TB, path string, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
