package storagetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/versions"
)

// toCurrent rewrites "old:X" as "new:X" and leaves the rest.
func toCurrent(_ string, value []byte) ([]byte, bool, error) {
	rest, ok := strings.CutPrefix(string(value), "old:")
	if !ok {
		return value, false, nil
	}
	return []byte("new:" + rest), true, nil
}

// testMigrate: versions.Migrate, which rewrites stored objects in the
// current storage version over this SPI, rewrites every old value, loses
// none of a concurrent writer's writes, resumes after a key, and writes
// nothing when nothing needs it.
func testMigrate(t *testing.T, store storage.Interface) {
	ctx := context.Background()
	const n = 60
	key := func(i int) string { return fmt.Sprintf("/things/%03d", i) }
	for i := range n {
		if _, err := store.Create(ctx, key(i), []byte(fmt.Sprintf("old:%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Create(ctx, "/other/x", []byte("old:x")); err != nil {
		t.Fatal(err)
	}

	// A writer stores current values and deletes keys while the
	// migration runs; its writes must stand.
	written := map[string]string{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < n; i += 3 {
			for {
				kv, err := store.Get(ctx, key(i), 0)
				if err != nil {
					t.Error(err)
					return
				}
				v := fmt.Sprintf("new:%d by the writer", i)
				if i%2 == 0 {
					if _, err = store.Delete(ctx, key(i), kv.ModRevision); err == nil {
						written[key(i)] = ""
						break
					}
				} else if _, err = store.Update(ctx, key(i), []byte(v), kv.ModRevision); err == nil {
					written[key(i)] = v
					break
				}
			}
		}
	})
	var pages []versions.Progress
	p, err := versions.Migrate(ctx, store, "/things/", toCurrent, versions.MigrateOptions{
		PageSize: 7, Progress: func(p versions.Progress) { pages = append(pages, p) },
	})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 || pages[len(pages)-1] != p || p.Remaining != 0 || p.Key != key(n-1) {
		t.Errorf("progress %+v, pages %d; want the last page's, at the last key", p, len(pages))
	}
	list, err := store.List(ctx, "/things/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range list.Items {
		if want, ok := written[kv.Key]; ok && string(kv.Value) != want {
			t.Errorf("%s = %q, want the writer's %q", kv.Key, kv.Value, want)
		}
		if !strings.HasPrefix(string(kv.Value), "new:") {
			t.Errorf("%s = %q, not migrated", kv.Key, kv.Value)
		}
	}
	if kv, _ := store.Get(ctx, "/other/x", 0); string(kv.Value) != "old:x" {
		t.Errorf("a key outside the prefix was rewritten: %q", kv.Value)
	}

	// Resumed after a key: only what follows is read; all is current.
	rev, _ := store.Revision(ctx)
	again, err := versions.Migrate(ctx, store, "/things/", toCurrent, versions.MigrateOptions{After: key(49)})
	if err != nil || again.Rewritten != 0 || again.Seen == 0 || again.Seen > 10 {
		t.Errorf("resumed after %s: %+v, %v; want at most 10 keys seen and none rewritten", key(49), again, err)
	}
	if now, _ := store.Revision(ctx); now != rev {
		t.Errorf("a migration with nothing to do wrote (revision %d, then %d)", rev, now)
	}
}
