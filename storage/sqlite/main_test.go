package sqlite_test

import (
	"os"
	"testing"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

// TestMain fails the package if a goroutine started by its tests outlives
// them: every watch and feed loop must end when its context does.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
