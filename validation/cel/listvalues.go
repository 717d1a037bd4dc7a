package cel

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// The semantics of list-type set and map lists, as kube-apiserver gives
// them: equality ignores order (a map list's items matched by their
// keys), and + is a union (a map list's later item replacing an earlier
// one with the same keys).

// setKey is a scalar's key in a set; lists and maps are not scalars.
func setKey(v ref.Val) (any, ref.Val) {
	switch v.(type) {
	case traits.Lister, traits.Mapper:
		return nil, types.NewErr("listSet operations are only supported on lists of scalar values")
	}
	raw := v.Value()
	if raw != nil && !reflect.TypeOf(raw).Comparable() {
		return fmt.Sprintf("%#v", raw), nil
	}
	return raw, nil
}

func setEqual(mine []ref.Val, other traits.Lister) ref.Val {
	set := make(map[any]bool, len(mine))
	for _, e := range mine {
		k, err := setKey(e)
		if err != nil {
			return err
		}
		set[k] = true
	}
	seen := make(map[any]bool, len(set))
	for it := other.Iterator(); it.HasNext() == types.True; {
		k, err := setKey(it.Next())
		if err != nil {
			return err
		}
		if !set[k] {
			return types.False
		}
		seen[k] = true
	}
	return types.Bool(len(seen) == len(set))
}

func addToSet(elems []ref.Val, other traits.Lister) ref.Val {
	set := make(map[any]bool, len(elems))
	for _, e := range elems {
		k, err := setKey(e)
		if err != nil {
			return err
		}
		set[k] = true
	}
	for it := other.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k, err := setKey(v)
		if err != nil {
			return err
		}
		if !set[k] {
			set[k] = true
			elems = append(elems, v)
		}
	}
	return &setList{Lister: types.NewRefValList(types.DefaultTypeAdapter, elems)}
}

// mapListKey is an item's key in a list-type map list.
func mapListKey(v ref.Val, keys []string) any {
	get := func(name string) any {
		var found bool
		var x ref.Val
		if m, ok := v.(traits.Mapper); ok {
			x, found = m.Find(types.String(name))
		}
		if !found || x == nil || types.IsUnknownOrError(x) {
			return nil
		}
		raw := x.Value()
		if raw != nil && !reflect.TypeOf(raw).Comparable() {
			return fmt.Sprintf("%#v", raw)
		}
		return raw
	}
	if len(keys) == 1 {
		return get(keys[0])
	}
	parts := make([]any, len(keys))
	for i, k := range keys {
		parts[i] = get(k)
	}
	return fmt.Sprintf("%#v", parts)
}

func mapListEqual(mine []ref.Val, other traits.Lister, keys []string) ref.Val {
	byKey := make(map[any]ref.Val, len(mine))
	for _, e := range mine {
		byKey[mapListKey(e, keys)] = e
	}
	seen := make(map[any]bool, len(byKey))
	for it := other.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k := mapListKey(v, keys)
		e, ok := byKey[k]
		if !ok {
			return types.False
		}
		if eq := e.Equal(v); eq != types.True {
			return eq
		}
		seen[k] = true
	}
	return types.Bool(len(seen) == len(byKey))
}

func addToMapList(elems []ref.Val, other traits.Lister, keys []string) ref.Val {
	at := make(map[any]int, len(elems))
	for i, e := range elems {
		at[mapListKey(e, keys)] = i
	}
	for it := other.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k := mapListKey(v, keys)
		if i, ok := at[k]; ok {
			elems[i] = v
		} else {
			at[k] = len(elems)
			elems = append(elems, v)
		}
	}
	return &mapList{Lister: types.NewRefValList(types.DefaultTypeAdapter, elems), keys: keys}
}

// setList and mapList are the results of adding to a set or map list,
// which keep its semantics.
type setList struct{ traits.Lister }

func (l *setList) Equal(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if l.Size() != ol.Size() {
		return types.False
	}
	return setEqual(listElems(l), ol)
}

func (l *setList) Add(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return addToSet(listElems(l), ol)
}

type mapList struct {
	traits.Lister
	keys []string
}

func (l *mapList) Equal(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if l.Size() != ol.Size() {
		return types.False
	}
	return mapListEqual(listElems(l), ol, l.keys)
}

func (l *mapList) Add(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return addToMapList(listElems(l), ol, l.keys)
}

func listElems(l traits.Lister) []ref.Val {
	var out []ref.Val
	for it := l.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next())
	}
	return out
}
