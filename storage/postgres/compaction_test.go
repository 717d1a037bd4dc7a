package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// TestCompactionBoundsTheLog writes to 1,000 keys, from 16 concurrent
// writers, with the default history window, until the log has been
// compacted many times over, and checks that the log then holds no more
// than the window's revisions plus one version per key. It reports (and
// asserts nothing about) how long writes took while pruning transactions
// ran. $KAPI_POSTGRES_COMPACTION_WRITES sets the number of writes (20,000
// by default; the figure is 1,000,000):
//
//	KAPI_POSTGRES_COMPACTION_WRITES=200000 go test -run TestCompactionBoundsTheLog -v ./storage/postgres/
func TestCompactionBoundsTheLog(t *testing.T) {
	writes := 20000
	if n, err := strconv.Atoi(os.Getenv("KAPI_POSTGRES_COMPACTION_WRITES")); err == nil && n > 0 {
		writes = n
	}
	const keys, writers, history = 1000, 16, 10000 // history: the default
	type interval struct{ began, ended time.Time }
	var (
		mu     sync.Mutex
		prunes []interval
		pruned atomic.Int64
	)
	schema := freshSchema(t)
	s := mustStore(t, schema, postgres.WithPruneObserver(func(began time.Time, took time.Duration, deleted int64) {
		mu.Lock()
		prunes = append(prunes, interval{began, began.Add(took)})
		mu.Unlock()
		pruned.Add(deleted)
	}))
	ctx := t.Context()
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"Red","replicas":1}}`)
	for k := range keys {
		if _, err := s.Create(ctx, fmt.Sprintf("/w/%04d", k), value); err != nil {
			t.Fatal(err)
		}
	}

	// Each write's interval.
	done := make([][]interval, writers)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	began := time.Now()
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for next.Add(1) <= int64(writes-keys) {
				start := time.Now()
				if _, err := s.Update(ctx, fmt.Sprintf("/w/%04d", rng.IntN(keys)), value, 0); err != nil {
					t.Error(err)
					return
				}
				done[w] = append(done[w], interval{start, time.Now()})
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	if t.Failed() {
		return
	}

	// The compactor runs behind the writes: wait for it to prune to the
	// window's start.
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	table := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	var rev, compacted, prunedTo, logRows, currentRows int64
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT r.rev, c.compacted, c.pruned, (SELECT count(*) FROM %s), (SELECT count(*) FROM %s) FROM %s r, %s c`,
			table("log"), table("current"), table("revision"), table("compaction"))).Scan(&rev, &compacted, &prunedTo, &logRows, &currentRows)
		if err != nil {
			t.Fatal(err)
		}
		if prunedTo == compacted && rev-compacted <= history+history/10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log is not pruned a minute after the writes: revision %d, window from %d, pruned to %d", rev, compacted, prunedTo)
		}
	}
	if currentRows != keys {
		t.Errorf("%d current rows, want %d", currentRows, keys)
	}
	// Every revision of the window, and at most one older version per key.
	if limit := rev - compacted + currentRows; logRows > limit {
		t.Errorf("%d log rows, more than the window's %d revisions plus %d keys", logRows, rev-compacted, currentRows)
	}

	// What pruning left is what a read at the window's start needs.
	if list, err := s.List(ctx, "/w/", storage.ListOptions{Revision: compacted}); err != nil || len(list.Items) != keys {
		t.Errorf("List at the window's start %d: %d keys, %v; want %d", compacted, len(list.Items), err, keys)
	}
	if _, err := s.List(ctx, "/w/", storage.ListOptions{Revision: compacted - 1}); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("List before the window's start: %v, want ErrExpired", err)
	}

	// The observer is called after a pruning transaction commits, so the
	// last one may still be reporting; closing the store waits for it.
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	var all, during []time.Duration
	for _, ws := range done {
		for _, w := range ws {
			d := w.ended.Sub(w.began)
			all = append(all, d)
			for _, p := range prunes {
				if w.began.Before(p.ended) && p.began.Before(w.ended) {
					during = append(during, d)
					break
				}
			}
		}
	}
	var pruneTimes []time.Duration
	for _, p := range prunes {
		pruneTimes = append(pruneTimes, p.ended.Sub(p.began))
	}
	t.Logf("%d writes to %d keys in %v (%.0f/s) by %d writers; then revision %d, window from %d: %d log rows, %d current rows",
		writes, keys, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds(), writers, rev, compacted, logRows, currentRows)
	t.Logf("%d pruning transactions deleted %d rows; their durations: %s", len(prunes), pruned.Load(), quantiles(pruneTimes))
	t.Logf("write latency, all %d writes: %s", len(all), quantiles(all))
	t.Logf("write latency, the %d writes overlapping a pruning transaction: %s", len(during), quantiles(during))
}

func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration {
		return ds[min(len(ds)-1, int(p*float64(len(ds))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %v, p99 %v, p99.9 %v, max %v", q(0.5), q(0.99), q(0.999), ds[len(ds)-1].Round(10*time.Microsecond))
}
