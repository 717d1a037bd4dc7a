package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// The directives of strategic merge patch, as kubectl and client-go write them.
const (
	directive           = "$patch"
	retainKeysDirective = "$retainKeys"
	deleteFromPrefix    = "$deleteFromPrimitiveList"
	setOrderPrefix      = "$setElementOrder"
)

// maxDepth bounds nesting as encoding/json and kapi's codecs do, so a deep
// document costs an error, not the stack.
const maxDepth = jsonskip.MaxDepth

// Patch returns original with the patch applied; original must be a JSON
// object of the type s describes. JSON Patch and merge patch ignore the
// schema; strategic merge patch takes its merge keys and strategies from it.
func (s *Schema) Patch(typ Type, original, doc []byte) ([]byte, error) {
	if typ != StrategicMergePatch {
		return Apply(typ, original, doc)
	}
	if s == nil {
		return nil, fmt.Errorf("%w: no schema for a strategic merge patch", ErrNotApplicable)
	}
	orig, err := decodeObject(original)
	if err != nil {
		return nil, fmt.Errorf("%w: the object is not a JSON object: %v", ErrNotApplicable, err)
	}
	p, err := decodeObject(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: a strategic merge patch must be a JSON object: %v", ErrMalformed, err)
	}
	var out any
	if s.anyValue() {
		out, err = mergePatch(orig, p, 0, nil)
	} else {
		if s.Kind != Struct && s.Kind != Map {
			return nil, fmt.Errorf("%w: the schema is not of an object", ErrNotApplicable)
		}
		out, err = mergeObject(s, orig, p, 0, nil)
		if err == nil {
			err = checkKinds(s, out, 0, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	return encodeJSON(out)
}

// decodeObject reads a JSON object as apimachinery reads one: an integer
// that fits is an int64, any other number a float64 (so 1.0 is written back
// as 1, which an int field accepts), and a number beyond float64 is an
// error. null reads as an empty object.
func decodeObject(data []byte) (map[string]any, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the document is not a JSON object")
	}
	if _, err := convertNumbers(m, 0); err != nil {
		return nil, err
	}
	return m, nil
}

// convertNumbers replaces the json.Numbers in v by int64s and float64s.
func convertNumbers(v any, depth int) (any, error) {
	if depth++; depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	var err error
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", v, err)
		}
		return f, nil
	case map[string]any:
		for k, x := range v {
			if v[k], err = convertNumbers(x, depth); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, x := range v {
			if v[i], err = convertNumbers(x, depth); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// path is where in the document a merge is, built only for an error.
type path struct {
	up    *path
	field string
	index int
}

func (p *path) String() string {
	if p == nil {
		return "<root>"
	}
	var parts []string
	for ; p != nil; p = p.up {
		if p.field != "" {
			parts = append(parts, "."+p.field)
		} else {
			parts = append(parts, "["+strconv.Itoa(p.index)+"]")
		}
	}
	slices.Reverse(parts)
	return strings.TrimPrefix(strings.Join(parts, ""), ".")
}

func (p *path) key(k string) *path { return &path{up: p, field: k} }
func (p *path) item(i int) *path   { return &path{up: p, index: i} }

func malformed(at *path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformed, at, fmt.Sprintf(format, args...))
}

func notApplicable(at *path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrNotApplicable, at, fmt.Sprintf(format, args...))
}

func tooDeep(at *path) error {
	return malformed(at, "nested deeper than %d", maxDepth)
}

// mergeObject merges patch p into o, an object of schema s (a Struct or a
// Map). It may modify o and p, and returns the merged object.
func mergeObject(s *Schema, o, p map[string]any, depth int, at *path) (map[string]any, error) {
	if depth++; depth > maxDepth {
		return nil, tooDeep(at)
	}
	if d, ok := p[directive]; ok {
		switch d {
		case "replace":
			delete(p, directive)
			return p, nil
		case "delete":
			return map[string]any{}, nil
		case "merge":
			// What apimachinery refuses, although its design names merge the
			// default: kapi takes it at its word.
			delete(p, directive)
		default:
			return nil, malformed(at, "unknown %s directive %v", directive, jsonText(d))
		}
	}
	if o == nil {
		o = map[string]any{}
	}
	if err := retainKeys(o, p, at); err != nil {
		return nil, err
	}
	// Keys in a fixed order, so that a patch with two errors always reports
	// the same one. First the lists $setElementOrder orders, merged and
	// ordered, as apimachinery does them. Then the deletions of
	// $deleteFromPrimitiveList, then the other fields: apimachinery takes
	// these in Go's map order, which for the small objects clients send
	// almost always puts a deletion (whose key kubectl writes first) before
	// the merge of the same list.
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, setOrderPrefix) {
			if err := setElementOrder(s, o, p, k, depth, at); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range keys {
		v, ok := p[k]
		if !ok || !strings.HasPrefix(k, deleteFromPrefix) {
			continue
		}
		name, ok := strings.CutPrefix(k, deleteFromPrefix+"/")
		if !ok {
			return nil, malformed(at.key(k), "a %s directive must name its list: %s/<field>", deleteFromPrefix, deleteFromPrefix)
		}
		if err := mergeField(s, o, name, v, true, depth, at); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		v, ok := p[k]
		if ok && !strings.HasPrefix(k, setOrderPrefix) && !strings.HasPrefix(k, deleteFromPrefix) {
			if err := mergeField(s, o, k, v, false, depth, at); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// retainKeys applies a $retainKeys directive: the fields of o it does not
// list go. apimachinery honours it wherever it appears, whatever the schema,
// and so does kapi; clients send it only where the schema asks for it.
func retainKeys(o, p map[string]any, at *path) error {
	v, ok := p[retainKeysDirective]
	if !ok {
		return nil
	}
	delete(p, retainKeysDirective)
	list, ok := v.([]any)
	if !ok {
		return malformed(at.key(retainKeysDirective), "must be a list of field names")
	}
	keep := map[string]bool{}
	for _, item := range list {
		switch item := item.(type) {
		case string:
			keep[item] = true
		case map[string]any, []any:
			return malformed(at.key(retainKeysDirective), "must be a list of field names")
		}
	}
	for k, v := range p {
		if v == nil || strings.HasPrefix(k, deleteFromPrefix) || strings.HasPrefix(k, setOrderPrefix) {
			continue
		}
		if !keep[k] {
			return malformed(at.key(k), "the patch sets a field its %s list leaves out", retainKeysDirective)
		}
	}
	for k := range o {
		if !keep[k] {
			delete(o, k)
		}
	}
	return nil
}

// mergeField merges the patch's value v of field k into o. A delete list
// ($deleteFromPrimitiveList) only ever removes.
func mergeField(s *Schema, o map[string]any, k string, v any, deleteList bool, depth int, at *path) error {
	if v == nil {
		delete(o, k)
		return nil
	}
	ov, ok := o[k]
	if !ok || kindOf(ov) != kindOf(v) {
		// Nothing to merge with: the patch's value, less its nulls and the
		// objects that carry a directive, which have nothing to act on.
		if deleteList {
			return nil
		}
		if nv, keep, err := clean(v, true, depth); err != nil {
			return err
		} else if keep {
			o[k] = nv
		} else {
			delete(o, k)
		}
		return nil
	}
	switch ov := ov.(type) {
	case map[string]any:
		f, err := fieldSchema(s, k, at)
		if err != nil {
			return err
		}
		merged, err := mergeValueObject(f, ov, v.(map[string]any), depth, at.key(k))
		if err != nil {
			return err
		}
		o[k] = merged
	case []any:
		f, err := fieldSchema(s, k, at)
		if err != nil {
			return err
		}
		merged, err := mergeValueList(f, ov, v.([]any), deleteList, depth, at.key(k))
		if err != nil {
			return err
		}
		o[k] = merged
	default:
		o[k] = v
	}
	return nil
}

// fieldSchema is the schema of field k of an object of schema s.
func fieldSchema(s *Schema, k string, at *path) (*Schema, error) {
	f := s.Field(k)
	if f == nil {
		return nil, malformed(at.key(k), "unknown field")
	}
	return f, nil
}

// mergeValueObject merges two objects at a field of schema f.
func mergeValueObject(f *Schema, o, p map[string]any, depth int, at *path) (any, error) {
	switch {
	case f.Kind != Struct && f.Kind != Map:
		return mergePatch(o, p, depth, at)
	case strategy(f) == "replace":
		return p, nil
	}
	return mergeObject(f, o, p, depth, at)
}

// mergeValueList merges two lists at a field of schema f: item by item if
// the field merges, else the patch's list replaces the object's.
func mergeValueList(f *Schema, o, p []any, deleteList bool, depth int, at *path) ([]any, error) {
	switch {
	case f.Kind != List && deleteList:
		return nil, malformed(at, "%s names a field that is not a list", deleteFromPrefix)
	case f.Kind == Struct || f.Kind == Map:
		return nil, malformed(at, "a list where an object belongs")
	case f.Kind != List, !f.Merges() && !deleteList:
		return p, nil
	}
	return mergeList(f, o, p, deleteList, depth, at)
}

// strategy is a field's patch strategy less retainKeys, which is about the
// field's object, not how it merges.
func strategy(s *Schema) string {
	for st := range strings.SplitSeq(s.PatchStrategy, ",") {
		if st != "retainKeys" {
			return st
		}
	}
	return ""
}

// JSON kinds of decoded values.
const (
	kindNull = iota
	kindBool
	kindInteger
	kindFloat
	kindString
	kindObject
	kindArray
)

func kindOf(v any) int {
	switch v.(type) {
	case bool:
		return kindBool
	case int64:
		return kindInteger
	case float64:
		return kindFloat
	case string:
		return kindString
	case map[string]any:
		return kindObject
	case []any:
		return kindArray
	}
	return kindNull
}

// itemKind is the one kind of the items of the lists; lists of mixed kinds,
// or of nulls or lists, do not merge.
func itemKind(at *path, lists ...[]any) (int, bool, error) {
	kind, found := kindNull, false
	for _, l := range lists {
		for _, v := range l {
			k := kindOf(v)
			switch {
			case k == kindNull:
				return 0, false, malformed(at, "a null item in a list that merges")
			case !found && k == kindArray:
				return 0, false, notApplicable(at, "lists of lists do not merge")
			case !found:
				kind, found = k, true
			case k != kind:
				return 0, false, malformed(at, "a list that merges holds items of different kinds")
			}
		}
	}
	return kind, found, nil
}

// clean is a patch's value where the object has none to merge with: less
// the objects that carry a $patch directive and, if dropNulls, less the
// fields set to null. keep is false if v itself goes.
func clean(v any, dropNulls bool, depth int) (out any, keep bool, err error) {
	if depth++; depth > maxDepth {
		return nil, false, tooDeep(nil)
	}
	switch v := v.(type) {
	case map[string]any:
		if dropNulls {
			for k, x := range v {
				if x == nil {
					delete(v, k)
				}
			}
		}
		if _, ok := v[directive]; ok {
			return nil, false, nil
		}
		for k, x := range v {
			nx, keep, err := clean(x, dropNulls, depth)
			if err != nil {
				return nil, false, err
			}
			if keep {
				v[k] = nx
			} else {
				delete(v, k)
			}
		}
		return v, true, nil
	case []any:
		out := make([]any, 0, len(v))
		for _, x := range v {
			nx, keep, err := clean(x, dropNulls, depth)
			if err != nil {
				return nil, false, err
			}
			if keep {
				out = append(out, nx)
			}
		}
		return out, true, nil
	}
	return v, true, nil
}

// mergePatch merges as JSON merge patch (RFC 7386) does: how strategic merge
// patch merges an untyped value, which has no schema to merge by.
func mergePatch(o, p any, depth int, at *path) (any, error) {
	if depth++; depth > maxDepth {
		return nil, tooDeep(at)
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return p, nil
	}
	om, ok := o.(map[string]any)
	if !ok {
		om = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(om, k)
			continue
		}
		merged, err := mergePatch(om[k], v, depth, at.key(k))
		if err != nil {
			return nil, err
		}
		om[k] = merged
	}
	return om, nil
}

// checkKinds refuses a result the type cannot hold: an object where a list
// or scalar belongs and so on. apimachinery's result would fail to decode
// into the type; kube-apiserver answers that 422, as kapi does.
func checkKinds(s *Schema, v any, depth int, at *path) error {
	if depth++; depth > maxDepth {
		return tooDeep(at)
	}
	if s.anyValue() || v == nil {
		return nil
	}
	k := kindOf(v)
	switch s.Kind {
	case Struct:
		if k != kindObject {
			break
		}
		for name, x := range v.(map[string]any) {
			if err := checkKinds(s.Fields[name], x, depth, at.key(name)); err != nil {
				return err
			}
		}
		return nil
	case Map:
		if k != kindObject {
			break
		}
		for name, x := range v.(map[string]any) {
			if err := checkKinds(s.Elem, x, depth, at.key(name)); err != nil {
				return err
			}
		}
		return nil
	case List:
		if k != kindArray {
			break
		}
		for i, x := range v.([]any) {
			if err := checkKinds(s.Elem, x, depth, at.item(i)); err != nil {
				return err
			}
		}
		return nil
	case Scalar:
		if isScalar(v) {
			return nil
		}
	}
	want := map[Kind]string{Struct: "an object", Map: "an object", List: "a list", Scalar: "a scalar"}[s.Kind]
	return notApplicable(at, "the patched object holds %s where the type has %s", jsonText(v), want)
}

// jsonText is v as JSON, cut short, for an error message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}
