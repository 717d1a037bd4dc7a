package schema

import (
	"slices"
	"strconv"
	"strings"
)

// Prune drops from obj, in place, the fields the schema does not
// specify, as kube-apiserver prunes a custom resource when it decodes one,
// and returns the paths of the fields it dropped, sorted (kube-apiserver
// warns of each, `unknown field "spec.foo"`, or refuses the request under
// fieldValidation=Strict).
//
// obj is a whole object: its apiVersion, kind and metadata are the
// request path's to handle and stay as they are. Under
// x-kubernetes-preserve-unknown-fields unknown fields stay, while fields
// the schema does specify are still pruned inside. An embedded resource
// (x-kubernetes-embedded-resource) keeps its apiVersion and kind, and its
// metadata keeps the fields an ObjectMeta has: others are dropped and
// reported, and so are members whose value an ObjectMeta cannot hold.
// Finally a null where the schema neither allows null (nullable) nor has a
// default is dropped, as kube-apiserver does after pruning.
func (s *Schema) Prune(obj any) []string {
	p := pruner{}
	root := s
	if root == nil {
		root = &Schema{}
	}
	p.prune(obj, root, true)
	dropNulls(obj, s)
	coerceEmbedded(obj, s, &p, false)
	slices.Sort(p.unknown)
	return p.unknown
}

// pruneDefault prunes a default placed in its surrounding object as
// kube-apiserver's PruneDefaults does: the root is an embedded resource
// whose metadata is coerced too, and nulls stay.
func (s *Schema) pruneDefault(obj any) {
	p := pruner{}
	root := s
	if root == nil {
		root = &Schema{}
	}
	coerceEmbedded(obj, root, &p, true)
	p.prune(obj, root, true)
}

type pruner struct {
	path    []string // the path's segments: "spec", ".", "x", "[0]"
	unknown []string
}

func (p *pruner) push(key string) int {
	n := len(p.path)
	if n > 0 {
		p.path = append(p.path, ".")
	}
	p.path = append(p.path, key)
	return n
}

func (p *pruner) pushIndex(i int) int {
	n := len(p.path)
	p.path = append(p.path, "["+strconv.Itoa(i)+"]")
	return n
}

func (p *pruner) record(key string) {
	n := p.push(key)
	p.unknown = append(p.unknown, strings.Join(p.path, ""))
	p.path = p.path[:n]
}

func isMetaField(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// prune is kube's pruning: s nil means nothing is specified, so an
// object's every member is unknown. The root is an embedded resource.
func (p *pruner) prune(x any, s *Schema, embedded bool) {
	if s.PreservesUnknownFields() {
		p.skip(x, s, embedded)
		return
	}
	switch x := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range x {
				p.record(k)
				delete(x, k)
			}
			return
		}
		for k, v := range x {
			if embedded && isMetaField(k) {
				continue
			}
			if prop, ok := s.Properties[k]; ok {
				n := p.push(k)
				p.prune(v, prop, prop.EmbeddedResource)
				p.path = p.path[:n]
			} else if s.HasAdditionalProperties {
				n := p.push(k)
				ap := s.AdditionalProperties
				p.prune(v, ap, ap != nil && ap.EmbeddedResource)
				p.path = p.path[:n]
			} else {
				if !isMetaField(k) || len(p.path) > 0 {
					p.record(k)
				}
				delete(x, k)
			}
		}
	case []any:
		var items *Schema
		if s != nil {
			items = s.Items
		}
		for i, v := range x {
			n := p.pushIndex(i)
			p.prune(v, items, items != nil && items.EmbeddedResource)
			p.path = p.path[:n]
		}
	}
}

// skip walks a value whose unknown fields are preserved, pruning inside
// the fields the schema specifies.
func (p *pruner) skip(x any, s *Schema, embedded bool) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if embedded && isMetaField(k) {
				continue
			}
			if prop, ok := s.Properties[k]; ok {
				n := p.push(k)
				p.prune(v, prop, prop.EmbeddedResource)
				p.path = p.path[:n]
			} else if s.HasAdditionalProperties {
				n := p.push(k)
				ap := s.AdditionalProperties
				p.prune(v, ap, ap != nil && ap.EmbeddedResource)
				p.path = p.path[:n]
			}
		}
	case []any:
		if s.Items == nil {
			return
		}
		for i, v := range x {
			n := p.pushIndex(i)
			p.skip(v, s.Items, s.Items.EmbeddedResource)
			p.path = p.path[:n]
		}
	}
}

// fieldSchema is the schema of an object's member k: its property's, or
// the additional properties'.
func (s *Schema) fieldSchema(k string) *Schema {
	if s == nil {
		return nil
	}
	if prop, ok := s.Properties[k]; ok {
		return prop
	}
	return s.AdditionalProperties
}

// dropNulls drops nulls the schema does not allow and has no default for
// (kube's PruneNonNullableNullsWithoutDefaults).
func dropNulls(x any, s *Schema) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			sub := s.fieldSchema(k)
			if v == nil && sub != nil && !sub.Nullable && sub.Default == nil {
				delete(x, k)
			} else {
				dropNulls(v, sub)
			}
		}
	case []any:
		var items *Schema
		if s != nil {
			items = s.Items
		}
		for _, v := range x {
			dropNulls(v, items)
		}
	}
}
