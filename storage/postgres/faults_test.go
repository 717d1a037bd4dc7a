package postgres_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// The faults of a real PostgreSQL, not injected ones (the conformance
// suite's Faults group injects those): the server crashing and coming
// back, a connection lost as a write commits, a pool with no connection to
// spare and a lock held elsewhere. Each must reach the caller as the
// storage fault it is, and the store must recover without being reopened.

// needCluster skips a test that must stop and start the server, which
// only the throwaway cluster lets it do.
func needCluster(t *testing.T) {
	t.Helper()
	needDatabase(t)
	if testCluster == nil {
		t.Skip("KAPI_POSTGRES_URL names the server: the test will not stop it")
	}
}

// crash stops the server as a crash would (pg_ctl stop -m immediate: no
// shutdown checkpoint, connections cut) and makes sure it runs again when
// the test ends, for the tests after it.
func crash(t *testing.T) (restart func()) {
	t.Helper()
	return crashBy(t, "immediate")
}

// crashBy stops the server with pg_ctl stop -m immediate, or, for "kill",
// with SIGKILL to the postmaster, whose backends then end by themselves.
func crashBy(t *testing.T, how string) (restart func()) {
	t.Helper()
	var err error
	if how == "kill" {
		err = testCluster.Kill()
	} else {
		err = testCluster.Stop(how)
	}
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restart = func() {
		once.Do(func() {
			start := testCluster.Start
			if how == "kill" {
				start = testCluster.StartAfterKill
			}
			if err := start(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Cleanup(restart)
	return restart
}

func waitReadyz(t *testing.T, url string, want int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := send(t, http.MethodGet, url+"/readyz?verbose", "")
		if a.code == want {
			return a.body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz is %d %q after 30s, want %d", a.code, a.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isFault says whether err is one of the faults a client is told to retry.
func isFault(err error) bool {
	return errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrTimeout)
}

// TestPostgresRestarted: while PostgreSQL is down (stopped with pg_ctl stop
// -m immediate, or its postmaster killed with SIGKILL), /readyz fails, a write
// is answered 503 or 504 with Retry-After, and the store's calls fail with
// ErrUnavailable or ErrTimeout (a write that never reached COMMIT is not
// "maybe applied"); once it is back, all of them recover, the watch cache
// and a storage watch started before the crash included, on the same
// store.
func TestPostgresRestarted(t *testing.T) {
	needCluster(t)
	for _, how := range []string{"immediate", "kill"} {
		t.Run(how, func(t *testing.T) { testRestarted(t, how) })
	}
}

func testRestarted(t *testing.T, how string) {
	ctx := t.Context()
	s := mustStore(t, freshSchema(t), postgres.WithTimeout(2*time.Second))
	url := serveWidgets(t, s)
	waitReadyz(t, url, http.StatusOK)
	if a := send(t, http.MethodPost, url+widgetsPath, widgetJSON("before", "Red", "")); a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Watch(ctx, "/", rev)
	if err != nil {
		t.Fatal(err)
	}

	restart := crashBy(t, how)
	body := waitReadyz(t, url, http.StatusServiceUnavailable)
	if !strings.Contains(body, "[-]storage failed") {
		t.Errorf("/readyz with PostgreSQL down: %q", body)
	}
	a := send(t, http.MethodPost, url+widgetsPath+"?timeout=5s", widgetJSON("during", "Red", ""))
	if (a.code != http.StatusServiceUnavailable && a.code != http.StatusGatewayTimeout) || a.retryAfter != "1" {
		t.Errorf("a write with PostgreSQL down: %d Retry-After %q: %s", a.code, a.retryAfter, a.body)
	}
	t.Logf("a write with PostgreSQL down: %d %s", a.code, a.status.Message)
	if _, err := s.Create(ctx, "/direct", []byte("x")); !isFault(err) || errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Errorf("Create with PostgreSQL down: %v; want ErrUnavailable or ErrTimeout, not maybe applied", err)
	}
	if _, err := s.Get(ctx, "/direct", 0); !isFault(err) {
		t.Errorf("Get with PostgreSQL down: %v; want ErrUnavailable or ErrTimeout", err)
	}

	began := time.Now()
	restart()
	waitReadyz(t, url, http.StatusOK)
	t.Logf("ready %v after PostgreSQL restarted", time.Since(began).Round(time.Millisecond))
	if a := send(t, http.MethodPost, url+widgetsPath, widgetJSON("after", "Red", "")); a.code != http.StatusCreated {
		t.Fatalf("create after PostgreSQL is back: %d %s", a.code, a.body)
	}
	a = send(t, http.MethodGet, url+widgetsPath, "")
	if a.code != http.StatusOK || !strings.Contains(a.body, `"name":"after"`) || !strings.Contains(a.body, `"name":"before"`) || strings.Contains(a.body, `"name":"during"`) {
		t.Errorf("list after PostgreSQL is back: %d %s", a.code, a.body)
	}
	select {
	case ev := <-events:
		if ev.Err != nil || !strings.HasSuffix(ev.Key, "/after") {
			t.Errorf("the storage watch started before the crash: %+v, want the create of after", ev)
		}
	case <-time.After(30 * time.Second):
		t.Error("the storage watch started before the crash saw nothing of the write after it")
	}
}

// TestCommitLost: a write whose connection is lost after its statements
// were sent is ErrOutcomeUnknown (as well as a fault to retry): the server
// may have been committing it, and only a read can tell. Here another
// session holds the lock of the key's current row, so the write's
// statements wait for it on the server when the server stops: the read,
// once it is back, finds it was not applied, and the store writes on from
// there.
func TestCommitLost(t *testing.T) {
	needCluster(t)
	var armed atomic.Bool
	var restart func()
	schema := freshSchema(t)
	s := mustStore(t, schema, postgres.WithTimeout(2*time.Second), postgres.WithAfterSend(func() {
		if armed.CompareAndSwap(true, false) {
			restart = crash(t)
		}
	}))
	ctx := t.Context()
	if _, err := s.Create(ctx, "/k", []byte("1")); err != nil {
		t.Fatal(err)
	}
	lockKey(t, schema, "/k")
	armed.Store(true)
	_, err := s.Update(ctx, "/k", []byte("2"), 0)
	if !errors.Is(err, storage.ErrOutcomeUnknown) || !isFault(err) {
		t.Errorf("an update whose commit was cut off: %v; want ErrOutcomeUnknown and ErrUnavailable or ErrTimeout", err)
	}
	t.Logf("the update whose commit was cut off: %v", err)
	if restart == nil {
		t.Fatal("the commit hook never ran")
	}
	restart()
	var kv storage.KeyValue
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if kv, err = s.Get(ctx, "/k", 0); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || string(kv.Value) != "1" {
		t.Errorf("after the restart /k is %q, %v; want the value before the update, which never got the row's lock", kv.Value, err)
	}
	if _, err := s.Update(ctx, "/k", []byte("3"), kv.ModRevision); err != nil {
		t.Errorf("an update after the restart: %v", err)
	}
}

// TestNoConnectionToSpare: with a pool of one connection, held by a write
// waiting for the revision counter's lock, which another session holds,
// the write ends in ErrTimeout within the store's timeout, not "maybe
// applied", and a read waiting for the pool meanwhile never hangs: it
// ends in ErrTimeout, or succeeds if the write let go of the connection
// in the read's time. Once the lock is released the store writes again.
func TestNoConnectionToSpare(t *testing.T) {
	needDatabase(t)
	schema := freshSchema(t)
	s := mustStore(t, schema, postgres.WithMaxConns(1), postgres.WithTimeout(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails, not ErrTimeout
	defer cancel()
	if _, err := s.Create(ctx, "/k", []byte("1")); err != nil {
		t.Fatal(err)
	}

	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT rev FROM "+pgx.Identifier{schema, "revision"}.Sanitize()+" FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var writeErr, readErr error
	wg.Go(func() { _, writeErr = s.Create(ctx, "/blocked", []byte("x")) })
	time.Sleep(100 * time.Millisecond) // likely enough for the write to take the connection; either order is checked
	wg.Go(func() { _, readErr = s.Get(ctx, "/k", 0) })
	wg.Wait()
	if !errors.Is(writeErr, storage.ErrTimeout) || errors.Is(writeErr, storage.ErrOutcomeUnknown) {
		t.Errorf("a write waiting for a lock held elsewhere: %v; want ErrTimeout, not maybe applied", writeErr)
	}
	if readErr != nil && !errors.Is(readErr, storage.ErrTimeout) {
		t.Errorf("a read waiting for the pool: %v; want ErrTimeout or success", readErr)
	}
	t.Logf("write: %v; read: %v", writeErr, readErr)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/after", []byte("x")); err != nil {
		t.Errorf("a write once the lock is released: %v", err)
	}
	if _, err := s.Get(ctx, "/blocked", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the write that timed out: %v, want ErrNotFound", err)
	}
}

// TestFailedCommitHidesNoOtherNotification: a batch that failed after it
// was sent (here a lock timeout) leaves its revisions to another
// replica, whose commit's notification this store's listener must not
// pass over as its own: with polls an hour apart, the watcher would wait
// for this store's next commit.
func TestFailedCommitHidesNoOtherNotification(t *testing.T) {
	schema := freshSchema(t)
	a := mustStore(t, schema, postgres.WithTimeout(time.Second), postgres.WithPollInterval(time.Hour))
	b := mustStore(t, schema, postgres.WithPollInterval(time.Hour))
	ctx := t.Context()
	rev, err := a.Create(ctx, "/k", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	holder := lockKey(t, schema, "/k")
	if _, err := a.Update(ctx, "/k", []byte("2"), 0); err == nil {
		t.Fatal("an update of a locked row succeeded")
	}
	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a's poll after the failure runs first
	w, err := a.Watch(ctx, "/other", rev)
	if err != nil {
		t.Fatal(err)
	}
	brev, err := b.Create(ctx, "/other", []byte("x")) // takes a revision of a's failed batch
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w:
	case <-time.After(15 * time.Second):
		t.Fatalf("a's watcher never heard of b's create at %d", brev)
	}
}

// lockKey holds key's row locked (FOR UPDATE) in a transaction of a
// connection of its own until the test ends or it is rolled back, so that
// a store's write of key waits for the lock.
func lockKey(t *testing.T, schema, key string) *pgx.Conn {
	t.Helper()
	holder, err := pgx.Connect(t.Context(), baseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(context.Background()) })
	if _, err := holder.Exec(t.Context(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(t.Context(), "SELECT FROM "+pgx.Identifier{schema, "current"}.Sanitize()+" WHERE key = $1::bytea FOR UPDATE", key); err != nil {
		t.Fatal(err)
	}
	return holder
}
