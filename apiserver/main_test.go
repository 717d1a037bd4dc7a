package apiserver_test

import (
	"os"
	"testing"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

// TestMain fails the package if a goroutine started by its tests (a
// request's handler, a watch, the cache of a server) outlives them.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
