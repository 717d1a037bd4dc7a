package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// waitTimeout bounds every wait. It is long because the machines running
// the suite may be loaded; nothing depends on it being short.
const waitTimeout = 10 * time.Second

func mustCreate(t *testing.T, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustUpdate(t *testing.T, s storage.Interface, key, value string, expect int64) int64 {
	t.Helper()
	rev, err := s.Update(t.Context(), key, []byte(value), expect)
	if err != nil {
		t.Fatalf("Update(%q, expect %d): %v", key, expect, err)
	}
	return rev
}

// mustDelete deletes key and returns the deletion's revision.
func mustDelete(t *testing.T, s storage.Interface, key string, expect int64) int64 {
	t.Helper()
	kv, err := s.Delete(t.Context(), key, expect)
	if err != nil {
		t.Fatalf("Delete(%q, expect %d): %v", key, expect, err)
	}
	return kv.ModRevision
}

func mustGet(t *testing.T, s storage.Interface, key string, rev int64) storage.KeyValue {
	t.Helper()
	kv, err := s.Get(t.Context(), key, rev)
	if err != nil {
		t.Fatalf("Get(%q, rev %d): %v", key, rev, err)
	}
	return kv
}

func mustList(t *testing.T, s storage.Interface, prefix string, opts storage.ListOptions) storage.ListResult {
	t.Helper()
	res, err := s.List(t.Context(), prefix, opts)
	if err != nil {
		t.Fatalf("List(%q, %+v): %v", prefix, opts, err)
	}
	return res
}

func mustRevision(t *testing.T, s storage.Interface) int64 {
	t.Helper()
	rev, err := s.Revision(t.Context())
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

// wantRevision checks the store's current revision.
func wantRevision(t *testing.T, s storage.Interface, want int64, when string) {
	t.Helper()
	if got := mustRevision(t, s); got != want {
		t.Errorf("Revision %s = %d, want %d", when, got, want)
	}
}

// mustWatch starts a watch that ends with the test.
func mustWatch(t *testing.T, s storage.Interface, prefix string, rev int64) <-chan storage.Event {
	t.Helper()
	ch, _ := watch(t, s, prefix, rev)
	return ch
}

// watch starts a watch that ends with the test or when cancel is called.
func watch(t *testing.T, s storage.Interface, prefix string, rev int64) (<-chan storage.Event, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	ch, err := s.Watch(ctx, prefix, rev)
	if err != nil {
		t.Fatalf("Watch(%q, rev %d): %v", prefix, rev, err)
	}
	return ch, cancel
}

// recvN receives n events, failing the test if the channel closes, an
// error event comes, or the events take longer than waitTimeout.
func recvN(t *testing.T, ch <-chan storage.Event, n int) []storage.Event {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	events := make([]storage.Event, 0, n)
	for len(events) < n {
		select {
		case ev, ok := <-ch:
			switch {
			case !ok:
				t.Fatalf("watch closed after %d of %d events", len(events), n)
			case ev.Err != nil:
				t.Fatalf("watch ended with %v after %d of %d events", ev.Err, len(events), n)
			}
			events = append(events, ev)
		case <-deadline.C:
			t.Fatalf("received %d of %d watch events in %v", len(events), n, waitTimeout)
		}
	}
	return events
}

// drain receives until the channel closes and returns what came.
func drain(t *testing.T, ch <-chan storage.Event) []storage.Event {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	var events []storage.Event
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return events
			}
			events = append(events, ev)
		case <-deadline.C:
			t.Fatalf("watch channel not closed %v after its end (%d events drained)", waitTimeout, len(events))
		}
	}
}

// waitGoroutines polls until the process runs no more goroutines than
// baseline.
func waitGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines running %v after the watches ended, %d before they started:\n%s", n, waitTimeout, baseline, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// getCase is one Get and what it must return: want, or an error matching
// wantErr.
type getCase struct {
	name    string
	key     string
	rev     int64
	want    storage.KeyValue
	wantErr error
}

// checkGets runs each case as a subtest of its name. after, if not empty,
// says what the reads follow, for the failure messages.
func checkGets(t *testing.T, s storage.Interface, after string, cases []getCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Get(t.Context(), tc.key, tc.rev)
			what := fmt.Sprintf("Get(%q, rev %d)", tc.key, tc.rev)
			if after != "" {
				what += " after " + after
			}
			if tc.wantErr != nil {
				wantErr(t, what, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkKV(t, what, got, tc.want)
		})
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

func kv(key, value string, create, mod int64) storage.KeyValue {
	return storage.KeyValue{Key: key, Value: []byte(value), CreateRevision: create, ModRevision: mod}
}

func created(key, value string, rev int64) storage.Event {
	return storage.Event{Type: storage.Put, KeyValue: kv(key, value, rev, rev)}
}

func updated(key, value string, create, mod int64, prev string) storage.Event {
	return storage.Event{Type: storage.Put, KeyValue: kv(key, value, create, mod), Prev: []byte(prev)}
}

func deleted(key, value string, create, mod int64) storage.Event {
	return storage.Event{Type: storage.Delete, KeyValue: kv(key, value, create, mod), Prev: []byte(value)}
}

func sameKV(a, b storage.KeyValue) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func sameEvent(a, b storage.Event) bool {
	return a.Type == b.Type && sameKV(a.KeyValue, b.KeyValue) &&
		(a.Prev == nil) == (b.Prev == nil) && bytes.Equal(a.Prev, b.Prev) &&
		(a.Err == nil) == (b.Err == nil)
}

func fmtKV(kv storage.KeyValue) string {
	return fmt.Sprintf("{%q=%q create=%d mod=%d}", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

func fmtEvent(ev storage.Event) string {
	if ev.Err != nil {
		return fmt.Sprintf("{err=%v}", ev.Err)
	}
	prev := "nil"
	if ev.Prev != nil {
		prev = fmt.Sprintf("%q", ev.Prev)
	}
	return fmt.Sprintf("{%v %s prev=%s}", ev.Type, fmtKV(ev.KeyValue), prev)
}

func checkKV(t *testing.T, what string, got, want storage.KeyValue) {
	t.Helper()
	if !sameKV(got, want) {
		t.Errorf("%s = %s, want %s", what, fmtKV(got), fmtKV(want))
	}
}

func checkKVs(t *testing.T, what string, got, want []storage.KeyValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d items, want %d\n got: %s\nwant: %s", what, len(got), len(want), fmtKVs(got), fmtKVs(want))
		return
	}
	for i := range got {
		checkKV(t, fmt.Sprintf("%s: item %d", what, i), got[i], want[i])
	}
}

func fmtKVs(kvs []storage.KeyValue) string {
	var b bytes.Buffer
	for _, kv := range kvs {
		b.WriteString(fmtKV(kv))
	}
	return b.String()
}

func checkEvents(t *testing.T, got, want []storage.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d events, want %d", len(got), len(want))
	}
	mismatches := 0
	for i := range min(len(got), len(want)) {
		if !sameEvent(got[i], want[i]) {
			t.Errorf("event %d = %s, want %s", i, fmtEvent(got[i]), fmtEvent(want[i]))
			if mismatches++; mismatches == 5 {
				return
			}
		}
	}
}

func keysOf(kvs []storage.KeyValue) []string {
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
	}
	return keys
}
