package schema

import (
	"maps"
	"slices"
)

// SetDefaults sets, in place, the defaults the schema declares on obj's
// missing fields, as kube-apiserver defaults a custom resource when it
// decodes one from a request or from storage: a property that is absent
// gets its default, and so does one that is null where the schema does
// not allow null (nullable: false); then defaulting goes on inside every
// value, the defaults just set included, so nested defaults apply. Items
// of a list and values of a map (additionalProperties) that are null get
// the items' or values' default unless nullable. A default is copied, never
// shared with the schema.
//
// Call it after Prune: kube-apiserver prunes its defaults against the
// schema once, when the CustomResourceDefinition is served, and
// PrunedDefaults does the same here.
func (s *Schema) SetDefaults(obj any) {
	if s == nil {
		return
	}
	switch x := obj.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			prop := s.Properties[k]
			if prop.Default == nil {
				continue
			}
			if v, found := x[k]; !found || (v == nil && !prop.Nullable) {
				x[k] = deepCopy(prop.Default)
			}
		}
		for k, v := range x {
			if prop, ok := s.Properties[k]; ok {
				prop.SetDefaults(v)
			} else if ap := s.AdditionalProperties; ap != nil {
				if v == nil && !ap.Nullable {
					x[k] = deepCopy(ap.Default)
				}
				ap.SetDefaults(x[k])
			}
		}
	case []any:
		items := s.Items
		if items == nil {
			return
		}
		for i, v := range x {
			if v == nil && !items.Nullable {
				x[i] = deepCopy(items.Default)
			}
			items.SetDefaults(x[i])
		}
	}
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// PrunedDefaults returns the schema with its defaults pruned as objects
// are: each default, placed where it applies in an otherwise empty object,
// loses the fields the schema does not specify (kube-apiserver's
// PruneDefaults, done when it serves a CustomResourceDefinition). Only the
// nodes on the way to a default are copied; the others, and the whole
// schema when it has no default, are shared with s, which neither is
// changed after (a served kind holds its schema and this one: a copy of
// every node of a 50-property schema cost 20 KiB a kind for nothing). Check
// refuses a schema whose defaults have unknown fields, so for a schema
// Check accepts the result is the same.
func (s *Schema) PrunedDefaults() *Schema {
	return s.pruneDefaults(s, nil)
}

// pruneDefaults is s with each default below it pruned against root at the
// place path (property names, "*" for a map's values, "[]" for items): s
// itself if it has none.
func (s *Schema) pruneDefaults(root *Schema, path []string) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	changed := false
	if s.Default != nil {
		c.Default, changed = pruneAt(root, path, deepCopy(s.Default)), true
	}
	if s.AdditionalProperties != nil {
		c.AdditionalProperties = s.AdditionalProperties.pruneDefaults(root, append(slices.Clip(path), "*"))
		changed = changed || c.AdditionalProperties != s.AdditionalProperties
	}
	if s.Items != nil {
		c.Items = s.Items.pruneDefaults(root, append(slices.Clip(path), "[]"))
		changed = changed || c.Items != s.Items
	}
	var props map[string]*Schema
	for k, p := range s.Properties {
		if q := p.pruneDefaults(root, append(slices.Clip(path), k)); q != p {
			if props == nil {
				props = maps.Clone(s.Properties)
			}
			props[k] = q
		}
	}
	if props != nil {
		c.Properties, changed = props, true
	}
	if !changed {
		return s
	}
	return &c
}

// pruneAt places v at path in an object (a list holds it as its one
// item, a map under the key "*"), prunes that object against root and
// returns what is left of v.
func pruneAt(root *Schema, path []string, v any) any {
	var obj any = v
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == "[]" {
			obj = []any{obj}
		} else {
			obj = map[string]any{path[i]: obj}
		}
	}
	root.pruneDefault(obj)
	at := obj
	for _, seg := range path {
		switch x := at.(type) {
		case map[string]any:
			at = x[seg]
		case []any:
			if len(x) == 0 {
				return nil
			}
			at = x[0]
		default:
			return nil
		}
	}
	return at
}
