package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func testConcurrentCreates(t *testing.T, s storage.Interface) {
	const writers, perWriter = 8, 50
	start := mustRevision(t, s)
	ch := mustWatch(t, s, "/cc/", start)
	revs := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				key := fmt.Sprintf("/cc/%d/%03d", w, i)
				rev, err := s.Create(t.Context(), key, []byte("v"))
				if err != nil {
					t.Errorf("Create(%q): %v", key, err)
					return
				}
				revs[w] = append(revs[w], rev)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	const total = writers * perWriter
	for w, rs := range revs {
		if !slices.IsSorted(rs) {
			t.Errorf("writer %d's sequential creates got revisions out of order: %v", w, rs)
		}
	}
	all := slices.Concat(revs...)
	slices.Sort(all)
	for i, rev := range all {
		if want := start + 1 + int64(i); rev != want {
			t.Fatalf("the %d-th smallest revision returned is %d, want %d: every revision used exactly once", i, rev, want)
		}
	}
	wantRevision(t, s, start+total, "after the creates")
	checkConsecutive(t, recvN(t, ch, total), start)
	if res := mustList(t, s, "/cc/", storage.ListOptions{}); len(res.Items) != total {
		t.Errorf("List: %d keys, want %d", len(res.Items), total)
	}
}

func testConcurrentCounter(t *testing.T, s storage.Interface) {
	const writers, increments = 8, 25
	const key = "/counter"
	c := mustCreate(t, s, key, "0")
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			ctx := t.Context()
			for range increments {
				for {
					cur, err := s.Get(ctx, key, 0)
					if err != nil {
						t.Errorf("Get: %v", err)
						return
					}
					n, err := strconv.Atoi(string(cur.Value))
					if err != nil {
						t.Errorf("counter value %q: %v", cur.Value, err)
						return
					}
					_, err = s.Update(ctx, key, []byte(strconv.Itoa(n+1)), cur.ModRevision)
					if errors.Is(err, storage.ErrConflict) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("Update: %v", err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	const total = writers * increments
	// Only successful updates use revisions.
	checkKV(t, "counter", mustGet(t, s, key, 0), kv(key, strconv.Itoa(total), c, c+total))
	t.Logf("%d conflicts retried", conflicts.Load())
}

func testCancelledContext(t *testing.T, s storage.Interface) {
	mustCreate(t, s, "/k", "v")
	before := mustRevision(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ops := []struct {
		name string
		do   func(t *testing.T) error
	}{
		{"Watch", func(t *testing.T) error {
			ch, err := s.Watch(ctx, "/", 0)
			if err == nil {
				drain(t, ch)
			}
			return err
		}},
		{"Get", func(*testing.T) error { _, err := s.Get(ctx, "/k", 0); return err }},
		{"List", func(*testing.T) error { _, err := s.List(ctx, "/", storage.ListOptions{}); return err }},
		{"Revision", func(*testing.T) error { _, err := s.Revision(ctx); return err }},
		{"Create", func(*testing.T) error { _, err := s.Create(ctx, "/new", []byte("v")); return err }},
		{"Update", func(*testing.T) error { _, err := s.Update(ctx, "/k", []byte("v2"), 0); return err }},
		{"Delete", func(*testing.T) error { _, err := s.Delete(ctx, "/k", 0); return err }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			wantErr(t, op.name+" with a cancelled context", op.do(t), context.Canceled)
		})
	}
	wantRevision(t, s, before, "after writes with a cancelled context")
	checkKV(t, "Get", mustGet(t, s, "/k", 0), kv("/k", "v", before, before))
}
