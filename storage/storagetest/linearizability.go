package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

// The linearizability case runs a random concurrent history of Create,
// Update, Delete and Get on a few keys, recording when each call began and
// returned, and searches for an order of the calls that a sequential store
// could have run: one that respects real time (a call that returned before
// another began comes first) and in which every call returns what the
// sequential store would have, revisions included. The search is Wing and
// Gong's, with Lowe's memoisation of (calls linearized, state) pairs, as in
// porcupine; histories are kept small so it takes milliseconds.

// linKeys is how many keys a history touches: few, so that calls collide.
const linKeys = 3

type linKind int

const (
	linCreate linKind = iota + 1
	linUpdate
	linDelete
	linGet
)

func (k linKind) String() string {
	return [...]string{"?", "Create", "Update", "Delete", "Get"}[k]
}

// linOutcome is the sentinel a call failed with, or linOK.
type linOutcome int

const (
	linOK linOutcome = iota
	linNotFound
	linExists
	linConflict
)

func (o linOutcome) String() string {
	return [...]string{"ok", "ErrNotFound", "ErrExists", "ErrConflict"}[o]
}

// linCall is one call of a history and what it returned.
type linCall struct {
	client int
	kind   linKind
	key    int // index into the history's keys
	value  string
	expect int64
	// begin and end order the call in real time: values of one counter,
	// taken just before the call and just after it returned.
	begin, end int64

	outcome linOutcome
	rev     int64            // Create, Update: the write's revision
	kv      storage.KeyValue // Get: what it read; Delete: what it removed
}

func (c linCall) String() string {
	s := fmt.Sprintf("[%d,%d] client %d: %v(k%d", c.begin, c.end, c.client, c.kind, c.key)
	if c.kind == linCreate || c.kind == linUpdate {
		s += fmt.Sprintf(", %q", c.value)
	}
	if c.kind == linUpdate || c.kind == linDelete {
		s += fmt.Sprintf(", expect %d", c.expect)
	}
	s += ") → "
	switch {
	case c.outcome != linOK:
		return s + c.outcome.String()
	case c.kind == linGet || c.kind == linDelete:
		return s + fmt.Sprintf("%q create %d mod %d", c.kv.Value, c.kv.CreateRevision, c.kv.ModRevision)
	}
	return s + fmt.Sprintf("rev %d", c.rev)
}

// linKey is one key of the sequential model.
type linKey struct {
	live        bool
	value       string
	create, mod int64
}

// linState is the sequential model: comparable, so that it can be part of
// a map key.
type linState struct {
	rev  int64
	keys [linKeys]linKey
}

// step runs c on the model: the state after it, and whether the model
// returns what c returned.
func (st linState) step(c linCall) (linState, bool) {
	k := st.keys[c.key]
	next := st.rev + 1
	switch c.kind {
	case linGet:
		if !k.live {
			return st, c.outcome == linNotFound
		}
		return st, c.outcome == linOK && string(c.kv.Value) == k.value &&
			c.kv.CreateRevision == k.create && c.kv.ModRevision == k.mod
	case linCreate:
		if k.live {
			return st, c.outcome == linExists
		}
		if c.outcome != linOK || c.rev != next {
			return st, false
		}
		st.keys[c.key] = linKey{live: true, value: c.value, create: next, mod: next}
	case linUpdate, linDelete:
		switch {
		case !k.live:
			return st, c.outcome == linNotFound
		case c.expect != 0 && c.expect != k.mod:
			return st, c.outcome == linConflict
		case c.outcome != linOK:
			return st, false
		case c.kind == linUpdate:
			if c.rev != next {
				return st, false
			}
			st.keys[c.key] = linKey{live: true, value: c.value, create: k.create, mod: next}
		default:
			if string(c.kv.Value) != k.value || c.kv.CreateRevision != k.create || c.kv.ModRevision != next {
				return st, false
			}
			st.keys[c.key] = linKey{}
		}
	}
	st.rev = next
	return st, true
}

// linEntry is a call's beginning or end in the history's list of events.
type linEntry struct {
	call       int // index into the calls
	begin      bool
	match      *linEntry // the other end of the same call
	prev, next *linEntry
}

// linearizable reports whether calls, made on a store at revision start
// whose keys did not exist, have a linearization. If not, it also returns
// the longest prefix of calls it could linearize, for the failure message.
func linearizable(calls []linCall, start int64) (bool, []int) {
	type event struct {
		at    int64
		entry *linEntry
	}
	events := make([]event, 0, 2*len(calls))
	for i, c := range calls {
		b := &linEntry{call: i, begin: true}
		e := &linEntry{call: i, match: b}
		b.match = e
		events = append(events, event{c.begin, b}, event{c.end, e})
	}
	slices.SortFunc(events, func(a, b event) int { return int(a.at - b.at) })
	head := &linEntry{}
	prev := head
	for _, ev := range events {
		prev.next, ev.entry.prev = ev.entry, prev
		prev = ev.entry
	}

	lift := func(e *linEntry) { // take a call's two entries out of the list
		e.prev.next = e.next
		if e.next != nil {
			e.next.prev = e.prev
		}
		m := e.match
		m.prev.next = m.next
		if m.next != nil {
			m.next.prev = m.prev
		}
	}
	unlift := func(e *linEntry) { // put them back, in reverse
		m := e.match
		m.prev.next = m
		if m.next != nil {
			m.next.prev = m
		}
		e.prev.next = e
		if e.next != nil {
			e.next.prev = e
		}
	}

	type frame struct {
		entry *linEntry
		state linState
	}
	type seenKey struct {
		done  string // the bitset of calls linearized
		state linState
	}
	var (
		stack   []frame
		longest []int
		done    = make([]byte, (len(calls)+7)/8)
		seen    = map[seenKey]bool{}
		state   = linState{rev: start}
		e       = head.next
	)
	for head.next != nil {
		if e.begin {
			if next, ok := state.step(calls[e.call]); ok {
				done[e.call/8] |= 1 << (e.call % 8)
				if k := (seenKey{string(done), next}); !seen[k] {
					seen[k] = true
					stack = append(stack, frame{e, state})
					state = next
					lift(e)
					if len(stack) > len(longest) {
						longest = longest[:0]
						for _, f := range stack {
							longest = append(longest, f.entry.call)
						}
					}
					e = head.next
					continue
				}
				done[e.call/8] &^= 1 << (e.call % 8)
			}
			e = e.next
			continue
		}
		// A call ended before any order could place it: undo the last
		// choice and try the next candidate instead.
		if len(stack) == 0 {
			return false, longest
		}
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		state = f.state
		done[f.entry.call/8] &^= 1 << (f.entry.call % 8)
		unlift(f.entry)
		e = f.entry.next
	}
	return true, nil
}

// recordHistory runs clients goroutines, each making perClient random
// calls on the keys prefix+"0".., and returns the calls. Calls that fail
// with an error other than the three sentinels are test failures.
func recordHistory(ctx context.Context, s storage.Interface, prefix string, clients, perClient int, seed uint64) ([]linCall, error) {
	var (
		clock  atomic.Int64
		mu     sync.Mutex
		calls  []linCall
		errs   []error
		wg     sync.WaitGroup
		keyFor = func(i int) string { return fmt.Sprintf("%s%d", prefix, i) }
	)
	for client := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(client)))
			seenRev := make([]int64, linKeys) // the last ModRevision this client saw
			for i := range perClient {
				c := linCall{client: client, key: rng.IntN(linKeys), value: fmt.Sprintf("c%d.%d", client, i)}
				key := keyFor(c.key)
				switch n := rng.IntN(20); {
				case n < 6:
					c.kind = linGet
				case n < 11:
					c.kind = linCreate
				case n < 17:
					c.kind = linUpdate
				default:
					c.kind = linDelete
				}
				if c.kind == linUpdate || c.kind == linDelete {
					// Mostly a revision that may well be current; sometimes
					// none, sometimes one surely stale.
					switch rng.IntN(4) {
					case 0:
						c.expect = 0
					case 1:
						c.expect = max(1, seenRev[c.key]-1)
					default:
						c.expect = seenRev[c.key]
					}
				}
				var err error
				c.begin = clock.Add(1)
				switch c.kind {
				case linGet:
					c.kv, err = s.Get(ctx, key, 0)
				case linCreate:
					c.rev, err = s.Create(ctx, key, []byte(c.value))
				case linUpdate:
					c.rev, err = s.Update(ctx, key, []byte(c.value), c.expect)
				case linDelete:
					c.kv, err = s.Delete(ctx, key, c.expect)
				}
				c.end = clock.Add(1)
				switch {
				case err == nil:
					seenRev[c.key] = max(c.rev, c.kv.ModRevision)
				case errors.Is(err, storage.ErrNotFound):
					c.outcome = linNotFound
				case errors.Is(err, storage.ErrExists):
					c.outcome = linExists
				case errors.Is(err, storage.ErrConflict):
					c.outcome = linConflict
				default:
					mu.Lock()
					errs = append(errs, fmt.Errorf("%v(%q): %w", c.kind, key, err))
					mu.Unlock()
					return
				}
				if c.kind == linGet || c.kind == linDelete {
					c.kv.Key = "" // the model knows keys by index
				}
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return calls, errors.Join(errs...)
}

// testLinearizable records several random concurrent histories, each on
// keys of its own, and checks that each is linearizable.
func testLinearizable(t *testing.T, s storage.Interface) {
	const rounds, clients, perClient = 8, 4, 25
	for round := range rounds {
		start := mustRevision(t, s)
		calls, err := recordHistory(t.Context(), s, fmt.Sprintf("/lin/%d/", round), clients, perClient, uint64(round))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if ok, longest := linearizable(calls, start); !ok {
			t.Fatalf("round %d: the history is not linearizable (store at %d before it)\n%s", round, start, explainHistory(calls, longest))
		}
	}
}

// explainHistory lists the calls in order of beginning, and the longest
// order of them the checker found a sequential store agreeing with.
func explainHistory(calls []linCall, longest []int) string {
	var b strings.Builder
	byBegin := slices.Clone(calls)
	slices.SortFunc(byBegin, func(a, b linCall) int { return int(a.begin - b.begin) })
	b.WriteString("calls:\n")
	for _, c := range byBegin {
		fmt.Fprintf(&b, "  %v\n", c)
	}
	fmt.Fprintf(&b, "the longest linearizable prefix found (%d of %d calls):\n", len(longest), len(calls))
	for _, i := range longest {
		fmt.Fprintf(&b, "  %v\n", calls[i])
	}
	return b.String()
}
