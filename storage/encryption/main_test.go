package encryption_test

import (
	"os"
	"testing"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

// TestMain fails the package if a goroutine started by its tests outlives
// them: the goroutine of every watch must end when its context does.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
