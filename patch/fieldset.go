package patch

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// fieldPath is a path from the object's root to one field or item.
type fieldPath []pathElement

// with returns a new path one element longer; p itself is never changed.
func (p fieldPath) with(e pathElement) fieldPath {
	out := make(fieldPath, len(p)+1)
	copy(out, p)
	out[len(p)] = e
	return out
}

// key identifies the path in a fieldSet.
func (p fieldPath) key() string {
	size := 0
	for _, e := range p {
		size += e.formLen() + 4 // a length of up to three digits and ':'
	}
	var b strings.Builder
	b.Grow(size) // one allocation per key: a write computes thousands
	var digits [20]byte
	for _, e := range p {
		b.Write(strconv.AppendInt(digits[:0], int64(e.formLen()), 10))
		b.WriteByte(':')
		if e.kind == 'f' {
			b.WriteString("f:")
			b.WriteString(e.field)
		} else {
			b.WriteString(e.str)
		}
	}
	return b.String()
}

// String is the path as kube-apiserver prints it: .spec.ports[name="http"].port.
func (p fieldPath) String() string {
	var b strings.Builder
	for _, e := range p {
		b.WriteString(e.String())
	}
	return b.String()
}

// fieldSet is a set of field paths. A path in the set is owned as a whole
// (Kubernetes calls it a member); its parents are in the set only when they
// are members themselves.
type fieldSet map[string]fieldPath

func (s fieldSet) insert(p fieldPath) {
	if len(p) > 0 {
		s[p.key()] = p
	}
}

func (s fieldSet) has(p fieldPath) bool {
	_, ok := s[p.key()]
	return ok
}

// The operations below never change a set: they make a new one, or return
// one of theirs when the result is equal to it, so that a manager's set
// that a write leaves alone is still the one read (sameSet), and written
// back as it was read.

func (s fieldSet) union(o fieldSet) fieldSet {
	if len(o) == 0 {
		return s
	}
	if len(s) == 0 {
		return o
	}
	out := make(fieldSet, len(s)+len(o))
	for k, p := range s {
		out[k] = p
	}
	for k, p := range o {
		out[k] = p
	}
	return out
}

func (s fieldSet) minus(o fieldSet) fieldSet {
	if len(o) == 0 || len(s) == 0 || !s.meets(o) {
		return s
	}
	out := make(fieldSet, len(s))
	for k, p := range s {
		if _, ok := o[k]; !ok {
			out[k] = p
		}
	}
	return out
}

// meets says whether s and o have a path in common.
func (s fieldSet) meets(o fieldSet) bool {
	if len(o) < len(s) {
		s, o = o, s
	}
	for k := range s {
		if _, ok := o[k]; ok {
			return true
		}
	}
	return false
}

// equal says whether s and o hold the same paths.
func (s fieldSet) equal(o fieldSet) bool {
	if len(s) != len(o) {
		return false
	}
	for k := range s {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// sameSet says whether a and b are the same set, not only equal ones.
func sameSet(a, b fieldSet) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// intersect is nil (empty) when s and o have no path in common, the usual
// case of a manager's set and what a write changed.
// It looks up the smaller set's paths in the larger; the paths are s's.
func (s fieldSet) intersect(o fieldSet) fieldSet {
	var out fieldSet
	if len(o) < len(s) {
		for k := range o {
			if p, ok := s[k]; ok {
				if out == nil {
					out = fieldSet{}
				}
				out[k] = p
			}
		}
		return out
	}
	for k, p := range s {
		if _, ok := o[k]; ok {
			if out == nil {
				out = fieldSet{}
			}
			out[k] = p
		}
	}
	return out
}

// subsetOf says whether every path of s is in o.
func (s fieldSet) subsetOf(o fieldSet) bool {
	if len(s) > len(o) {
		return false
	}
	for k := range s {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// filter keeps the paths keep says yes to.
func (s fieldSet) filter(keep func(fieldPath) bool) fieldSet {
	all := true
	for _, p := range s {
		if !keep(p) {
			all = false
			break
		}
	}
	if all {
		return s
	}
	out := make(fieldSet, len(s))
	for k, p := range s {
		if keep(p) {
			out[k] = p
		}
	}
	return out
}

// prefixes are the keys of every proper prefix of the set's paths: where a
// removal must look deeper.
func (s fieldSet) prefixes() map[string]bool {
	out := map[string]bool{}
	for _, p := range s {
		for i := 1; i < len(p); i++ {
			out[p[:i].key()] = true
		}
	}
	return out
}

// setNode is a fieldSet as a tree, the shape of FieldsV1.
type setNode struct {
	elem     pathElement
	member   bool
	children []*setNode          // sorted once built
	index    map[string]*setNode // once there are many children
}

// indexAt is how many children a node looks through before it indexes
// them: most have a few.
const indexAt = 16

func (n *setNode) child(e pathElement) *setNode {
	if n.index != nil {
		if c := n.index[e.id()]; c != nil {
			return c
		}
	} else {
		for _, c := range n.children {
			if c.elem.same(e) {
				return c
			}
		}
	}
	c := &setNode{elem: e}
	n.children = append(n.children, c)
	switch {
	case n.index != nil:
		n.index[e.id()] = c
	case len(n.children) > indexAt:
		n.index = make(map[string]*setNode, 2*len(n.children))
		for _, c := range n.children {
			n.index[c.elem.id()] = c
		}
	}
	return c
}

func (s fieldSet) tree() *setNode {
	root := &setNode{}
	for _, p := range s {
		n := root
		for _, e := range p {
			n = n.child(e)
		}
		n.member = true
	}
	root.sort()
	return root
}

func (n *setNode) sort() {
	slices.SortFunc(n.children, func(a, b *setNode) int { return compareElements(a.elem, b.elem) })
	for _, c := range n.children {
		c.sort()
	}
}

// paths lists the set in Kubernetes' order: at each level the members
// first, then the contents of each child, both sorted.
func (s fieldSet) paths() []fieldPath {
	var out []fieldPath
	var walk func(n *setNode, prefix fieldPath)
	walk = func(n *setNode, prefix fieldPath) {
		for _, c := range n.children {
			if c.member {
				out = append(out, prefix.with(c.elem))
			}
		}
		for _, c := range n.children {
			if len(c.children) > 0 {
				walk(c, prefix.with(c.elem))
			}
		}
	}
	walk(s.tree(), nil)
	return out
}

// MarshalJSON writes the set in the FieldsV1 form: at each level the
// elements in Kubernetes' order, a member with children marked ".". It
// sorts the paths once and writes them in that order, opening and closing
// the levels between one path and the next, rather than building the set's
// tree: a write encodes its manager's set, every field of the object.
func (s fieldSet) MarshalJSON() ([]byte, error) {
	ps := make([]fieldPath, 0, len(s))
	size := 2
	for _, p := range s {
		ps = append(ps, p)
		size += 4 + p[len(p)-1].formLen() + 4
	}
	slices.SortFunc(ps, comparePaths)
	b := make([]byte, 0, size)
	b = append(b, '{')
	// open is the path whose levels are open (the last written); member
	// says which of them are members, filled which objects (the root's
	// first) have an entry already.
	var open fieldPath
	var member []bool
	filled := []bool{false}
	for _, p := range ps {
		n := 0
		for n < len(open) && n < len(p) && open[n].same(p[n]) {
			n++
		}
		for len(open) > n {
			b = append(b, '}')
			open, member, filled = open[:len(open)-1], member[:len(member)-1], filled[:len(filled)-1]
		}
		if n > 0 && member[n-1] && !filled[n] {
			b = append(b, `".":{}`...)
			filled[n] = true
		}
		for d := n; d < len(p); d++ {
			if filled[d] {
				b = append(b, ',')
			}
			filled[d] = true
			b = appendElementJSON(b, p[d])
			b = append(b, ':', '{')
			open, member, filled = append(open, p[d]), append(member, d == len(p)-1), append(filled, false)
		}
	}
	for range open {
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// comparePaths orders paths element by element, a path before those it
// is a prefix of: the order in which FieldsV1 lists them.
func comparePaths(a, b fieldPath) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareElements(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpInt(len(a), len(b))
}

// appendElementJSON appends an element's FieldsV1 form as a JSON string.
func appendElementJSON(b []byte, e pathElement) []byte {
	if e.kind == 'f' && plainJSON(e.field) {
		b = append(b, `"f:`...)
		b = append(b, e.field...)
		return append(b, '"')
	}
	return appendJSONString(b, e.form())
}

// parsedSet is a FieldsV1 as read, and as kapi writes it back.
type parsedSet struct {
	set     fieldSet
	encoded []byte
}

// parsedSets remembers the FieldsV1 last read: an object's managedFields
// are read on every write to it, and most writes leave most entries as
// they were (and objects written by the same client alike have equal
// ones). Its sets are never changed (the operations above make new ones).
var parsedSets struct {
	sync.Mutex
	m map[string]*parsedSet
}

// maxParsedSets bounds the memory parsedSets holds: a few MiB at most.
const maxParsedSets = 512

// parseFieldSetCached is parseFieldSet through parsedSets, and first
// through recentParsed.
func parseFieldSetCached(raw []byte) (*parsedSet, error) {
	slot := &recentParsed[recentSlot(raw)]
	seen := slot.Load()
	if seen != nil && bytes.Equal(seen.encoded, raw) {
		return seen, nil // its encoding, which reads as its set
	}
	parsedSets.Lock()
	p := parsedSets.m[string(raw)]
	parsedSets.Unlock()
	if p != nil {
		if bytes.Equal(p.encoded, raw) {
			// Unless a set was remembered meanwhile (rememberParsedAs),
			// which p, read before, must not replace.
			slot.CompareAndSwap(seen, p)
		}
		return p, nil
	}
	set, err := parseFieldSet(raw)
	if err != nil {
		return nil, err
	}
	encoded, _ := set.MarshalJSON()
	p = &parsedSet{set: set, encoded: encoded}
	rememberParsedAs(raw, p) // and in slot
	return p, nil
}

// recentParsed keeps the sets read lately whose FieldsV1 is as kapi
// writes it (the entries kapi wrote, read on the next write), each in a
// slot picked by its length and a few of its bytes: one is found by
// comparing its bytes with the set's encoding, without the lock, hash
// and map of parsedSets that every write of the server shares.
var recentParsed [1 << slotBits]atomic.Pointer[parsedSet]

func recentSlot(raw []byte) int {
	h := uint32(len(raw)) * 16777619
	for _, i := range [...]int{len(raw) / 2, len(raw) * 3 / 4, len(raw) - 2} {
		if i >= 0 && i < len(raw) {
			h = (h ^ uint32(raw[i])) * 16777619
		}
	}
	return int(h >> (32 - slotBits))
}

// rememberParsed keeps p in parsedSets by its encoding, as read back.
func rememberParsed(p *parsedSet) { rememberParsedAs(p.encoded, p) }

func rememberParsedAs(raw []byte, p *parsedSet) {
	parsedSets.Lock()
	if len(parsedSets.m) >= maxParsedSets || parsedSets.m == nil {
		parsedSets.m = make(map[string]*parsedSet, maxParsedSets)
	}
	parsedSets.m[string(raw)] = p
	parsedSets.Unlock()
	if bytes.Equal(p.encoded, raw) {
		// The set parsedSets gives for raw from now on, which the
		// slot gives too: a set kept as an apply's (appliedSetOf) is
		// the one its entry reads back as (ApplyMerged's sameSet).
		recentParsed[recentSlot(raw)].Store(p)
	}
}

// parseFieldSet reads the FieldsV1 form.
func parseFieldSet(raw []byte) (fieldSet, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return fieldSet{}, nil
		}
		return nil, errors.New("fieldsV1 is not an object")
	}
	out := fieldSet{}
	var read func(m map[string]any, prefix fieldPath) error
	read = func(m map[string]any, prefix fieldPath) error {
		for k, child := range m {
			if k == "." {
				continue
			}
			e, err := parseElement(k)
			if errors.Is(err, errUnknownElement) {
				continue
			}
			if err != nil {
				return fmt.Errorf("fieldsV1 key %q: %v", k, err)
			}
			cm, ok := child.(map[string]any)
			if !ok {
				return fmt.Errorf("fieldsV1 key %q: value is not an object", k)
			}
			p := prefix.with(e)
			if _, self := cm["."]; self || !hasKnownChildren(cm) {
				out.insert(p)
			}
			if err := read(cm, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := read(root, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// hasKnownChildren says whether a FieldsV1 node names any field below it;
// a node that names none is a member, as Kubernetes reads it.
func hasKnownChildren(m map[string]any) bool {
	for k := range m {
		if k == "." {
			continue
		}
		if _, err := parseElement(k); err == nil {
			return true
		}
	}
	return false
}
