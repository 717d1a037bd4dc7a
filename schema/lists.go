package schema

import (
	"encoding/json"
	"strconv"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// The merge strategies of x-kubernetes-list-type and x-kubernetes-map-type,
// which server-side apply follows.
const (
	ListAtomic = "atomic" // the list is replaced whole (the default)
	ListSet    = "set"    // scalar items merge as a set
	ListMap    = "map"    // object items merge by their keys (ListMapKeys)

	MapGranular = "granular" // members merge one by one (the default)
	MapAtomic   = "atomic"   // the object is replaced whole
)

// Field is the schema of an object's member: its property's, or else the
// additional properties' (a map's values); nil if neither.
func (s *Schema) Field(name string) *Schema { return s.fieldSchema(name) }

// At follows a path of member names from s; "[]" steps into a list's
// items. It returns nil where the schema says nothing.
func (s *Schema) At(path ...string) *Schema {
	for _, seg := range path {
		if s == nil {
			return nil
		}
		if seg == "[]" {
			s = s.Items
		} else {
			s = s.fieldSchema(seg)
		}
	}
	return s
}

// ListStrategy is how server-side apply merges a list of this schema: its
// x-kubernetes-list-type (ListAtomic when not given) and, for ListMap,
// the item fields that identify an item.
func (s *Schema) ListStrategy() (listType string, keys []string) {
	if s == nil || s.ListType == nil {
		return ListAtomic, nil
	}
	return *s.ListType, s.ListMapKeys
}

// MapStrategy is how server-side apply merges an object of this schema:
// its x-kubernetes-map-type, MapGranular when not given.
func (s *Schema) MapStrategy() string {
	if s == nil || s.MapType == nil {
		return MapGranular
	}
	return *s.MapType
}

// validateLists refuses duplicate items in x-kubernetes-list-type set
// and map lists (apiextensions-apiserver's ValidateListSetsAndMaps).
func (s *Schema) validateLists(path string, obj any) []*validation.Error {
	m, ok := obj.(map[string]any)
	if !ok || !s.walks(walkLists) {
		return nil
	}
	var errs []*validation.Error
	if s.AdditionalProperties != nil {
		for k := range m {
			errs = append(errs, s.AdditionalProperties.listsIn(keyPath(path, k), m[k])...)
		}
	}
	if s.Properties != nil {
		for k := range m {
			if prop, ok := s.Properties[k]; ok {
				errs = append(errs, prop.listsIn(child(path, k), m[k])...)
			}
		}
	}
	return errs
}

// keyPath is field.Path's Key: path[key].
func keyPath(path, key string) string { return path + "[" + key + "]" }

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (s *Schema) listsIn(path string, v any) []*validation.Error {
	if !s.walks(walkLists) {
		return nil
	}
	switch v := v.(type) {
	case []any:
		var errs []*validation.Error
		if s.ListType != nil {
			switch *s.ListType {
			case ListSet:
				for _, i := range repeated(v) {
					errs = append(errs, duplicate(indexPath(path, i), v[i]))
				}
			case ListMap:
				errs = append(errs, s.listMapDuplicates(path, v)...)
			}
		}
		if s.Items != nil {
			for i, x := range v {
				errs = append(errs, s.Items.listsIn(indexPath(path, i), x)...)
			}
		}
		return errs
	case map[string]any:
		return s.validateLists(path, v)
	}
	return nil
}

func duplicate(path string, v any) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueDuplicate, Field: path, BadValue: v}
}

// repeated returns the index of the second of each value the list holds
// more than once. Scalars are equal when they are the same Go value (1
// and 1.0 differ); objects and lists when their JSON is the same.
func repeated(l []any) []int {
	if len(l) <= 1 {
		return nil
	}
	seen := make(map[any]int, len(l))
	var out []int
	for i, x := range l {
		var key any = x
		switch x.(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(x)
			key = compound(b)
		}
		seen[key]++
		if seen[key] == 2 {
			out = append(out, i)
		}
	}
	return out
}

// compound is the JSON text of an object or list, a map key apart from
// strings.
type compound string

type unspecifiedKey struct{}

func (s *Schema) listMapDuplicates(path string, l []any) []*validation.Error {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return []*validation.Error{{Type: kapi.CauseTypeFieldValueInvalid, Field: indexPath(path, i), BadValue: x,
				Detail: "must be an object for an array of list-type map"}}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	var errs []*validation.Error
	if len(s.ListMapKeys) == 1 {
		name := s.ListMapKeys[0]
		keys := make([]any, len(l))
		for i, x := range l {
			keys[i] = unspecifiedKey{}
			if m, ok := x.(map[string]any); ok {
				if k, ok := m[name]; ok {
					keys[i] = k
				}
			}
		}
		for _, i := range repeated(keys) {
			shown := map[string]any{}
			if keys[i] != (unspecifiedKey{}) {
				shown[name] = keys[i]
			}
			errs = append(errs, duplicate(indexPath(path, i), shown))
		}
		return errs
	}
	keys := make([]any, len(l))
	for i, x := range l {
		key := map[string]any{}
		if m, ok := x.(map[string]any); ok {
			for _, name := range s.ListMapKeys {
				if k, ok := m[name]; ok {
					key[name] = k
				}
			}
		}
		keys[i] = key
	}
	for _, i := range repeated(keys) {
		errs = append(errs, duplicate(indexPath(path, i), keys[i]))
	}
	return errs
}
