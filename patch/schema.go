package patch

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// Kind is the JSON shape of a schema node.
type Kind uint8

// The kinds of schema nodes.
const (
	// Scalar is a string, number, boolean or null, or a type that writes its
	// own JSON as one (kapi.Time).
	Scalar Kind = iota
	// Struct is an object with fixed fields.
	Struct
	// Map is an object whose values all have one schema.
	Map
	// List is an array.
	List
	// Untyped is any JSON value (interface{}, json.RawMessage, a type that
	// writes its own JSON): merged as JSON merge patch merges, owned whole.
	Untyped
	// Deduced is any JSON value whose shape is read from the value, as
	// structured-merge-diff's deduced type reads it for what a schema
	// leaves open (x-kubernetes-preserve-unknown-fields, an object without
	// properties): an object is a granular map of Deduced values, each
	// member owned and merged apart; anything else (a list, a scalar) is
	// owned whole.
	Deduced
)

// The list types of Kubernetes' schemas (x-kubernetes-list-type).
const (
	ListAtomic = "atomic" // replaced whole
	ListSet    = "set"    // scalars, each item owned and merged by value
	ListMap    = "map"    // objects, each item owned and merged by its keys
)

// Schema is what patches need to know of a Go type: the JSON names of its
// fields and how each list, map and struct merges. Build it with [SchemaOf];
// it is immutable and safe for concurrent use.
type Schema struct {
	Kind Kind
	// Fields are a Struct's fields by JSON name.
	Fields map[string]*Schema
	// Elem is the schema of a Map's values and of a List's items, and of
	// a Struct's members that are not among its Fields (nil: it has no
	// others), as an object whose schema keeps unknown fields has them.
	Elem *Schema

	// ListType is how server-side apply merges a List: ListAtomic, ListSet
	// or ListMap, from the field's `listType` tag; without one, as
	// Kubernetes defaults it for its own types: a list with
	// `patchStrategy:"merge"` is a map keyed by its `patchMergeKey`, or a set
	// of scalars; any other list is atomic.
	ListType string
	// ListMapKeys are the keys of a ListMap's items: the field's
	// `listMapKey` tag (comma-separated), else its `patchMergeKey`.
	ListMapKeys []string
	// MapType is "atomic" for a Map or Struct that server-side apply owns
	// whole (`mapType:"atomic"` or `structType:"atomic"`), else "granular".
	MapType string

	// PatchStrategy is the field's `patchStrategy` tag for strategic merge
	// patch: "merge", "replace", "retainKeys" or "merge,retainKeys". A List
	// whose ListType is ListMap or ListSet merges even without the tag.
	PatchStrategy string
	// PatchMergeKey is the field by which the items of a merging List are
	// matched: the `patchMergeKey` tag, else the first ListMapKeys.
	PatchMergeKey string
}

// Merges says whether strategic merge patch merges this List item by item
// rather than replacing it.
func (s *Schema) Merges() bool {
	if s == nil || s.Kind != List {
		return false
	}
	if strings.Contains(s.PatchStrategy, "merge") {
		return true
	}
	return s.PatchStrategy == "" && (s.ListType == ListMap || s.ListType == ListSet)
}

// RetainsKeys says whether strategic merge patch clears the fields of this
// Struct that a patch leaves out ($retainKeys).
func (s *Schema) RetainsKeys() bool {
	return s != nil && strings.Contains(s.PatchStrategy, "retainKeys")
}

// Field returns the schema of a Struct's field, or of a Map's values; nil if
// there is no such field.
func (s *Schema) Field(name string) *Schema {
	switch {
	case s == nil:
		return nil
	case s.Kind == Struct:
		if f, ok := s.Fields[name]; ok || s.Elem == nil {
			return f
		}
		return s.Elem
	case s.Kind == Map:
		return s.Elem
	case s.Kind == Deduced:
		return s
	}
	return nil
}

// untyped is the schema of any JSON value.
var untyped = &Schema{Kind: Untyped}

// deducedObject is the schema of a JSON object where a Deduced one is.
var deducedObject = &Schema{Kind: Map, MapType: "granular", Elem: &Schema{Kind: Deduced}}

// of is the schema of v where s is: s, but for a Deduced s, the granular
// map of an object and an untyped leaf for anything else.
func (s *Schema) of(v any) *Schema {
	if s == nil || s.Kind != Deduced {
		return s
	}
	if objectLike(v) {
		return deducedObject
	}
	return untyped
}

// objectLike says whether a Deduced value is read as an object: an
// object, or null (structured-merge-diff's deduced type tries a map
// first).
func objectLike(v any) bool {
	_, ok := v.(map[string]any)
	return ok || v == nil
}

// ofJSON is of for a value as written (b without leading space).
func (s *Schema) ofJSON(b []byte) *Schema {
	if s == nil || s.Kind != Deduced {
		return s
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == 'n') {
		return deducedObject
	}
	return untyped
}

// anyValue says whether every JSON value fits s.
func (s *Schema) anyValue() bool {
	return s == nil || s.Kind == Untyped || s.Kind == Deduced
}

// metaListTypes are the list types of Kubernetes' meta types, which carry
// them in comments rather than tags.
var metaListTypes = map[reflect.Type]map[string]string{
	reflect.TypeFor[kapi.ObjectMeta]():    {"finalizers": ListSet, "ownerReferences": ListMap, "managedFields": ListAtomic},
	reflect.TypeFor[kapi.StatusDetails](): {"causes": ListAtomic},
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	rawMessage    = reflect.TypeFor[json.RawMessage]()
)

// SchemaOf derives the schema of the JSON encoding of values of type t.
func SchemaOf(t reflect.Type) (*Schema, error) {
	b := schemaBuilder{done: map[reflect.Type]*Schema{}}
	return b.of(t, "")
}

type schemaBuilder struct {
	done map[reflect.Type]*Schema // for types that refer to themselves
}

func (b *schemaBuilder) of(t reflect.Type, path string) (*Schema, error) {
	target, ok := jsonfields.Deref(t, nil)
	if !ok {
		return nil, fmt.Errorf("patch: field %s: type %v has no JSON form: its pointers have no end", path, t)
	}
	t = target
	if s, ok := b.done[t]; ok {
		return s, nil
	}
	switch {
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[kapi.Time](), t == reflect.TypeFor[kapi.MicroTime]():
		return &Schema{Kind: Scalar}, nil
	case t == rawMessage, t.Kind() == reflect.Interface:
		return untyped, nil
	case jsonfields.Implements(t, jsonMarshaler):
		return untyped, nil
	case jsonfields.Implements(t, textMarshaler):
		return &Schema{Kind: Scalar}, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &Schema{Kind: Struct, Fields: map[string]*Schema{}, MapType: "granular"}
		b.done[t] = s
		for _, f := range jsonfields.Of(t) {
			fs, err := b.field(f, path)
			if err != nil {
				return nil, err
			}
			s.Fields[f.Name] = fs
		}
		return s, nil
	case reflect.Map:
		s := &Schema{Kind: Map, MapType: "granular"}
		b.done[t] = s
		elem, err := b.of(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		s.Elem = elem
		return s, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Kind: Scalar}, nil // []byte is a base64 string
		}
		s := &Schema{Kind: List, ListType: ListAtomic}
		b.done[t] = s
		elem, err := b.of(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		s.Elem = elem
		return s, nil
	}
	return &Schema{Kind: Scalar}, nil
}

// field is the schema of a struct field: its type's, with what the field's
// tags say of how it merges.
func (b *schemaBuilder) field(f jsonfields.Field, path string) (*Schema, error) {
	if path != "" {
		path += "."
	}
	path += f.Name
	if f.Quoted {
		return &Schema{Kind: Scalar}, nil
	}
	base, err := b.of(f.Type, path)
	if err != nil {
		return nil, err
	}
	tag := f.StructField.Tag
	strategy, mergeKey := tag.Get("patchStrategy"), tag.Get("patchMergeKey")
	listType, hasListType := tag.Lookup("listType")
	if !hasListType {
		listType = metaListTypes[f.Owner][f.Name]
	}
	mapType := tag.Get("mapType")
	if mapType == "" {
		mapType = tag.Get("structType")
	}
	if strategy == "" && mergeKey == "" && listType == "" && mapType == "" && tag.Get("listMapKey") == "" {
		return base, nil
	}
	s := *base // a field's tags apply to it, not to every use of its type
	s.PatchStrategy, s.PatchMergeKey = strategy, mergeKey
	switch s.Kind {
	case List:
		if listType == "" {
			switch {
			case strings.Contains(strategy, "merge") && mergeKey != "":
				listType = ListMap
			case strings.Contains(strategy, "merge"):
				listType = ListSet
			default:
				listType = ListAtomic
			}
		}
		s.ListType = listType
		if keys := tag.Get("listMapKey"); keys != "" {
			s.ListMapKeys = strings.Split(keys, ",")
		} else if mergeKey != "" {
			s.ListMapKeys = []string{mergeKey}
		}
		if s.PatchMergeKey == "" && len(s.ListMapKeys) > 0 {
			s.PatchMergeKey = s.ListMapKeys[0]
		}
		if err := s.checkList(path); err != nil {
			return nil, err
		}
	case Map, Struct:
		if mapType != "" {
			s.MapType = mapType
		}
	}
	return &s, nil
}

// checkList refuses list tags that cannot work.
func (s *Schema) checkList(path string) error {
	if s.Elem == nil { // a list type that holds itself
		return fmt.Errorf("patch: field %s: a list that holds itself cannot be merged", path)
	}
	switch s.ListType {
	case ListAtomic:
	case ListSet:
		if s.Elem.Kind != Scalar {
			return fmt.Errorf("patch: field %s: a list of type set must hold scalars", path)
		}
	case ListMap:
		if s.Elem.Kind != Struct {
			return fmt.Errorf("patch: field %s: a list of type map must hold structs", path)
		}
		if len(s.ListMapKeys) == 0 {
			return fmt.Errorf("patch: field %s: a list of type map needs a listMapKey or patchMergeKey", path)
		}
		for _, k := range s.ListMapKeys {
			if f := s.Elem.Fields[k]; f == nil || f.Kind != Scalar {
				return fmt.Errorf("patch: field %s: list map key %q is not a scalar field of its items", path, k)
			}
		}
	default:
		return fmt.Errorf("patch: field %s: unknown list type %q (atomic, set or map)", path, s.ListType)
	}
	if s.PatchMergeKey != "" && s.Elem.Kind == Struct && s.Elem.Fields[s.PatchMergeKey] == nil {
		return fmt.Errorf("patch: field %s: patch merge key %q is not a field of its items", path, s.PatchMergeKey)
	}
	return nil
}

// MemberNames are the names of the members of a Struct's objects, sorted,
// each once: its Fields, and where it keeps members it does not name
// (Elem), those of docs, JSON objects (nothing of a document that is not
// one). A server resets the top-level fields a write to /status does not
// own by these names.
func (s *Schema) MemberNames(docs ...[]byte) []string {
	names := make([]string, 0, len(s.Fields))
	for name := range s.Fields {
		names = append(names, name)
	}
	if s.Elem != nil {
		for _, doc := range docs {
			names = appendMembers(names, doc)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// appendMembers appends the names of the members of doc, a JSON object,
// to names; nothing of a document that is not one.
func appendMembers(names []string, doc []byte) []string {
	d := jsontext.NewDecoder(bytes.NewReader(doc))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return names
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return names
		}
		names = append(names, tok.String())
		if d.SkipValue() != nil {
			return names
		}
	}
	return names
}
