package selector

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/internal/intern"
)

// Summary is what a watch cache keeps of an object besides its stored
// value: what selectors read, so that a selected list or watch decodes no
// object the garbage collector took. Most objects of a resource share a
// few label sets and field values: equal summaries are one (see
// Summaries). A Summary is never changed once made.
type Summary struct {
	// labels are the object's labels, key and value after key in key
	// order.
	labels []string
	// fields are the values of the resource's selectable fields, in an
	// order the resource chooses (its caller's indexes).
	fields []string
}

// Label is the value of the label key.
func (s *Summary) Label(key string) (string, bool) {
	for i := 0; i+1 < len(s.labels); i += 2 {
		if s.labels[i] == key {
			return s.labels[i+1], true
		}
	}
	return "", false
}

// Field is the value of the field at index i of the order the summary was
// made with, if it has one.
func (s *Summary) Field(i int) (string, bool) {
	if i < 0 || i >= len(s.fields) {
		return "", false
	}
	return s.fields[i], true
}

// Summaries shares equal summaries between the objects of one resource,
// up to a bound: a summary that never repeats (a label holding a unique
// id) would otherwise stay in the table after its object is gone. The zero
// value is an empty table; it is safe for concurrent use.
type Summaries struct {
	mu  sync.Mutex
	m   map[string]*Summary // by content (the key made in Summarize)
	buf []byte
}

// The table's bounds: how many summaries it keeps, and the largest one
// (encoded) it keeps.
const (
	summaryEntries = 4096
	summaryKeyMax  = 1024
)

// Summarize is the summary of an object with labels and the given field
// values, stored as value: a shared one if the table has it; else a new
// one whose strings point into value where they are there as they are, so
// that they cost no bytes. fields may be kept: the caller must not change
// it afterwards. The labels are sorted on the stack: a shared summary (most
// objects') costs no allocation here, where one of its own and its labels'
// slice were two per write.
func (t *Summaries) Summarize(labels map[string]string, fields []string, value []byte) *Summary {
	var arr [16]string // a few labels: sorted without a slice of their own
	keys := arr[:0]
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var pairArr [32]string
	pairs := pairArr[:0]
	for _, k := range keys {
		pairs = append(pairs, k, labels[k])
	}
	return t.share(pairs, fields, value)
}

// share is the shared summary of labels (key, value, ... in key order;
// not kept) and fields, or a new one.
func (t *Summaries) share(labels, fields []string, value []byte) *Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
	for _, part := range [2][]string{labels, fields} {
		t.buf = binary.AppendUvarint(t.buf, uint64(len(part)))
		for _, v := range part { // each with its length: any byte may be in it
			t.buf = binary.AppendUvarint(t.buf, uint64(len(v)))
			t.buf = append(t.buf, v...)
		}
	}
	if shared, ok := t.m[string(t.buf)]; ok {
		return shared
	}
	s := &Summary{labels: append(make([]string, 0, len(labels)), labels...), fields: fields}
	if len(t.buf) <= summaryKeyMax && len(t.m) < summaryEntries {
		if t.m == nil {
			t.m = make(map[string]*Summary)
		}
		// Its own copies of the strings: the decoded object's may point
		// into its stored value (see intern.Table.Shrink), which the table would keep.
		for _, part := range [][]string{s.labels, s.fields} {
			for i, v := range part {
				part[i] = strings.Clone(v)
			}
		}
		t.m[string(t.buf)] = s
		return s
	}
	for _, part := range [][]string{s.labels, s.fields} {
		for i, v := range part {
			if v != "" && len(value) > 0 {
				part[i] = intern.Alias(value, v)
			}
		}
	}
	return s
}
