package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/validation"
)

// ValidateUpdate is Validate of an update from old to obj, with
// kube-apiserver's validation ratcheting: a value the schema refuses but
// that the update leaves as it was (an object stored before its schema
// tightened) is no error. Values are matched to old ones by member name,
// and the items of x-kubernetes-list-type map lists by their keys; other
// list items, and values under allOf, anyOf, oneOf and not, are compared
// only as part of what holds them. The uniqueness of set and map items is
// checked only if the old object had no duplicates, as kube-apiserver
// does.
func (s *Schema) ValidateUpdate(obj, old any) []*validation.Error {
	if s == nil {
		return nil
	}
	var errs []*validation.Error
	for _, e := range s.checkRatcheting(obj, "", &Correlation{value: obj, old: old, schema: s}).errs {
		errs = append(errs, e.fieldError(""))
	}
	if s.walks(walkEmbedded) {
		errs = append(errs, s.validateEmbedded("", obj, false)...)
	}
	if s.walks(walkLists) && len(s.validateLists("", old)) == 0 {
		errs = append(errs, s.validateLists("", obj)...)
	}
	slices.SortStableFunc(errs, func(a, b *validation.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// Correlation is a value of an updated object with its old value and
// schema (kube's CorrelatedObject over the structural schema).
type Correlation struct {
	value, old any
	schema     *Schema
	// oldItems indexes the old items of a map list by key, built as
	// items are looked up (nil until then).
	oldItems *keyedItems
	// equal caches unchanged: 0 unknown, 1 equal, 2 different.
	equal uint8
}

// key is the correlation of member name, nil if it has none: the member
// is missing from either value, or the schema says nothing of it.
func (c *Correlation) key(name string) *Correlation {
	if c == nil || c.schema == nil {
		return nil
	}
	oldMap, ok1 := c.old.(map[string]any)
	newMap, ok2 := c.value.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	oldValue, ok1 := oldMap[name]
	newValue, ok2 := newMap[name]
	if !ok1 || !ok2 {
		return nil
	}
	sub, ok := c.schema.Properties[name]
	if !ok {
		sub = c.schema.AdditionalProperties
	}
	if sub == nil {
		return nil
	}
	return &Correlation{value: newValue, old: oldValue, schema: sub}
}

// index is the correlation of item i: only items of map lists have one,
// the old item with the same keys.
func (c *Correlation) index(i int) *Correlation {
	if c == nil || c.schema == nil {
		return nil
	}
	oldList, ok1 := c.old.([]any)
	newList, ok2 := c.value.([]any)
	if !ok1 || !ok2 || i >= len(newList) || c.schema.ListType == nil || *c.schema.ListType != ListMap {
		return nil
	}
	if c.oldItems == nil {
		c.oldItems = newKeyedItems(c.schema, oldList)
	}
	oldItem := c.oldItems.get(newList[i])
	if oldItem == nil || c.schema.Items == nil {
		return nil
	}
	return &Correlation{value: newList[i], old: oldItem, schema: c.schema.Items}
}

// unchanged says whether the value is its old value: members and map
// list items compared by correlation (one that has none makes a
// difference), other lists and scalars as Go values.
func (c *Correlation) unchanged() bool {
	if c == nil {
		return false
	}
	if c.equal == 0 {
		c.equal = 2
		if c.compare() {
			c.equal = 1
		}
	}
	return c.equal == 1
}

func (c *Correlation) compare() bool {
	if c.value == nil || c.old == nil {
		return c.value == nil && c.old == nil
	}
	oldList, oldIsList := c.old.([]any)
	newList, newIsList := c.value.([]any)
	oldMap, oldIsMap := c.old.(map[string]any)
	newMap, newIsMap := c.value.(map[string]any)
	if oldIsList != newIsList || oldIsMap != newIsMap {
		return false
	}
	switch {
	case oldIsList:
		if len(oldList) != len(newList) {
			return false
		}
		for i := range newList {
			sub := c.index(i)
			if sub == nil {
				if c.oldItems == nil {
					return reflect.DeepEqual(oldList, newList)
				}
				return false
			}
			if !sub.unchanged() {
				return false
			}
		}
		return true
	case oldIsMap:
		if len(oldMap) != len(newMap) {
			return false
		}
		for k := range newMap {
			sub := c.key(k)
			if sub == nil || !sub.unchanged() {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(c.old, c.value)
}

// keyedItems finds the items of a map list by their keys, indexing them
// lazily; the first of items with equal keys is the one found.
type keyedItems struct {
	keys    []string
	byKey   map[any]any
	pending []any
}

func newKeyedItems(s *Schema, items []any) *keyedItems {
	if s.Type != "array" || len(s.ListMapKeys) == 0 || len(items) == 0 {
		return &keyedItems{}
	}
	return &keyedItems{keys: s.ListMapKeys, byKey: map[any]any{}, pending: items}
}

// keyOf is an item's key: its one key's scalar value, or its key values
// written out; ok false if it lacks one or one is not a scalar.
func (k *keyedItems) keyOf(item map[string]any) (any, bool) {
	if len(k.keys) == 1 {
		v, ok := item[k.keys[0]]
		switch v.(type) {
		case bool, float64, int64, string:
			return v, ok
		}
		return nil, false
	}
	var b strings.Builder
	for _, name := range k.keys {
		v, ok := item[name]
		if !ok {
			return nil, false
		}
		switch v := v.(type) {
		case bool:
			fmt.Fprintf(&b, "\x00%t", v)
		case float64:
			fmt.Fprintf(&b, "\x00%f", v)
		case int64:
			fmt.Fprintf(&b, "\x00%d", v)
		case string:
			fmt.Fprintf(&b, "\x00%q", v)
		default:
			return nil, false
		}
	}
	return b.String(), true
}

func (k *keyedItems) get(item any) any {
	m, ok := item.(map[string]any)
	if !ok || len(k.keys) == 0 {
		return nil
	}
	key, ok := k.keyOf(m)
	if !ok {
		return nil
	}
	if match, ok := k.byKey[key]; ok {
		return match
	}
	for len(k.pending) > 0 {
		next := k.pending[0]
		k.pending = k.pending[1:]
		nm, ok := next.(map[string]any)
		if !ok {
			continue
		}
		nk, ok := k.keyOf(nm)
		if !ok {
			continue
		}
		if _, seen := k.byKey[nk]; !seen {
			k.byKey[nk] = nm
		}
		if nk == key {
			return nm
		}
	}
	return nil
}

// Correlate pairs obj, the new value of an update, with old, its value
// before, under s, for a rule evaluator that ratchets as ValidateUpdate
// does (package validation/cel). A nil *Correlation, and the methods of
// one, stand for a value with no old counterpart.
func Correlate(obj, old any, s *Schema) *Correlation {
	return &Correlation{value: obj, old: old, schema: s}
}

// Key is the correlation of the member name of an object, nil if either
// value lacks it or the schema does not specify it.
func (c *Correlation) Key(name string) *Correlation { return c.key(name) }

// Index is the correlation of item i of a list: only the items of an
// x-kubernetes-list-type map list have one, the old item with the same
// keys.
func (c *Correlation) Index(i int) *Correlation { return c.index(i) }

// Unchanged says whether the update left the value as it was (false for
// a nil Correlation).
func (c *Correlation) Unchanged() bool { return c.unchanged() }

// Old is the value before the update (nil for a nil Correlation).
func (c *Correlation) Old() any {
	if c == nil {
		return nil
	}
	return c.old
}
