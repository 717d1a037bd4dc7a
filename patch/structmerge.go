package patch

// mergeEqualAsIs and mergeAbsentAsIs are merge's shortcuts for equal
// values and for a live value with nothing to merge; off only in the test
// that holds them to merging.
var mergeEqualAsIs, mergeAbsentAsIs = true, true

// merge merges the configuration r into the live value l: r wins at each
// leaf; granular maps merge key by key and granular lists item by item.
// ok is false when the result has no value.
func merge(l any, lok bool, r any, rok bool, s *Schema) (any, bool) {
	keepRight := func() (any, bool) {
		if rok {
			return r, true
		}
		return l, lok
	}
	if s != nil && s.Kind == Deduced {
		// Objects merge member by member; anything else is the
		// configuration's, as structured-merge-diff merges them.
		if s = untyped; (objectLike(l) || !lok) && (objectLike(r) || !rok) {
			s = deducedObject
		}
	}
	if isLeaf(s) {
		return keepRight()
	}
	if lok && !rok && mergeAbsentAsIs {
		// Nothing merged into a live value checked by liveObject (every
		// item of its granular lists named, so none is dropped): what
		// merging makes of it is a copy of it, which it need not be.
		return l, true
	}
	switch s.Kind {
	case List:
		ll, _ := l.([]any)
		rl, _ := r.([]any)
		if len(ll) == 0 && len(rl) == 0 {
			return keepRight()
		}
		if lok && rok && mergeEqualAsIs && equalValues(l, r) {
			// What merging makes of equal values (checked, so every
			// item is named once): the configuration's, without
			// building it again. Applying what was applied before is
			// most applies. The live one is written alike (numbers are
			// canonical), and the comparison with the live object then
			// passes over it.
			return l, true
		}
		out := mergeGranularList(ll, rl, s)
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	case Map, Struct:
		lm, _ := l.(map[string]any)
		rm, _ := r.(map[string]any)
		if len(lm) == 0 && len(rm) == 0 {
			return keepRight()
		}
		// The members are merged first, and the live map is the result
		// when each is the live one's (sameTree): what merging makes of
		// a map the configuration changes nothing in, equal to it or a
		// part of it (most of an object's metadata, an unchanged spec),
		// without building it again or comparing it with the
		// configuration's beforehand, and then passed over by the
		// comparison with the live object.
		var arr [16]member
		members := arr[:0]
		if n := len(lm) + len(rm); n > len(arr) {
			members = make([]member, 0, n)
		}
		same := lok && len(lm) > 0 && mergeEqualAsIs
		for k, lv := range lm {
			rv, ok := rm[k]
			if v, ok := merge(lv, true, rv, ok, s.Field(k)); ok {
				same = same && sameTree(v, lv)
				members = append(members, member{k, v})
			} else {
				same = false
			}
		}
		for k, rv := range rm {
			if _, ok := lm[k]; !ok {
				if v, ok := merge(nil, false, rv, true, s.Field(k)); ok {
					same = false
					members = append(members, member{k, v})
				}
			}
		}
		if same {
			return l, true
		}
		if len(members) == 0 {
			return nil, false
		}
		return membersMap(members), true
	}
	return keepRight()
}

// mergeGranularList merges two granular lists: live items keep their order, and
// the configuration's items, in its order, are placed among them as
// Kubernetes places them.
func mergeGranularList(lhs, rhs []any, s *Schema) []any {
	type observed struct {
		value any
		ok    bool
	}
	elems := func(l []any, dupsAreNull bool) ([]pathElement, []any, map[string]observed) {
		var pes []pathElement
		var items []any
		obs := map[string]observed{}
		for _, item := range l {
			e, err := itemElement(s, item)
			if err != nil {
				continue // validated before; the live object keeps what it has
			}
			if _, found := obs[e.str]; found {
				if !dupsAreNull {
					continue
				}
				obs[e.str] = observed{nil, true}
			} else {
				obs[e.str] = observed{item, true}
			}
			pes = append(pes, e)
			items = append(items, item)
		}
		return pes, items, obs
	}
	rPEs, _, rObs := elems(rhs, false)
	lPEs, lItems, lObs := elems(lhs, true)

	var shared []pathElement
	for _, e := range rPEs {
		if _, ok := lObs[e.str]; ok {
			shared = append(shared, e)
		}
	}
	nextShared := func() *pathElement {
		if len(shared) == 0 {
			return nil
		}
		e := shared[0]
		shared = shared[1:]
		return &e
	}
	next := nextShared()
	merged := map[string]bool{}
	var out []any
	item := func(e pathElement, l, r observed) {
		if v, ok := merge(l.value, l.ok, r.value, r.ok, s.Elem); ok {
			out = append(out, v)
		}
	}
	for li, ri := 0, 0; li < len(lPEs) || ri < len(rPEs); {
		if li < len(lPEs) && ri < len(rPEs) {
			e := lPEs[li]
			if e.str == rPEs[ri].str {
				merged[e.str] = true
				item(e, lObs[e.str], rObs[e.str])
				li++
				ri++
				next = nextShared()
				continue
			}
			if _, ok := rObs[e.str]; ok && next != nil && next.str != e.str {
				li++
				continue
			}
		}
		if li < len(lPEs) {
			e := lPEs[li]
			if _, ok := rObs[e.str]; !ok {
				item(e, observed{lItems[li], true}, observed{})
				li++
				continue
			} else if merged[e.str] {
				li++
			}
		}
		if ri < len(rPEs) {
			e := rPEs[ri]
			merged[e.str] = true
			item(e, lObs[e.str], rObs[e.str])
			ri++
			if next != nil && next.str == e.str {
				next = nextShared()
			}
		}
	}
	return out
}

// removeItems returns v without the fields in rm, as Kubernetes'
// RemoveItems: a container left empty, or one it had to look into but
// cannot (atomic), becomes null.
func removeItems(v any, s *Schema, path fieldPath, rm fieldSet, deeper map[string]bool) any {
	s = s.of(v)
	if s == nil || s.Kind == Scalar || s.Kind == Untyped {
		switch v.(type) {
		case map[string]any, []any:
			if s == nil || s.Kind == Untyped {
				return nil
			}
		}
		return v
	}
	if isLeaf(s) {
		return nil
	}
	switch s.Kind {
	case List:
		l, _ := v.([]any)
		var out []any
		for _, item := range l {
			e, err := itemElement(s, item)
			if err == nil {
				p := path.with(e)
				if rm.has(p) {
					continue
				}
				if deeper[p.key()] {
					item = removeItems(item, s.Elem, p, rm, deeper)
				}
			}
			out = append(out, item)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case Map, Struct:
		m, _ := v.(map[string]any)
		out := map[string]any{}
		for k, child := range m {
			p := path.with(fieldElement(k))
			if rm.has(p) {
				continue
			}
			if deeper[p.key()] {
				child = removeItems(child, s.Field(k), p, rm, deeper)
			}
			out[k] = child
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// withNamedFields adds to a set every struct field that has a path below
// it: Kubernetes owns those fields too when it decides what to remove.
func withNamedFields(set fieldSet, root *Schema) fieldSet {
	out := make(fieldSet, len(set))
	for k, p := range set {
		out[k] = p
	}
	for _, p := range set {
		s := root
		for i := 0; i < len(p)-1 && s != nil; i++ {
			if p[i].kind == 'f' && s.Kind == Struct && s.Fields[p[i].field] != nil {
				out.insert(p[:i+1])
			}
			s = childSchema(s, p[i])
		}
	}
	return out
}
