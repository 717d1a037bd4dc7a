package apiserver

import (
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
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

// summarize is the watch cache's summary of obj, an object of r stored as
// value (watch.KeepSummary; see selector.Summary): its labels and the
// values of the resource's selectable fields other than metadata.name and
// metadata.namespace, which its key says, in the order of the resource's
// summaryFields.
func (r *resource) summarize(obj any, value []byte) any {
	o, ok := obj.(kapi.Object)
	if !ok {
		return nil
	}
	var fields []string
	if len(r.summaryFields) > 0 {
		fields = make([]string, len(r.summaryFields))
		for i, name := range r.summaryFields {
			fields[i] = r.fields[name](o)
		}
	}
	return r.summaries.Summarize(o.GetObjectMeta().Labels, fields, value)
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
func (s selector) matchesSummary(key string, sum *ksel.Summary) bool {
	for _, r := range s.labels {
		v, ok := sum.Label(r.Key)
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
		default:
			var ok bool
			if v, ok = sum.Field(r.index); !ok {
				return false
			}
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
		if sum, ok := it.Summary.(*ksel.Summary); ok {
			return s.matchesSummary(it.Key, sum)
		}
		obj, err := cachedObject(it)
		return err == nil && s.matches(obj)
	}
}
