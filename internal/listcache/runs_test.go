package listcache

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// item is one version of an object: a new pointer for each change.
type item struct{ data []byte }

func newItems(n, size int) []*item {
	items := make([]*item, n)
	for i := range items {
		items[i] = &item{data: fmt.Appendf(nil, "%0*d", size, i)}
	}
	return items
}

// joinCounting joins items, counting the items whose bytes it made, and
// checks the runs are the items' bytes in order.
func joinCounting(t *testing.T, c *Runs[*item], key string, rev int64, items []*item) (joined [][]byte, made int) {
	t.Helper()
	joined, err := c.Join(key, rev, items, func(dst []byte, it *item) ([]byte, error) {
		made++
		return append(append(dst, ','), it.data...), nil
	})
	if err != nil {
		t.Error(err) // not Fatal: it runs in other goroutines too
		return nil, made
	}
	if joined == nil {
		return nil, made
	}
	var want []byte
	for _, it := range items {
		want = append(append(want, ','), it.data...)
	}
	if got := bytes.Join(joined, nil); !bytes.Equal(got, want) {
		t.Errorf("joined %d bytes, not the items' %d", len(got), len(want))
	}
	return joined, made
}

func TestRunsReuse(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	c.Use(&budget)
	const n, size = 4000, 1000 // about 8 runs
	items := newItems(n, size)
	if joined, made := joinCounting(t, &c, "a", 1, items); joined != nil || made != 0 {
		t.Fatalf("a first list joined %d runs, made %d items", len(joined), made)
	}
	joined, made := joinCounting(t, &c, "a", 2, items)
	if made != n || len(joined) < 4 {
		t.Fatalf("the second list made %d items in %d runs, want all in several", made, len(joined))
	}
	if _, made = joinCounting(t, &c, "a", 3, items); made != 0 {
		t.Errorf("the same items again: %d made, want 0", made)
	}
	// One item changed: the run holding it is made again, no other.
	items[500] = &item{data: []byte("changed")}
	if _, made = joinCounting(t, &c, "a", 4, items); made == 0 || made > RunBytes/size+1 {
		t.Errorf("one item changed: %d made, want one run's", made)
	}
	// One inserted, one gone: the runs after them are found again.
	items = slices.Insert(items, 100, &item{data: []byte("new")})
	items = slices.Delete(items, 800, 801)
	if _, made = joinCounting(t, &c, "a", 5, items); made == 0 || made > 2*(RunBytes/size+1) {
		t.Errorf("one item inserted, one deleted: %d made, want two runs'", made)
	}
	// Lists of an older state leave the newer runs kept.
	if _, made = joinCounting(t, &c, "a", 4, items[:10]); made == 0 {
		t.Errorf("a list of other items reused runs")
	}
	if _, made = joinCounting(t, &c, "a", 6, items); made != 0 {
		t.Errorf("the runs of an older list replaced the newer: %d made", made)
	}
	// Another key is another collection.
	if joined, _ := joinCounting(t, &c, "b", 6, items); joined != nil {
		t.Errorf("a first list of another key joined runs")
	}
	if budget.bytes < n*size*9/10 || budget.bytes > 2*n*size {
		t.Errorf("budget holds %d bytes, want the runs of one list of %d", budget.bytes, n*size)
	}
}

func TestRunsTooLarge(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	c.Use(&budget)
	items := newItems(RunsMax/(64<<10)+1, 64<<10) // over RunsMax
	joinCounting(t, &c, "a", 1, items)
	// The second list gives up once its runs pass RunsMax, not after
	// making all of them.
	if joined, made := joinCounting(t, &c, "a", 2, items); joined != nil || made == 0 || made >= len(items) {
		t.Fatalf("the second list joined %d runs, made %d of %d items; want none joined, the making given up past RunsMax", len(joined), made, len(items))
	}
	if budget.bytes != 0 {
		t.Errorf("budget holds %d bytes of a collection too large to keep", budget.bytes)
	}
	if joined, made := joinCounting(t, &c, "a", 3, items); joined != nil || made != 0 {
		t.Errorf("a collection too large to keep is joined again (%d made)", made)
	}
	// Smaller, it is kept again.
	joinCounting(t, &c, "a", 4, items[:10])
	if joined, made := joinCounting(t, &c, "a", 5, items[:10]); joined == nil || made != 0 {
		t.Errorf("the collection, smaller, is not kept (%d made)", made)
	}
}

// Runs and bodies share one budget: runs no list used since the budget
// last ran short are dropped to make room.
func TestRunsBudget(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	c.Use(&budget)
	// 7/8 of RunsMax: each run holds on to 9/8 of its bytes, so two
	// collections' runs fill the budget and a third's do not fit.
	items := newItems(RunsMax*7/8/(64<<10), 64<<10)
	for _, key := range []string{"a", "b"} {
		joinCounting(t, &c, key, 1, items)
		joinCounting(t, &c, key, 2, items)
	}
	if budget.bytes <= RunsMax {
		t.Fatalf("budget holds %d bytes, want two collections' runs", budget.bytes)
	}
	joinCounting(t, &c, "a", 3, items) // a is used, b is not
	joinCounting(t, &c, "c", 1, items)
	joinCounting(t, &c, "c", 2, items) // no room: a and b are marked unused, b dropped
	joinCounting(t, &c, "a", 4, items)
	joinCounting(t, &c, "c", 3, items)
	if _, made := joinCounting(t, &c, "c", 4, items); made != 0 {
		t.Errorf("c's runs were not kept once b's went (%d made)", made)
	}
	if _, made := joinCounting(t, &c, "b", 3, items); made != len(items) {
		t.Errorf("b's runs, unused, were kept (%d made)", made)
	}
	if budget.bytes > listBytesMax {
		t.Errorf("budget holds %d bytes, over %d", budget.bytes, listBytesMax)
	}
}

// Lists at once, of states that change under them, each get their own
// items' bytes (joinCounting checks them); run with -race.
func TestRunsConcurrent(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	c.Use(&budget)
	states := make([][]*item, 20)
	states[0] = newItems(500, 1000)
	for i := 1; i < len(states); i++ {
		s := slices.Clone(states[i-1])
		s[(i*37)%len(s)] = &item{data: fmt.Appendf(nil, "changed %d", i)}
		states[i] = s
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range states {
				j := (i + g) % len(states)
				joinCounting(t, &c, "a", int64(j), states[j])
			}
		})
	}
	wg.Wait()
}

// A collection growing at its end between lists keeps few runs, each
// holding on to little more than its bytes: a small last run is joined
// into the next list's new one, not kept beside it.
func TestRunsGrowingAtTheEnd(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	c.Use(&budget)
	items := newItems(3000, 1000)
	joinCounting(t, &c, "a", 1, items)
	for rev := int64(2); rev < 200; rev++ {
		items = append(items, newItems(1, 1000)...)
		joinCounting(t, &c, "a", rev, items)
	}
	c.mu.Lock()
	s := c.sets["a"]
	c.mu.Unlock()
	data, held := 0, 0
	for _, r := range s.runs {
		data += len(r.data)
		held += cap(r.data)
	}
	if limit := data/(RunBytes/4) + 2; len(s.runs) > limit {
		t.Errorf("%d runs for %d bytes, want at most %d", len(s.runs), data, limit)
	}
	if held > data+data/4 || budget.bytes != held {
		t.Errorf("runs hold on to %d bytes for %d (budget counts %d)", held, data, budget.bytes)
	}
}

// A resource no longer served leaves the budget: its runs' and bodies'
// bytes are given back, the budget no longer asks it to drop any, and it
// keeps nothing after.
func TestLeave(t *testing.T) {
	var budget Budget
	var c Runs[*item]
	var l Bodies
	c.Use(&budget)
	budget.Add(&l, func() int64 { return 1 })
	items := newItems(8, 64<<10)
	joinCounting(t, &c, "a", 1, items)
	joinCounting(t, &c, "a", 2, items)
	share := func(change int64) []byte {
		data, _, err := l.Share(context.Background(), "/a", change, 1, func() ([][]byte, error) { return [][]byte{make([]byte, 1000)}, nil }, 1, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	share(1)
	share(1)
	if budget.bytes <= 1000 || len(budget.members) != 2 {
		t.Fatalf("budget holds %d bytes of %d members, want both's", budget.bytes, len(budget.members))
	}
	c.Leave()
	l.Leave()
	if budget.bytes != 0 || len(budget.members) != 0 {
		t.Errorf("after both left, the budget holds %d bytes of %d members", budget.bytes, len(budget.members))
	}
	joinCounting(t, &c, "a", 3, items)
	joinCounting(t, &c, "a", 4, items)
	share(2)
	if share(2) != nil {
		t.Error("bodies that left would keep a list")
	}
	if budget.bytes != 0 {
		t.Errorf("runs that left were kept: %d bytes", budget.bytes)
	}
}
