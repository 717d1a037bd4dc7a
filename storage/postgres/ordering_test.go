package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// A watch must not skip a revision whose transaction commits after a later
// revision's: the failure kine has (k3s-io/kine#676), where revisions come
// from a sequence and a poller reading "id > last" moves past one still
// being committed. The test makes it likely: several stores on one schema,
// as replicas would be, each with concurrent writers, and a delay between a
// transaction's revisions being assigned and its commit, long for every
// other transaction; then every watcher's stream is compared with the
// history the log table holds.

// lateCommits delays the commit of a transaction whose first revision is
// even, so that others overtake it if they can.
func lateCommits(revs []int64) {
	if revs[0]%2 == 0 {
		time.Sleep(15 * time.Millisecond)
	}
}

func TestWatchNeverSkipsALateCommit(t *testing.T) {
	opt := postgres.WithBeforeCommit(lateCommits)
	if os.Getenv("KAPI_POSTGRES_BREAK_ORDER") != "" {
		// To see this test fail: the store broken as kine is.
		t.Log("KAPI_POSTGRES_BREAK_ORDER is set: revisions from a sequence, commits in any order")
		opt = postgres.WithUnorderedRevisions(lateCommits)
	}
	for _, p := range watchSkips(t, opt) {
		t.Error(p)
	}
}

// TestWatchSkipCheckCatchesUnorderedCommits keeps the test above honest: on
// a store broken on purpose, whose transactions may commit out of revision
// order, the same check finds watchers that skipped revisions.
//
// Whether a watcher skips depends on the poller reading between two
// commits; the delays make that all but certain, and a few tries make a
// miss on a very loaded machine unlikely too.
func TestWatchSkipCheckCatchesUnorderedCommits(t *testing.T) {
	for try := 1; try <= 3; try++ {
		problems := watchSkips(t, postgres.WithUnorderedRevisions(lateCommits))
		if len(problems) > 0 {
			t.Logf("as it should, the check caught the broken store (try %d): %d problems, the first: %s", try, len(problems), problems[0])
			return
		}
	}
	t.Fatal("in three tries, no watcher of a store committing out of revision order skipped a revision: the check would not catch it")
}

// watchSkips writes through several stores on one schema while watchers on
// each follow, and returns how each watcher's stream differs from the log's
// history.
func watchSkips(t *testing.T, opts ...postgres.Option) []string {
	const stores, writersPerStore, keysPerWriter, watchersPerStore = 4, 3, 10, 2
	schema := freshSchema(t)
	var all []*postgres.Store
	for range stores {
		all = append(all, mustStore(t, schema, opts...))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	type watcher struct {
		name   string
		events <-chan storage.Event
	}
	var watchers []watcher
	for i, s := range all {
		for j := range watchersPerStore {
			ch, err := s.Watch(ctx, "/", 0)
			if err != nil {
				t.Fatal(err)
			}
			watchers = append(watchers, watcher{fmt.Sprintf("store %d watcher %d", i, j), ch})
		}
	}

	// Each writer creates its keys, updates each twice, deletes every
	// third.
	var wg sync.WaitGroup
	for i, s := range all {
		for w := range writersPerStore {
			wg.Go(func() {
				for k := range keysPerWriter {
					key := fmt.Sprintf("/s%d/w%d/k%d", i, w, k)
					if _, err := s.Create(ctx, key, []byte("0")); err != nil {
						t.Errorf("create %s: %v", key, err)
						return
					}
					for u := 1; u <= 2; u++ {
						if _, err := s.Update(ctx, key, []byte(fmt.Sprint(u)), 0); err != nil {
							t.Errorf("update %s: %v", key, err)
							return
						}
					}
					if k%3 == 0 {
						if _, err := s.Delete(ctx, key, 0); err != nil {
							t.Errorf("delete %s: %v", key, err)
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	history := logHistory(t, schema)
	if len(history) == 0 {
		t.Fatal("the log is empty")
	}
	last := history[len(history)-1].rev
	t.Logf("%d writes through %d stores, revisions %d to %d", len(history), stores, history[0].rev, last)

	var (
		mu       sync.Mutex
		problems []string
	)
	for _, w := range watchers {
		wg.Go(func() {
			got := receiveUntil(ctx, w.events, last, 15*time.Second)
			if d := diffHistory(history, got); d != "" {
				mu.Lock()
				problems = append(problems, w.name+": "+d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return problems
}

// change is one revision of the history: its key and what it did.
type change struct {
	rev     int64
	key     string
	deleted bool
}

func (c change) String() string {
	if c.deleted {
		return fmt.Sprintf("%d delete %s", c.rev, c.key)
	}
	return fmt.Sprintf("%d put %s", c.rev, c.key)
}

// logHistory reads the schema's log table: every write, in revision order.
func logHistory(t *testing.T, schema string) []change {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), baseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT rev, key, deleted FROM "+pgx.Identifier{schema, "log"}.Sanitize()+" ORDER BY rev")
	if err != nil {
		t.Fatal(err)
	}
	var history []change
	for rows.Next() {
		var (
			c   change
			key []byte
		)
		if err := rows.Scan(&c.rev, &key, &c.deleted); err != nil {
			t.Fatal(err)
		}
		c.key = string(key)
		history = append(history, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return history
}

// receiveUntil receives events until one at revision last or later, the
// stream's end, or quiet passes without an event.
func receiveUntil(ctx context.Context, events <-chan storage.Event, last int64, quiet time.Duration) []change {
	var got []change
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok || ev.Err != nil {
				return got
			}
			got = append(got, change{ev.ModRevision, ev.Key, ev.Type == storage.Delete})
			if ev.ModRevision >= last {
				return got
			}
			timer.Reset(quiet)
		case <-timer.C:
			return got
		case <-ctx.Done():
			return got
		}
	}
}

// diffHistory says how a watcher's stream differs from the history: the
// first revisions it skipped, repeated or got wrong.
func diffHistory(history, got []change) string {
	var d []string
	i, j := 0, 0
	for (i < len(history) || j < len(got)) && len(d) < 5 {
		switch {
		case j == len(got):
			d = append(d, fmt.Sprintf("ended before %v (%d of %d events)", history[i], j, len(history)))
			i = len(history)
		case i == len(history):
			d = append(d, fmt.Sprintf("%v after the last write", got[j]))
			j++
		case history[i] == got[j]:
			i++
			j++
		case history[i].rev < got[j].rev:
			d = append(d, fmt.Sprintf("skipped %v", history[i]))
			i++
		default:
			d = append(d, fmt.Sprintf("got %v, the log has %v", got[j], history[i]))
			j++
		}
	}
	return strings.Join(d, "; ")
}
