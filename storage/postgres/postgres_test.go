package postgres_test

import (
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*postgres.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustStore(t, freshSchema(t))
	})
}
