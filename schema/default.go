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

// PrunedDefaults returns a copy of the schema whose defaults have been
// pruned as objects are: each default, placed where it applies in an
// otherwise empty object, loses the fields the schema does not specify
// (kube-apiserver's PruneDefaults, done when it serves a
// CustomResourceDefinition). Check refuses a schema whose defaults have
// unknown fields, so for a schema Check accepts the copy is the same.
func (s *Schema) PrunedDefaults() *Schema {
	return s.pruneDefaults(s, nil)
}

// pruneDefaults copies s with each default pruned against root at the
// place path (property names, "*" for a map's values, "[]" for items).
func (s *Schema) pruneDefaults(root *Schema, path []string) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	if s.Default != nil {
		c.Default = pruneAt(root, path, deepCopy(s.Default))
	}
	if s.AdditionalProperties != nil {
		c.AdditionalProperties = s.AdditionalProperties.pruneDefaults(root, append(slices.Clip(path), "*"))
	}
	if s.Items != nil {
		c.Items = s.Items.pruneDefaults(root, append(slices.Clip(path), "[]"))
	}
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = p.pruneDefaults(root, append(slices.Clip(path), k))
		}
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
