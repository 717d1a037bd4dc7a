package gc_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/gctest"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

func TestMemory(t *testing.T) {
	gctest.Run(t, func(*testing.T) storage.Interface { return memory.New() })
}
