package watch

// A LIST of a whole collection that has not changed since the last one
// finds the same items again: the walk over the cache's tree and the slice
// it fills cost a LIST of 500 widgets served from kept bytes (apiserver's
// listcache) some 40% of its CPU before the response's first byte. A
// snapshot, which never changes, keeps the items of the last few whole
// collections listed from it (no start, no limit, no filter), and a later
// List of one of them returns the same slice; a change publishes a new
// snapshot with none.

// wholeListsMax is how many collections' items a snapshot keeps: one
// collection's lists alternate with few others' (other namespaces) before
// the next change.
const wholeListsMax = 4

// wholeListItemsMax bounds the collections kept: the walk's cost counts
// against a small list's, not against a LIST of many thousands of objects,
// whose slice would be memory kept for little.
const wholeListItemsMax = 16 << 10

// wholeList is the items under prefix in a snapshot, the last kept first.
// It is never changed once published.
type wholeList struct {
	prefix string
	items  []*Item
	next   *wholeList
}

// wholeList returns the items kept for prefix, or nil.
func (s *snapshot) wholeList(prefix string) []*Item {
	for l := s.lists.Load(); l != nil; l = l.next {
		if l.prefix == prefix {
			return l.items
		}
	}
	return nil
}

// keepWholeList keeps items as the whole collection under prefix, with at
// most wholeListsMax-1 of those kept before. Two lists that keep at once
// lose one of theirs: the next list walks again.
func (s *snapshot) keepWholeList(prefix string, items []*Item) {
	if len(items) == 0 || len(items) > wholeListItemsMax {
		return
	}
	head := s.lists.Load()
	old := head
	l := &wholeList{prefix: prefix, items: items}
	tail := &l.next
	for n := 1; old != nil && n < wholeListsMax; old = old.next {
		if old.prefix != prefix {
			*tail = &wholeList{prefix: old.prefix, items: old.items}
			tail = &(*tail).next
			n++
		}
	}
	s.lists.CompareAndSwap(head, l) // or another list kept meanwhile stays
}
