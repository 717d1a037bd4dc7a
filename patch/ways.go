package patch

import "sync/atomic"

// ways is one set of a small cache kept by a hash (the live objects' hints,
// the configurations' trees): an entry whose hash falls in the set is
// looked for in each of its ways, and one stored takes the way of its own
// key, else an empty one, else the oldest stored. With one entry a hash,
// two keys in use by turns whose hashes met replaced each other's entry at
// every use, and neither was ever found (two of the load harness's 8
// widgets did so in about a third of its runs, each apply to them taking
// the slow path); four ways make that rare enough (five of eight keys in
// one of 16 sets: ~0.1 %).
type ways[T any, P stamped[T]] [cacheWays]atomic.Pointer[T]

const cacheWays = 4

// stamped is an entry of ways: it holds a wayStamp.
type stamped[T any] interface {
	*T
	stamp() *wayStamp
}

// wayStamp orders the entries stored, for the oldest of a set to go.
type wayStamp struct{ stored uint64 }

func (s *wayStamp) stamp() *wayStamp { return s }

var wayClock atomic.Uint64

// find is the entry of w that is is's, nil if none.
func (w *ways[T, P]) find(is func(P) bool) P {
	for i := range w {
		if e := P(w[i].Load()); e != nil && is(e) {
			return e
		}
	}
	return nil
}

// store keeps e in w: in the way of the entry that is is's, else of none,
// else of the oldest. Two stores at once may pick one way: an entry lost
// costs the next use what a miss costs, nothing else.
func (w *ways[T, P]) store(e P, is func(P) bool) {
	e.stamp().stored = wayClock.Add(1)
	victim, oldest := -1, uint64(0)
	for i := range w {
		switch old := P(w[i].Load()); {
		case old != nil && is(old):
			w[i].Store(e)
			return
		case old == nil:
			victim, oldest = i, 0
		case victim < 0 || old.stamp().stored < oldest:
			victim, oldest = i, old.stamp().stored
		}
	}
	w[victim].Store(e)
}
