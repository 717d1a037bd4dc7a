package apiserver

import (
	"bytes"
	"slices"
	"sync"
	"unsafe"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
)

// The watch cache holds a decoded object per key for as long as the key
// lives, so what each one costs is what the cache costs. json.Unmarshal
// allocates every string anew: the same kind, namespace and label keys in
// every object, and a long annotation (a padding, a last-applied
// configuration) beside the identical bytes of the stored value the cache
// keeps anyway. decodeCached shares them instead.

// decodeCached decodes a stored value for the watch cache, whose objects
// are never modified: their short repeated strings are shared with other
// objects, their long annotations with the stored value.
func (r *resource) decodeCached(kv storage.KeyValue) (any, error) {
	obj, err := r.decodeStored(kv)
	if err != nil {
		return nil, err
	}
	r.strings.shrink(obj.(kapi.Object), kv.Value)
	return obj, nil
}

const (
	// internMax is the longest string shared through the table, and
	// aliasMin the shortest looked for in the stored value: below it the
	// search costs more than the bytes saved.
	internMax = 64
	aliasMin  = 128
	// internEntries bounds the table: strings that never repeat (a label
	// holding a unique id) would otherwise fill it forever. Once full it
	// shares the strings it has and takes no more. mapEntries bounds the
	// shared maps likewise, and mapKeyMax the size of a map shared whole.
	internEntries = 4096
	mapEntries    = 1024
	mapKeyMax     = 256
)

// stringTable shares equal strings, and equal small maps (the label sets
// of the objects of one workload), between the objects of one resource.
// A map costs some 300 bytes however few its entries.
type stringTable struct {
	mu   sync.Mutex
	m    map[string]string
	maps map[string]map[string]string // by mapKey
}

func (t *stringTable) intern(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.m[s]; ok {
		return v
	}
	if len(t.m) < internEntries {
		if t.m == nil {
			t.m = make(map[string]string)
		}
		t.m[s] = s
	}
	return s
}

// shrink replaces the strings of obj's metadata with shared ones.
func (t *stringTable) shrink(obj kapi.Object, stored []byte) {
	tm := obj.GetTypeMeta()
	tm.APIVersion, tm.Kind = t.intern(tm.APIVersion), t.intern(tm.Kind)
	m := obj.GetObjectMeta()
	m.Namespace, m.GenerateName = t.intern(m.Namespace), t.intern(m.GenerateName)
	m.Labels = t.internMap(m.Labels, nil)
	m.Annotations = t.internMap(m.Annotations, stored)
	for i := range m.Finalizers {
		m.Finalizers[i] = t.intern(m.Finalizers[i])
	}
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind = t.intern(o.APIVersion), t.intern(o.Kind)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		e.Manager, e.Operation, e.APIVersion = t.intern(e.Manager), t.intern(e.Operation), t.intern(e.APIVersion)
		e.FieldsType, e.Subresource = t.intern(e.FieldsType), t.intern(e.Subresource)
	}
}

// internMap returns m with its keys and short values shared; with stored,
// its long values point into stored where they appear there as they are.
func (t *stringTable) internMap(m map[string]string, stored []byte) map[string]string {
	if len(m) == 0 {
		return m
	}
	key, ok := mapKey(m)
	if ok {
		t.mu.Lock()
		shared, found := t.maps[key]
		t.mu.Unlock()
		if found {
			return shared
		}
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) >= aliasMin && stored != nil {
			v = aliasIn(stored, v)
		} else {
			v = t.intern(v)
		}
		out[t.intern(k)] = v
	}
	if ok {
		t.mu.Lock()
		if len(t.maps) < mapEntries {
			if t.maps == nil {
				t.maps = make(map[string]map[string]string)
			}
			t.maps[key] = out
		}
		t.mu.Unlock()
	}
	return out
}

// mapKey is the content of a small map as a string, the same for equal
// maps; ok is false for a map too large to share whole.
func mapKey(m map[string]string) (string, bool) {
	n := 0
	for k, v := range m {
		if n += len(k) + len(v) + 2; n > mapKeyMax {
			return "", false
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = append(append(append(append(b, k...), 0), m[k]...), 0)
	}
	return string(b), true
}

// aliasIn returns s as a string sharing stored's bytes if they hold it
// verbatim (as JSON they do unless s has characters JSON escapes), or s.
// stored must never change: a storage value is immutable
// ([storage.KeyValue]), and the cache keeps it as long as the object.
func aliasIn(stored []byte, s string) string {
	i := bytes.Index(stored, unsafe.Slice(unsafe.StringData(s), len(s)))
	if i < 0 {
		return s
	}
	return unsafe.String(&stored[i], len(s))
}
