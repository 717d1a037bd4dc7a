package validation

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/kapi-dev/kapi/internal/deepequal"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// Schema is the compiled constraints of a Go type's fields: what to default
// and what to check, found once by For. A Schema is immutable and safe for
// concurrent use.
type Schema struct {
	typ  reflect.Type
	root *node // nil when the type declares nothing
}

// node is what a type holds to default or check, below one value.
type node struct {
	fields []*field // of a struct
	elem   *node    // of a list's items or a map's values
	list   bool     // elem is a list's (else a map's)

	// What the walks below it may find.
	defaults, checks bool
}

type field struct {
	name      string
	index     []int
	rules     *Rules // nil when the field declares nothing
	omitEmpty bool   // `json:",omitempty"`
	omitZero  bool   // `json:",omitzero"`
	inner     *node  // of the field's value, without pointers; nil when nothing is below
	program   Program
	jsonType  string // of the field's value in OpenAPI, for a failed rule's message
	// conditions says the field is a []kapi.Condition, checked as
	// Kubernetes checks conditions (see Conditions).
	conditions bool
}

// A RuleEngine compiles the expressions of rule tags. Package
// github.com/kapi-dev/kapi/validation/cel is one for CEL, the language of a
// CRD's x-kubernetes-validations.
type RuleEngine interface {
	Compile(rule string) (Program, error)
}

// A Program is a compiled rule.
type Program interface {
	// Eval says whether the rule holds of self, a field's value in its JSON
	// form (map[string]any, []any, string, int64, float64, bool, nil), and
	// oldSelf, its value before an update (nil on create).
	Eval(self, oldSelf any) (bool, error)
	// Transition says that the rule reads oldSelf, so that it is evaluated
	// on updates only, as a CRD's transition rules are.
	Transition() bool
}

// An Option changes how For compiles.
type Option func(*builder)

// WithRuleEngine compiles and evaluates rule tags with e. Without it, a
// rule tag is an error.
func WithRuleEngine(e RuleEngine) Option { return func(b *builder) { b.engine = e } }

// For compiles the validate, pattern, default and rule tags of the fields of
// t (a struct type, or a pointer to one) and of every type below it. A tag
// that is malformed or does not fit its field's type is an error naming the
// field.
func For(t reflect.Type, opts ...Option) (*Schema, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("validation: %v is not a struct type", t)
	}
	b := &builder{nodes: map[nodeKey]*node{}, building: map[nodeKey]bool{}}
	for _, o := range opts {
		o(b)
	}
	root, err := b.build(t, "", false)
	if err != nil {
		return nil, fmt.Errorf("validation: %v: %w", t, err)
	}
	return &Schema{typ: t, root: root}, nil
}

type builder struct {
	nodes    map[nodeKey]*node // nil for a type with nothing to do
	building map[nodeKey]bool
	engine   RuleEngine
}

// nodeKey tells apart a struct type's node in a list, where immutable
// fields are refused, from its node elsewhere.
type nodeKey struct {
	typ    reflect.Type
	inList bool
}

// build compiles the node of values of type t (without pointers) at path.
// inList says the values are items of a list or map, where an old value
// has no counterpart to compare with.
func (b *builder) build(t reflect.Type, path string, inList bool) (*node, error) {
	t, ok := jsonfields.Deref(t, nil)
	if !ok || jsonfields.DecodesItself(t) {
		return nil, nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		key := nodeKey{t, inList}
		if b.building[key] || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			// A list or map of itself (type Tree map[string]Tree) holds
			// nothing to check but the structs on the way, which have
			// their own nodes; []byte is base64.
			return nil, nil
		}
		b.building[key] = true
		defer delete(b.building, key)
		elem, err := b.build(t.Elem(), path+"[]", true)
		if err != nil || elem == nil {
			return nil, err
		}
		return &node{elem: elem, list: t.Kind() != reflect.Map, defaults: elem.defaults, checks: elem.checks}, nil
	case reflect.Struct:
	default:
		return nil, nil
	}
	key := nodeKey{t, inList}
	if b.building[key] {
		// A type that contains itself: the node being built stands for
		// it, walked conservatively.
		n := b.nodes[key]
		n.defaults, n.checks = true, true
		return n, nil
	}
	if n, ok := b.nodes[key]; ok {
		return n, nil
	}
	n := &node{}
	b.nodes[key], b.building[key] = n, true
	defer delete(b.building, key)
	var errs []error
	for _, jf := range jsonfields.Of(t) {
		fieldPath := jf.Name
		if path != "" {
			fieldPath = path + "." + jf.Name
		}
		rules, err := RulesOf(jf.StructField)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", fieldPath, jf.Owner, err))
			continue
		}
		if rules != nil && rules.Immutable && inList {
			errs = append(errs, fmt.Errorf("%s (%s): immutable fields must be reached through structs, not lists or maps", fieldPath, jf.Owner))
			continue
		}
		var program Program
		if rules != nil && rules.Rule != "" {
			if program, err = b.compile(rules.Rule); err == nil && program.Transition() && inList {
				err = errors.New("rules that read oldSelf must be reached through structs, not lists or maps")
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): rule %q: %w", fieldPath, jf.Owner, rules.Rule, err))
				continue
			}
		}
		inner, err := b.build(jf.Type, fieldPath, inList)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		conditions := jf.Type == conditionsType
		if rules == nil && inner == nil && !conditions {
			continue
		}
		f := &field{name: jf.Name, index: jf.Index, rules: rules, omitEmpty: jf.OmitEmpty, omitZero: jf.OmitZero, inner: inner,
			program: program, jsonType: jsonType(jf.Type), conditions: conditions}
		n.fields = append(n.fields, f)
		n.checks = n.checks || conditions
		if rules != nil {
			n.defaults = n.defaults || rules.deflt.IsValid() || rules.defaultJSON != nil
			n.checks = true
		}
		if inner != nil {
			n.defaults = n.defaults || inner.defaults
			n.checks = n.checks || inner.checks
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(n.fields) == 0 && !n.defaults && !n.checks {
		b.nodes[key] = nil
		return nil, nil
	}
	return n, nil
}

func (b *builder) compile(rule string) (Program, error) {
	if b.engine == nil {
		return nil, errors.New("no RuleEngine to evaluate it (see package validation/cel)")
	}
	return b.engine.Compile(rule)
}

// jsonType is the OpenAPI type of values of t.
func jsonType(t reflect.Type) string {
	t, _ = jsonfields.Deref(t, nil)
	switch {
	case t.Kind() == reflect.Bool:
		return "boolean"
	case isInt(t.Kind()) || isUint(t.Kind()):
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.String, t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "string"
	case isList(t):
		return "array"
	}
	return "object"
}

// Empty says that the type declares nothing: Default and Validate do nothing.
func (s *Schema) Empty() bool { return s == nil || s.root == nil }

// Default fills in the declared defaults of obj, a pointer to the Schema's
// type: a field whose value is empty (a nil pointer, an empty list or map,
// a zero value) gets its default, in every struct below it too.
func (s *Schema) Default(obj any) {
	if s.Empty() || !s.root.defaults {
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Type() != s.typ {
		return
	}
	s.root.fill(v.Elem())
}

// fill defaults the settable value v of the node's type, without pointers.
func (n *node) fill(v reflect.Value) {
	if n.elem != nil {
		n.fillItems(v)
		return
	}
	for _, f := range n.fields {
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil {
			continue // under a nil embedded pointer
		}
		if r := f.rules; r != nil && (r.deflt.IsValid() || r.defaultJSON != nil) && empty(fv) {
			r.setDefaultIn(fv)
		}
		if f.inner != nil && f.inner.defaults {
			if inner, ok := deref(fv); ok {
				f.inner.fill(inner)
			}
		}
	}
}

func (n *node) fillItems(v reflect.Value) {
	if !n.elem.defaults {
		return
	}
	if n.list {
		for i := range v.Len() {
			if item, ok := deref(v.Index(i)); ok {
				n.elem.fill(item)
			}
		}
		return
	}
	iter := v.MapRange()
	for iter.Next() {
		// Map values cannot be set in place: default a copy, store it.
		cp := reflect.New(iter.Value().Type()).Elem()
		cp.Set(iter.Value())
		if item, ok := deref(cp); ok {
			n.elem.fill(item)
			v.SetMapIndex(iter.Key(), cp)
		}
	}
}

// setDefaultIn sets the empty field value fv to the default.
func (r *Rules) setDefaultIn(fv reflect.Value) {
	if r.defaultJSON != nil {
		// A fresh value each time: objects must not share it.
		p := reflect.New(fv.Type())
		if json.Unmarshal(r.defaultJSON, p.Interface()) == nil {
			fv.Set(p.Elem())
		}
		return
	}
	for fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem()))
		}
		fv = fv.Elem()
	}
	fv.Set(r.deflt)
}

// deref follows the pointers of v to a value; false at a nil one.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// empty is what required and default take for "not given": a nil pointer,
// an empty list or map, a zero value.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

// absent says that the field is not in the object's JSON: the value
// checks skip it, as a schema skips a property that is not there.
func (f *field) absent(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.IsNil() || f.omitEmpty && v.Len() == 0
	case reflect.Struct:
		return f.omitZero && v.IsZero()
	}
	return (f.omitEmpty || f.omitZero) && v.IsZero()
}

// Validate checks obj, a pointer to the Schema's type, against the declared
// constraints, and against old (nil on create) for immutable fields. It
// returns an Error per failed constraint, in the order of the fields.
//
// On an update, a field whose value is what it was in old is not checked
// again (a CRD's validation ratcheting): an object stored before a
// constraint was declared stays updatable while that field is left alone.
// Fields inside lists and maps ratchet with the whole list or map.
func (s *Schema) Validate(obj, old any) []*Error {
	if s.Empty() || !s.root.checks {
		return nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Type() != s.typ {
		return nil
	}
	var o reflect.Value
	if ov := reflect.ValueOf(old); ov.Kind() == reflect.Pointer && !ov.IsNil() && ov.Elem().Type() == s.typ {
		o = ov.Elem()
	}
	var errs []*Error
	var buf [128]byte
	s.root.walk(&errs, &fieldPath{b: buf[:0]}, v.Elem(), o)
	return errs
}

// walk checks v (and old, invalid when there is none) of the node's type,
// without pointers; path holds the JSON path of v.
func (n *node) walk(errs *[]*Error, path *fieldPath, v, old reflect.Value) {
	if n.elem != nil {
		n.walkItems(errs, path, v)
		return
	}
	for _, f := range n.fields {
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil {
			continue
		}
		parent := path.push(f.name)
		var oldField reflect.Value
		if old.IsValid() {
			if ofv, err := old.FieldByIndexErr(f.index); err == nil {
				oldField = ofv
			}
		}
		if r := f.rules; r != nil && r.Required && empty(fv) {
			*errs = append(*errs, required(path.String()))
			path.pop(parent)
			continue
		}
		if oldField.IsValid() && equal(fv, oldField) {
			// Ratcheting, as for a CRD: a value the update leaves as it
			// was is not checked again, so that objects stored before a
			// constraint was declared can still be updated.
			path.pop(parent)
			continue
		}
		if r := f.rules; r != nil {
			if base, ok := deref(fv); ok && !f.absent(fv) {
				*errs = append(*errs, r.check(path, base)...)
			}
			if r.Items != nil && !f.absent(fv) {
				if list, ok := deref(fv); ok {
					for i := range list.Len() {
						if item, ok := deref(list.Index(i)); ok {
							at := path.index(i)
							*errs = append(*errs, r.Items.check(path, item)...)
							path.pop(at)
						}
					}
				}
			}
			if r.Immutable && oldField.IsValid() && !equal(fv, oldField) {
				*errs = append(*errs, invalid(path.String(), nil, "field is immutable"))
			}
			if f.program != nil && !f.absent(fv) {
				if e := f.evalRule(path, fv, oldField); e != nil {
					*errs = append(*errs, e)
				}
			}
		}
		if f.conditions && fv.Len() > 0 { // none: nothing to check, no path to name
			*errs = append(*errs, Conditions(conditionsOf(fv), path.String())...)
		}
		if f.inner != nil && f.inner.checks {
			if inner, ok := deref(fv); ok {
				var oldInner reflect.Value
				if oldField.IsValid() {
					if oi, ok := deref(oldField); ok {
						oldInner = oi
					}
				}
				f.inner.walk(errs, path, inner, oldInner)
			}
		}
		path.pop(parent)
	}
}

func (n *node) walkItems(errs *[]*Error, path *fieldPath, v reflect.Value) {
	if !n.elem.checks {
		return
	}
	if n.list {
		for i := range v.Len() {
			if item, ok := deref(v.Index(i)); ok {
				parent := path.index(i)
				n.elem.walk(errs, path, item, reflect.Value{})
				path.pop(parent)
			}
		}
		return
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, k := range keys {
		if item, ok := deref(v.MapIndex(k)); ok {
			parent := path.key(fmt.Sprint(k))
			n.elem.walk(errs, path, item, reflect.Value{})
			path.pop(parent)
		}
	}
}

// evalRule evaluates the field's rule on its value fv (and old, invalid on
// create), worded as a CRD's failed rule is.
func (f *field) evalRule(path *fieldPath, fv, old reflect.Value) *Error {
	var oldSelf any
	if old.IsValid() && !f.absent(old) {
		oldSelf = jsonValue(old)
	} else if f.program.Transition() {
		return nil // a transition rule needs an old value
	}
	self := jsonValue(fv)
	ok, err := f.program.Eval(self, oldSelf)
	if ok && err == nil {
		return nil
	}
	var value any = OmittedValue{}
	if f.jsonType != "object" && f.jsonType != "array" {
		value = self
	}
	detail := f.rules.RuleMessage
	switch {
	case err != nil:
		detail = fmt.Sprintf("%v evaluating rule: %s", err, cmp.Or(f.rules.RuleMessage, f.rules.Rule))
	case detail == "":
		detail = "failed rule: " + f.rules.Rule
	}
	return invalid(path.String(), value, detail)
}

// jsonValue is v as encoding/json writes it and decodes it into an any,
// but with integers as int64.
func jsonValue(v reflect.Value) any {
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return numbers(out)
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return v
}

// equal compares a field's new and old values deeply, as reflect.DeepEqual
// of pointers to them where it can (no copy of a large struct), by a
// comparison compiled for their type: the ratcheting of every field of
// every update asks it.
func equal(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return a.Equal(b)
	}
	return deepequal.Values(a, b)
}

// fieldPath is the JSON path of the value a walk is at, spec.ports[1].name,
// grown and cut back as the walk goes: written out only for an error.
type fieldPath struct{ b []byte }

// push appends a field's name and returns the length to pop back to.
func (p *fieldPath) push(name string) int {
	n := len(p.b)
	if n > 0 {
		p.b = append(p.b, '.')
	}
	p.b = append(p.b, name...)
	return n
}

func (p *fieldPath) index(i int) int {
	n := len(p.b)
	p.b = append(strconv.AppendInt(append(p.b, '['), int64(i), 10), ']')
	return n
}

func (p *fieldPath) key(k string) int {
	n := len(p.b)
	p.b = append(append(append(p.b, '['), k...), ']')
	return n
}

func (p *fieldPath) pop(n int) { p.b = p.b[:n] }

func (p *fieldPath) String() string { return string(p.b) }
