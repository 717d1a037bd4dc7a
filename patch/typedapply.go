package patch

import (
	"reflect"
	"slices"
	"sync"

	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// An apply to a live Go value (ApplyOptions.Live) builds the value's tree
// (liveTree), merges the configuration into it, compares the two and
// decodes the result from them (Merged.Decode): four passes over the
// whole object, most of which (metadata's server fields, status, what the
// configuration leaves out) the configuration never names. The typed apply
// walks the configuration's tree beside the live value instead, struct
// by struct by the type's plan (typedNode), and builds the live tree
// only of what the configuration names: at each member it names, the
// member's tree (from the object's hint), merged, compared and decoded as
// the whole-tree path does it, so each member gives what it gives there.
// What it leaves out is neither read nor compared: merging keeps it as
// it is, and the result copies it from the live value.
//
// It stands in for the whole-tree path only where that path's answer is
// the members' answers put together: an object with managers (no first
// apply), whose apply prunes nothing and compares no other version, of a
// type whose every value is a valid live object of the schema (typedValid,
// so that liveTree never fails), and a configuration whose members are
// all the type's fields. Else ApplyMerged takes the whole-tree path,
// which stays the oracle of this one (TestTypedApplyRandom).

// typedNode is a struct type's plan, for one schema: its members as the
// live tree has them.
type typedNode struct {
	members []typedMember // in jsonfields' order
	byName  map[string]*typedMember
	fill    *structPlan // Merged.Decode's plan of the type; nil: not decoded
}

type typedMember struct {
	name   string
	index  []int
	omit   func(reflect.Value) bool
	tree   *treePlan  // the member's tree
	schema *Schema    // s.Field(name)
	sub    *typedNode // walked member by member: a struct by value, of a granular Struct schema
	fill   *fieldPlan // nil when the type's fill plan is
	// scalar: a boolean, string or integer of a Scalar schema, written
	// as encoding/json writes its kind: two values of it that differ
	// write apart (strings that are UTF-8), which the typed update
	// reports without their trees.
	scalar bool
}

// typedRoots are the roots' plans by type: *typedRoot, the plan for
// the schema last asked for (one schema per type is the usual; a
// resource whose schema is replaced leaves none behind).
var typedRoots sync.Map

type typedRoot struct {
	schema *Schema
	node   *typedNode // nil when the type's values may be live objects that are not valid
	never  bool       // no value of the type has a tree (typedTree): with no schema
}

// typedRootOf is the plan of a live object of type t (a struct), nil if
// the typed apply does not take it.
func typedRootOf(t reflect.Type, s *Schema) *typedNode {
	if v, ok := typedRoots.Load(t); ok {
		if r := v.(*typedRoot); r.never || r.schema == s {
			return r.node
		}
	}
	c := treeCompiler{seen: map[treeKey]*treePlan{}}
	r := &typedRoot{schema: s, never: c.compile(t, treeRoot).fn == nil}
	if !r.never && typedValid(t, s, treeRoot, &c, 0, map[reflect.Type]bool{}) {
		r.node = newTypedNode(t, s, treeRoot, &c)
	}
	typedRoots.Store(t, r)
	return r.node
}

func newTypedNode(t reflect.Type, s *Schema, mode treeMode, c *treeCompiler) *typedNode {
	n := &typedNode{byName: map[string]*typedMember{}, fill: structPlanOf(t)}
	for _, f := range jsonfields.Of(t) {
		fm, kept := memberMode(mode, f.Name)
		if !kept {
			continue
		}
		m := typedMember{name: f.Name, index: f.Index, omit: jsonwrite.Omitter(f), tree: c.compile(f.Type, fm), schema: s.Field(f.Name)}
		m.scalar = exactScalar(f.Type.Kind()) && !f.Quoted && !timeTypes[f.Type] && m.schema != nil && m.schema.Kind == Scalar &&
			!jsonfields.Implements(f.Type, jsonMarshalerType) && !jsonfields.Implements(f.Type, textMarshalerType)
		if n.fill != nil {
			m.fill = n.fill.fields[f.Name]
		}
		if f.Type.Kind() == reflect.Struct && m.schema != nil && m.schema.Kind == Struct && !isLeaf(m.schema) && m.tree.fn != nil && !jsonfields.Implements(f.Type, jsonMarshalerType) && !jsonfields.Implements(f.Type, textMarshalerType) && !timeTypes[f.Type] {
			m.sub = newTypedNode(f.Type, m.schema, fm, c)
		}
		n.members = append(n.members, m)
	}
	for i := range n.members {
		n.byName[n.members[i].name] = &n.members[i]
	}
	return n
}

// memberMode is the mode of a struct's member name in mode: the root's
// metadata is read without its managedFields (kept false), as
// decodeUnmanaged reads it.
func memberMode(mode treeMode, name string) (fm treeMode, kept bool) {
	switch {
	case mode == treeMetadata && name == "managedFields":
		return treeValue, false
	case mode == treeRoot && name == "metadata":
		return treeMetadata, true
	}
	return treeValue, true
}

// maxTypedDepth bounds the types typedValid takes: far below maxDepth, so
// that no value of one is too deep for typedTree or the reader.
const maxTypedDepth = 32

// typedValid says whether every value of type t (in mode) has a tree, and
// one that valid(tree, s, true) takes: liveTree never fails on it.
// It answers no where unsure: a recursive type, a list whose items may
// go unnamed (a key that omitempty leaves out, a pointer item), a value
// the schema types otherwise.
func typedValid(t reflect.Type, s *Schema, mode treeMode, c *treeCompiler, depth int, stack map[reflect.Type]bool) bool {
	if depth > maxTypedDepth || stack[t] || c.compile(t, mode).fn == nil {
		return false
	}
	if s.anyValue() {
		return true
	}
	stack[t] = true
	defer delete(stack, t)
	if timeTypes[t] {
		return s.Kind == Scalar
	}
	if exactScalar(t.Kind()) {
		return s.Kind == Scalar
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typedValid(t.Elem(), s, mode, c, depth+1, stack)
	case reflect.Struct:
		if s.Kind != Struct && s.Kind != Map {
			return false
		}
		for _, f := range jsonfields.Of(t) {
			fm, kept := memberMode(mode, f.Name)
			if !kept {
				continue
			}
			cs := s.Field(f.Name)
			if cs == nil || !typedValid(f.Type, cs, fm, c, depth+1, stack) {
				return false
			}
		}
		return true
	case reflect.Map:
		if s.Kind == Struct && s.Elem == nil || s.Kind != Struct && s.Kind != Map {
			return false // a key the struct does not name is not valid
		}
		return typedValid(t.Elem(), s.Elem, treeValue, c, depth+1, stack)
	case reflect.Slice:
		if s.Kind != List {
			return false
		}
		if !isLeaf(s) && !itemsNamed(t.Elem(), s) {
			return false
		}
		return typedValid(t.Elem(), s.Elem, treeValue, c, depth+1, stack)
	}
	return false
}

// exactScalar says whether values of kind k are booleans, strings or
// integers: scalars whose trees are their values (floats are left out,
// as the typed apply does not take them).
func exactScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// itemsNamed says whether itemNamed takes every value of the item type
// et of a granular list of schema s.
func itemsNamed(et reflect.Type, s *Schema) bool {
	if s.ListType != ListMap {
		return exactScalar(et.Kind()) && !timeTypes[et]
	}
	if et.Kind() != reflect.Struct {
		return false
	}
	for _, f := range jsonfields.Of(et) {
		for _, k := range s.ListMapKeys {
			if f.Name == k && !f.OmitEmpty && !f.OmitZero && !f.Optional && f.Type.Kind() != reflect.Pointer && f.Type.Kind() != reflect.Interface {
				return true // always a member
			}
		}
	}
	return false
}

// typedStep is what Merged.Decode does with one member of the result:
// the typed walk decides it as fillTyped would from the merged tree.
type typedStep struct {
	member *typedMember
	op     stepOp
	fill   int32 // stepFill's trees: typedWalk.fills[fill]
}

// typedFill are the trees of a member stepFill fills.
type typedFill struct {
	merged, config, live any
	liveOK               bool
}

type stepOp uint8

const (
	stepMove  stepOp = iota // the configuration's field, moved
	stepCopy                // the live field, copied
	stepEnter               // a struct filled member by member: its steps follow, to stepLeave
	stepLeave
	stepFill // fillTyped's recursion into the member's merged tree
)

// typedWalk is one typed apply's walk: the comparison of the live object
// with the result, and the steps that decode the result.
type typedWalk struct {
	c     comparison
	steps []typedStep
	fills []typedFill
	stale bool // a map or list was built anew, not the hint's
	// build counts what one member's tree build builds: typedLive's, as
	// a treeFunc's argument escapes, and the walk, on the stack, is not
	// to. (The path is node's argument, not the walk's: what the walk
	// holds goes where its steps go, to the heap.)
	build *treeBuild
	// ignore are the root's members the walk passes over as if the
	// configuration left them out (ApplyOptions.Ignore).
	ignore []string
}

func (w *typedWalk) fill(m *typedMember, f typedFill) {
	w.steps = append(w.steps, typedStep{member: m, op: stepFill, fill: int32(len(w.fills))})
	w.fills = append(w.fills, f)
}

// node merges cfg, a configuration's object at at, into v, the live
// struct of plan n whose tree's hint is hint. changed: the result is not
// v's tree; extra: it is not cfg. ok false to give up.
func (w *typedWalk) node(n *typedNode, cfg map[string]any, v reflect.Value, hint map[string]any, at fieldPath) (changed, extra, ok bool) {
	found := 0
	var ignore []string // the root's members only
	if len(at) == 0 {
		ignore = w.ignore
		for i, f := range ignore {
			if _, named := cfg[f]; named && !slices.Contains(ignore[:i], f) {
				found++ // named, and passed over
			}
		}
	}
	for i := range n.members {
		m := &n.members[i]
		fv, has := jsonwrite.FieldOf(v, m.index)
		lok := has && (m.omit == nil || !m.omit(fv))
		cv, cok := cfg[m.name]
		if cok && len(ignore) > 0 && slices.Contains(ignore, m.name) {
			cok = false
		}
		if !cok {
			if !lok {
				continue
			}
			extra = true // merged as it is
			if m.fill != nil && m.fill.copyable {
				w.steps = append(w.steps, typedStep{member: m, op: stepCopy})
				continue
			}
			lv, ok := m.tree.call(fv, len(at)+1, nil, w.build)
			if !ok {
				return false, false, false
			}
			w.fill(m, typedFill{merged: lv, live: lv, liveOK: true})
			continue
		}
		found++
		path := append(at, fieldElement(m.name))
		var h any
		if hint != nil {
			h = hint[m.name]
		}
		copyable := m.fill != nil && m.fill.copyable
		if cm, isMap := cv.(map[string]any); isMap && len(cm) > 0 && m.sub != nil && lok {
			enter := len(w.steps)
			w.steps = append(w.steps, typedStep{member: m, op: stepEnter})
			hm, _ := h.(map[string]any)
			ch, ex, ok := w.node(m.sub, cm, fv, hm, path)
			if !ok {
				return false, false, false
			}
			changed, extra = changed || ch, extra || ex
			switch {
			case copyable && !ex:
				w.steps = append(w.steps[:enter], typedStep{member: m, op: stepMove})
			case copyable && !ch:
				w.steps = append(w.steps[:enter], typedStep{member: m, op: stepCopy})
			default:
				w.steps = append(w.steps, typedStep{op: stepLeave})
			}
			continue
		}
		if copyable && lok && w.sameAs(m, fv, len(path), cv) {
			// The configuration repeats the live member (most members
			// of a re-apply): merging them makes a value equal to both
			// (equalValues is symmetric), which the comparison passes
			// over and Merged.Decode takes from the configuration.
			w.steps = append(w.steps, typedStep{member: m, op: stepMove})
			continue
		}
		var lv any
		if lok {
			*w.build = treeBuild{}
			if lv, ok = m.tree.call(fv, len(path), h, w.build); !ok {
				return false, false, false
			}
			w.stale = w.stale || w.build.nodes > 0 && !sameTree(lv, h)
		}
		if copyable && lok && equalValues(lv, cv) {
			// As above, where the two are equal but not alike.
			w.steps = append(w.steps, typedStep{member: m, op: stepMove})
			continue
		}
		mv, mok := merge(lv, lok, cv, true, m.schema)
		w.c.walk(lv, lok, mv, mok, m.schema, path)
		if !mok {
			changed, extra = changed || lok, true
			continue
		}
		eqCfg := equalValues(mv, cv)
		eqLive := lok && equalValues(mv, lv)
		changed, extra = changed || !eqLive, extra || !eqCfg
		switch {
		case copyable && eqCfg:
			w.steps = append(w.steps, typedStep{member: m, op: stepMove})
		case copyable && eqLive:
			w.steps = append(w.steps, typedStep{member: m, op: stepCopy})
		default:
			w.fill(m, typedFill{merged: mv, config: cv, live: lv, liveOK: lok})
		}
	}
	if found < len(cfg) {
		return false, false, false // a member the type does not name
	}
	return changed, extra, true
}

// sameAs says whether the tree of fv, the live value of member m, is
// cv, the configuration's, built with cv as its hint: then each of its
// maps and lists is cv's and each leaf equal to cv's, and the tree is
// equal to cv without the live tree's hint, which is looked up in memory
// older than the configuration's, or a comparison of the two trees.
// false says nothing: the member is built from its hint then.
func (w *typedWalk) sameAs(m *typedMember, fv reflect.Value, depth int, cv any) bool {
	*w.build = treeBuild{}
	t, ok := m.tree.call(fv, depth, cv, w.build)
	return ok && sameTree(t, cv)
}

// typedResult is a typed apply's result, decoded by its steps; its tree
// is made only if asked for (Merged.JSON).
type typedResult struct {
	schema    *Schema
	live      any // ApplyOptions.Live
	steps     []typedStep
	fills     []typedFill
	unchanged bool
	ignore    []string // the root's members the walk passed over
}

// decode runs steps on dst from live and config (invalid: none), as
// fillTyped would have filled dst from the merged tree.
func decodeSteps(dst, live, config reflect.Value, steps []typedStep, fills []typedFill) ([]typedStep, bool) {
	for len(steps) > 0 {
		st := &steps[0]
		steps = steps[1:]
		switch st.op {
		case stepLeave:
			return steps, true
		case stepMove:
			if !config.IsValid() {
				return nil, false
			}
			dst.FieldByIndex(st.member.index).Set(config.FieldByIndex(st.member.index))
		case stepCopy:
			deepcopy.Set(dst.FieldByIndex(st.member.index), live.FieldByIndex(st.member.index))
		case stepEnter:
			f := st.member.fill
			if f == nil || f.sub == nil {
				return nil, false
			}
			var cv reflect.Value
			if config.IsValid() {
				cv = config.FieldByIndex(f.index)
			}
			var ok bool
			if steps, ok = decodeSteps(dst.FieldByIndex(f.index), live.FieldByIndex(f.index), cv, steps, fills); !ok {
				return nil, false
			}
		case stepFill:
			f, tf := st.member.fill, &fills[st.fill]
			sub, isObject := tf.merged.(map[string]any)
			if f == nil || f.sub == nil || !isObject {
				return nil, false
			}
			var srcs [2]typedSource
			if tree, ok := tf.config.(map[string]any); ok && config.IsValid() {
				srcs[0] = typedSource{tree: tree, val: config.FieldByIndex(f.index), move: true}
			}
			if tree, ok := tf.live.(map[string]any); ok && tf.liveOK {
				srcs[1] = typedSource{tree: tree, val: live.FieldByIndex(f.index)}
			}
			if !fillTyped(dst.FieldByIndex(f.index), f.sub, sub, srcs) {
				return nil, false
			}
		}
	}
	return steps, true
}

// typedLive is a live object the typed apply may walk: its plan, its
// value and its tree's hint (nil if none).
type typedLive struct {
	root *typedNode
	obj  any
	v    reflect.Value
	hint map[string]any
	// What its apply makes, in the one allocation of typedLiveOf: an
	// apply made ten of them, each a few words, or a few hundred bytes
	// (the steps of an object of usual size).
	build    treeBuild
	result   typedResult
	merged   Merged
	stepsArr [32]typedStep
}

// typedLiveOf is obj (ApplyOptions.Live) for the typed apply, nil if it
// does not take it.
func (s *Schema) typedLiveOf(obj any) *typedLive {
	if obj == nil || s == nil || s.Kind != Struct || !typedApplyOn {
		return nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	root := typedRootOf(v.Elem().Type(), s)
	if root == nil {
		return nil
	}
	// Without a hint each member named would be built anew: the whole
	// tree is built once, and kept as the next applies' hint.
	h := liveHintOf(obj)
	if h == nil || h.schema != s {
		return nil
	}
	return &typedLive{root: root, obj: obj, v: v.Elem(), hint: h.tree}
}

// typedApplyOn is off only in the tests that hold the typed apply to the
// whole-tree path.
var typedApplyOn = true

// member is the live tree's member name: known false where its tree
// cannot be told from the value.
func (tl *typedLive) member(name string) (v any, ok, known bool) {
	m := tl.root.byName[name]
	if m == nil {
		return nil, false, true
	}
	fv, has := jsonwrite.FieldOf(tl.v, m.index)
	if !has || m.omit != nil && m.omit(fv) {
		return nil, false, true
	}
	tl.build = treeBuild{}
	v, ok = m.tree.call(fv, 1, tl.hint[name], &tl.build)
	return v, ok, ok
}

// apply walks cfg into the live object, as if cfg left out the members
// ignore names: the result's steps and its comparison with the live
// object; nil if the walk gave up. It is called once.
func (tl *typedLive) apply(s *Schema, cfg map[string]any, ignore []string) (*typedResult, comparison) {
	var path [pathDepth]pathElement
	w := typedWalk{steps: tl.stepsArr[:0], build: &tl.build, ignore: ignore}
	changed, _, ok := w.node(tl.root, cfg, tl.v, tl.hint, path[:0])
	if !ok {
		return nil, comparison{}
	}
	if w.stale {
		// The hint is an older version's, and the walk builds what
		// changed since at every apply: the whole tree, built once,
		// is the next one's hint.
		_, _ = s.liveTree(nil, tl.obj)
	}
	tl.result = typedResult{schema: s, live: tl.obj, steps: w.steps, fills: w.fills, unchanged: !changed, ignore: ignore}
	return &tl.result, w.c
}

// otherVersions says whether a manager recorded its fields in another
// version than the apply's, to be compared there (Converter).
func (ms managerSet) otherVersions(opts ApplyOptions) bool {
	if opts.Convert == nil {
		return false
	}
	for _, m := range ms {
		if m.apiVersion != opts.APIVersion {
			return true
		}
	}
	return false
}

// decode is Merged.Decode of a typed apply's result: its steps, from the
// live value it walked and config.
func (r *typedResult) decode(dst, live, config any) bool {
	d := reflect.ValueOf(dst)
	if live != r.live || d.Kind() != reflect.Pointer || d.IsNil() || d.Type() != reflect.TypeOf(live) {
		return false
	}
	if structPlanOf(d.Type().Elem()) == nil {
		return false // fillTyped fills no such struct
	}
	var cv reflect.Value
	if c := reflect.ValueOf(config); config != nil && c.Type() == d.Type() && !c.IsNil() {
		cv = c.Elem()
	}
	rest, ok := decodeSteps(d.Elem(), reflect.ValueOf(live).Elem(), cv, r.steps, r.fills)
	return ok && len(rest) == 0
}
