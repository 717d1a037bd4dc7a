package intern

import (
	"bytes"
	"hash/maphash"
	"maps"
	"sync"
	"unsafe"

	"github.com/kapi-dev/kapi"
)

const (
	// internMax is the longest string shared through the table, and
	// aliasMin the shortest looked for in the stored value: below it the
	// search costs more than the bytes saved.
	internMax = 64
	aliasMin  = 128
	// internEntries bounds the table: strings that never repeat (a label
	// holding a unique id) would otherwise fill it forever. Once full it
	// shares the strings it has and takes no more. mapEntries bounds the
	// shared maps and field sets likewise, and mapKeyMax and fieldsKeyMax
	// the size of one shared.
	internEntries = 4096
	mapEntries    = 1024
	mapKeyMax     = 4096
	fieldsKeyMax  = 4096
)

// Table shares equal strings, equal small maps (the label sets of
// the objects of one workload, a common annotation) and equal field sets
// between the objects of one resource. A map costs some 300 bytes however
// few its entries.
type Table struct {
	mu       sync.Mutex
	m        map[string]string
	maps     map[uint64]map[string]string // by mapKey
	seed     maphash.Seed
	seedOnce sync.Once
	fields   map[string]*kapi.FieldsV1 // by the set's JSON
}

// String returns a string equal to s: one the table holds, if s is short.
func (t *Table) String(s string) string {
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

// Shrink replaces the strings of obj's metadata with shared ones.
func (t *Table) Shrink(obj kapi.Object, stored []byte) {
	tm := obj.GetTypeMeta()
	tm.APIVersion, tm.Kind = t.String(tm.APIVersion), t.String(tm.Kind)
	m := obj.GetObjectMeta()
	m.Namespace, m.GenerateName = t.String(m.Namespace), t.String(m.GenerateName)
	m.Labels = t.internMap(m.Labels, nil)
	m.Annotations = t.internMap(m.Annotations, stored)
	for i := range m.Finalizers {
		m.Finalizers[i] = t.String(m.Finalizers[i])
	}
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind = t.String(o.APIVersion), t.String(o.Kind)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		e.Manager, e.Operation, e.APIVersion = t.String(e.Manager), t.String(e.Operation), t.String(e.APIVersion)
		e.FieldsType, e.Subresource = t.String(e.FieldsType), t.String(e.Subresource)
		e.FieldsV1 = t.internFields(e.FieldsV1)
	}
}

// internFields returns a field set equal to f, shared with the other objects
// whose managers set the same fields: the objects one client writes
// usually have the same set.
func (t *Table) internFields(f *kapi.FieldsV1) *kapi.FieldsV1 {
	if f == nil || len(f.Raw) > fieldsKeyMax {
		return f
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if shared, ok := t.fields[string(f.Raw)]; ok {
		return shared
	}
	if len(t.fields) < mapEntries {
		if t.fields == nil {
			t.fields = make(map[string]*kapi.FieldsV1)
		}
		t.fields[string(f.Raw)] = f
	}
	return f
}

// internMap returns a map equal to m: one the table already holds, or one
// with its keys and short values shared and, if the table cannot take it
// and stored is given, its long values pointing into stored where they
// appear there as they are.
func (t *Table) internMap(m map[string]string, stored []byte) map[string]string {
	if len(m) == 0 {
		return m
	}
	key, ok := t.mapKey(m)
	if ok {
		t.mu.Lock()
		shared, found := t.maps[key]
		t.mu.Unlock()
		if found && maps.Equal(shared, m) {
			return shared
		}
	}
	// A map the table may keep must not point into stored: the table
	// would keep the whole value alive after its object is gone.
	if ok {
		stored = nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) >= aliasMin && stored != nil {
			v = Alias(stored, v)
		} else {
			v = t.String(v)
		}
		out[t.String(k)] = v
	}
	if ok {
		t.mu.Lock()
		if _, taken := t.maps[key]; !taken && len(t.maps) < mapEntries {
			if t.maps == nil {
				t.maps = make(map[uint64]map[string]string)
			}
			t.maps[key] = out
		}
		t.mu.Unlock()
	}
	return out
}

// mapKey hashes a map's content, the same for equal maps whatever their
// order; ok is false for a map too large to share whole, which the table
// would keep alive after its objects are gone.
func (t *Table) mapKey(m map[string]string) (uint64, bool) {
	t.seedOnce.Do(func() { t.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(t.seed)
	var sum uint64
	n := 0
	for k, v := range m {
		if n += len(k) + len(v); n > mapKeyMax {
			return 0, false
		}
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum, true
}

// Alias returns s as a string sharing stored's bytes if they hold it
// verbatim (as JSON they do unless s has characters JSON escapes), or s.
// stored must never change: a storage value is immutable
// ([storage.KeyValue]), and the cache keeps it as long as the object.
func Alias(stored []byte, s string) string {
	i := bytes.Index(stored, unsafe.Slice(unsafe.StringData(s), len(s)))
	if i < 0 {
		return s
	}
	return unsafe.String(&stored[i], len(s))
}
