package memory_test

import (
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := memory.New() // the defaults, byte budget included
		t.Cleanup(func() { s.Close() })
		return s
	})
}
