package gc_test

import (
	"os"
	"testing"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

// TestMain fails the package if a goroutine of a collector (its watches, its
// workers) outlives the server that ran it.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
