package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// A database or role whose default isolation is SERIALIZABLE (or
// REPEATABLE READ) must not turn every contended commit into a
// serialization failure: the store's commits rely on READ COMMITTED, and
// its sessions ask for it whatever the database's default.
func TestCommitsUnderStricterDefaultIsolation(t *testing.T) {
	schema := freshSchema(t)
	url := baseURL
	if strings.Contains(url, "?") {
		url += "&default_transaction_isolation=serializable"
	} else {
		url += "?default_transaction_isolation=serializable"
	}
	saved := baseURL
	baseURL = url
	a, b := mustStore(t, schema), mustStore(t, schema)
	baseURL = saved

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for w := range 8 {
		store := a
		if w%2 == 1 {
			store = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := store.Create(ctx, fmt.Sprintf("/iso/%d/%d", w, i), []byte("v")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
