package apiserver

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/intern"
	ksel "github.com/kapi-dev/kapi/internal/selector"
	"github.com/kapi-dev/kapi/watch"
)

// selector is a label selector and a field selector, both parsed; the zero
// value selects everything.
type selector struct {
	labels []ksel.Requirement
	fields []fieldRequirement
	// view, if set, is a cached item in the version the fields are of.
	view func(*watch.Item) kapi.Object
}

// fieldRequirement is a field selector's requirement and the field it reads.
type fieldRequirement struct {
	ksel.Requirement
	value func(kapi.Object) string // the field
	index int                      // and its place in a summary's fields
}

// summary is what the watch cache keeps of each object of a resource
// besides its stored value (watch.KeepSummary): what selectors read, so
// that a selected list or watch decodes no object the garbage collector
// took. It is the object's labels, key and value after key in key order,
// and the values of the resource's selectable fields other than
// metadata.name and metadata.namespace, which its key says, in the order
// of the resource's summaryFields. Most objects of a resource share a
// few label sets and field values: equal summaries are one (see
// summaries).
type summary struct {
	labels []string
	fields []string
}

// summaries shares equal summaries between the objects of one resource,
// up to a bound: a summary that never repeats (a label holding a unique
// id) would otherwise stay in the table after its object is gone.
type summaries struct {
	mu  sync.Mutex
	m   map[string]*summary // by content (summaryKey)
	buf []byte
}

const (
	summaryEntries = 4096
	summaryKeyMax  = 1024
)

// summarize is the summary of obj, an object of r stored as value: a
// shared one if the table has it; else a new one whose strings point into
// value where they are there as they are, so that they cost no bytes.
func (r *resource) summarize(obj any, value []byte) any {
	o, ok := obj.(kapi.Object)
	if !ok {
		return nil
	}
	labels := o.GetObjectMeta().Labels
	s := &summary{labels: make([]string, 0, 2*len(labels))}
	var arr [16]string // a few labels: sorted without a slice of their own
	keys := arr[:0]
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.labels = append(s.labels, k, labels[k])
	}
	if len(r.summaryFields) > 0 {
		s.fields = make([]string, len(r.summaryFields))
		for i, name := range r.summaryFields {
			s.fields[i] = r.fields[name](o)
		}
	}
	return r.summaries.share(s, value)
}

func (t *summaries) share(s *summary, value []byte) *summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
	for _, part := range [][]string{s.labels, s.fields} {
		t.buf = binary.AppendUvarint(t.buf, uint64(len(part)))
		for _, v := range part { // each with its length: any byte may be in it
			t.buf = binary.AppendUvarint(t.buf, uint64(len(v)))
			t.buf = append(t.buf, v...)
		}
	}
	if shared, ok := t.m[string(t.buf)]; ok {
		return shared
	}
	if len(t.buf) <= summaryKeyMax && len(t.m) < summaryEntries {
		if t.m == nil {
			t.m = make(map[string]*summary)
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

// label is the value of the label key.
func (s *summary) label(key string) (string, bool) {
	for i := 0; i+1 < len(s.labels); i += 2 {
		if s.labels[i] == key {
			return s.labels[i+1], true
		}
	}
	return "", false
}

func (s selector) empty() bool { return len(s.labels) == 0 && len(s.fields) == 0 }

// parseSelectors reads labelSelector and fieldSelector; a syntax error or an
// unsupported field is 400.
func (rq *request) parseSelectors() (selector, error) {
	var sel selector
	var err error
	if sel.labels, err = ksel.ParseLabels(rq.query.Get("labelSelector")); err != nil {
		return sel, badRequest("unable to parse requirement: %v", err)
	}
	fields, err := ksel.ParseFields(rq.query.Get("fieldSelector"))
	if err != nil {
		return sel, badRequest("%v", err)
	}
	for _, r := range fields {
		f := fieldRequirement{Requirement: r, value: rq.res.fields[r.Key]}
		if f.value == nil {
			return sel, badRequest("field label not supported: %s", r.Key)
		}
		f.index = slices.Index(rq.res.storageVersion().summaryFields, r.Key)
		sel.fields = append(sel.fields, f)
	}
	if len(sel.fields) > 0 && rq.res.converts() {
		// The cache holds the storage version; the fields are the
		// request's version's.
		res := rq.res
		sel.view = func(it *watch.Item) kapi.Object {
			v, err := res.versioned(it)
			if err != nil {
				return nil // selects nothing; reading it fails too
			}
			obj, err := cachedObject(v)
			if err != nil {
				return nil
			}
			return obj
		}
	}
	return sel, nil
}

// matches says whether obj is selected.
func (s selector) matches(obj kapi.Object) bool {
	if !s.labelsMatch(obj.GetObjectMeta().Labels) {
		return false
	}
	for _, r := range s.fields {
		if !r.Matches(r.value(obj), true) {
			return false
		}
	}
	return true
}

func (s selector) labelsMatch(labels map[string]string) bool {
	for _, r := range s.labels {
		v, ok := labels[r.Key]
		if !r.Matches(v, ok) {
			return false
		}
	}
	return true
}

// matchesSummary says whether the object at key, summarized by sum, is
// selected.
func (s selector) matchesSummary(key string, sum *summary) bool {
	for _, r := range s.labels {
		v, ok := sum.label(r.Key)
		if !r.Matches(v, ok) {
			return false
		}
	}
	for _, r := range s.fields {
		var v string
		switch {
		case r.Key == "metadata.name":
			v = key[strings.LastIndexByte(key, '/')+1:]
		case r.Key == "metadata.namespace":
			v = key[:max(strings.LastIndexByte(key, '/'), 0)]
			v = v[strings.LastIndexByte(v, '/')+1:]
		case r.index >= 0 && r.index < len(sum.fields):
			v = sum.fields[r.index]
		default:
			return false
		}
		if !r.Matches(v, true) {
			return false
		}
	}
	return true
}

// filter is the selector as a cache filter, nil when it selects everything.
func (s selector) filter() func(*watch.Item) bool {
	if s.empty() {
		return nil
	}
	if s.view != nil {
		return func(it *watch.Item) bool {
			obj := s.view(it)
			return obj != nil && s.matches(obj)
		}
	}
	return func(it *watch.Item) bool {
		if sum, ok := it.Summary.(*summary); ok {
			return s.matchesSummary(it.Key, sum)
		}
		obj, err := cachedObject(it)
		return err == nil && s.matches(obj)
	}
}
