package apiserver

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/intern"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/watch"
)

// selector is a label selector and a field selector, both parsed; the zero
// value selects everything.
type selector struct {
	labels []requirement
	fields []requirement
	// view, if set, is a cached item in the version the fields are of.
	view func(*watch.Item) kapi.Object
}

type requirement struct {
	key    string
	op     string // "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
	values []string
	value  func(kapi.Object) string // a field requirement's field
	index  int                      // and its place in a summary's fields
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
	if sel.labels, err = parseLabelSelector(rq.query.Get("labelSelector")); err != nil {
		return sel, badRequest("unable to parse requirement: %v", err)
	}
	if sel.fields, err = parseFieldSelector(rq.query.Get("fieldSelector")); err != nil {
		return sel, badRequest("%v", err)
	}
	for i, r := range sel.fields {
		if sel.fields[i].value = rq.res.fields[r.key]; sel.fields[i].value == nil {
			return sel, badRequest("field label not supported: %s", r.key)
		}
		sel.fields[i].index = slices.Index(rq.res.storageVersion().summaryFields, r.key)
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
		if !r.matches(r.value(obj), true) {
			return false
		}
	}
	return true
}

func (s selector) labelsMatch(labels map[string]string) bool {
	for _, r := range s.labels {
		v, ok := labels[r.key]
		if !r.matches(v, ok) {
			return false
		}
	}
	return true
}

// matchesSummary says whether the object at key, summarized by sum, is
// selected.
func (s selector) matchesSummary(key string, sum *summary) bool {
	for _, r := range s.labels {
		v, ok := sum.label(r.key)
		if !r.matches(v, ok) {
			return false
		}
	}
	for _, r := range s.fields {
		var v string
		switch {
		case r.key == "metadata.name":
			v = key[strings.LastIndexByte(key, '/')+1:]
		case r.key == "metadata.namespace":
			v = key[:max(strings.LastIndexByte(key, '/'), 0)]
			v = v[strings.LastIndexByte(v, '/')+1:]
		case r.index >= 0 && r.index < len(sum.fields):
			v = sum.fields[r.index]
		default:
			return false
		}
		if !r.matches(v, true) {
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

func (r requirement) matches(v string, present bool) bool {
	switch r.op {
	case "exists":
		return present
	case "!":
		return !present
	case "=", "in":
		return present && slices.Contains(r.values, v)
	case "!=", "notin":
		return !present || !slices.Contains(r.values, v)
	case "gt", "lt":
		n, err := strconv.ParseInt(v, 10, 64)
		if !present || err != nil {
			return false
		}
		bound, _ := strconv.ParseInt(r.values[0], 10, 64)
		return r.op == "gt" && n > bound || r.op == "lt" && n < bound
	}
	return false
}

var (
	setRequirement = regexp.MustCompile(`^(\S+)\s+(in|notin)\s*\((.*)\)$`)
)

// parseLabelSelector reads the label selector syntax: comma-separated
// requirements key, !key, key=v, key==v, key!=v, key in (a,b),
// key notin (a,b), key>n, key<n.
func parseLabelSelector(s string) ([]requirement, error) {
	var reqs []requirement
	for _, part := range splitTopLevel(s) {
		part = strings.TrimSpace(part)
		var r requirement
		switch {
		case part == "":
			return nil, fmt.Errorf("found '', expected: identifier")
		case strings.HasPrefix(part, "!"):
			r = requirement{key: strings.TrimSpace(part[1:]), op: "!"}
		case setRequirement.MatchString(part):
			m := setRequirement.FindStringSubmatch(part)
			r = requirement{key: m[1], op: m[2]}
			for _, v := range strings.Split(m[3], ",") {
				r.values = append(r.values, strings.TrimSpace(v))
			}
		default:
			key, op, value, found := cutOperator(part, "!=", "==", "=", ">", "<")
			if !found {
				r = requirement{key: part, op: "exists"}
				break
			}
			switch op {
			case "==":
				op = "="
			case ">":
				op = "gt"
			case "<":
				op = "lt"
			}
			r = requirement{key: key, op: op, values: []string{value}}
			if op == "gt" || op == "lt" {
				if _, err := strconv.ParseInt(value, 10, 64); err != nil {
					return nil, fmt.Errorf("for 'Gt', 'Lt' operators, the value must be an integer: %q", value)
				}
			}
		}
		if msgs := names.IsQualifiedName(r.key); len(msgs) > 0 {
			return nil, fmt.Errorf("invalid label key %q: %s", r.key, strings.Join(msgs, "; "))
		}
		for _, v := range r.values {
			if msgs := names.IsLabelValue(v); (r.op != "gt" && r.op != "lt") && len(msgs) > 0 {
				return nil, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(msgs, "; "))
			}
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// parseFieldSelector reads key=v, key==v and key!=v, comma-separated.
func parseFieldSelector(s string) ([]requirement, error) {
	var reqs []requirement
	for _, part := range splitTopLevel(s) {
		key, op, value, found := cutOperator(strings.TrimSpace(part), "!=", "==", "=")
		if !found || key == "" {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		if op == "==" {
			op = "="
		}
		reqs = append(reqs, requirement{key: key, op: op, values: []string{value}})
	}
	return reqs, nil
}

// splitTopLevel splits at commas outside parentheses; "" has no parts.
func splitTopLevel(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// cutOperator splits s at the first of ops found (earlier ops win at the same
// position, so "!=" is not read as "=").
func cutOperator(s string, ops ...string) (key, op, value string, found bool) {
	best := -1
	for _, o := range ops {
		if i := strings.Index(s, o); i >= 0 && (best < 0 || i < best) {
			best, op = i, o
		}
	}
	if best < 0 {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:best]), op, strings.TrimSpace(s[best+len(op):]), true
}
