package crd

import (
	"fmt"

	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// Definition is what the server serves for a CustomResourceDefinition:
// its kind under the names it was accepted with (status.acceptedNames;
// spec.names while none are), and each version's schema parsed, with the
// defaults pruned as kube-apiserver prunes them before using them. The
// definition must be valid (Validate); an unreadable schema is an error.
func Definition(c *CustomResourceDefinition) (kinds.Definition, error) {
	n := c.Status.AcceptedNames
	if n.Plural == "" || n.Kind == "" {
		n = c.Spec.Names
	}
	d := kinds.Definition{
		Group: c.Spec.Group, Kind: n.Kind, Plural: n.Plural, Singular: n.Singular, ListKind: n.ListKind,
		Namespaced: c.Spec.Scope == NamespaceScoped,
		ShortNames: n.ShortNames, Categories: n.Categories,
	}
	for _, v := range c.Spec.Versions {
		kv := kinds.Version{
			Name: v.Name, Served: v.Served, Storage: v.Storage,
			Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning,
		}
		if v.Schema != nil && len(v.Schema.OpenAPIV3Schema) > 0 {
			s, err := schema.Parse(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return kinds.Definition{}, fmt.Errorf("crd: %s version %s: %w", c.Name, v.Name, err)
			}
			kv.Schema = s.PrunedDefaults()
		}
		if sub := v.Subresources; sub != nil {
			kv.Status = sub.Status != nil
			if sc := sub.Scale; sc != nil {
				kv.Scale = &kinds.Scale{SpecReplicasPath: sc.SpecReplicasPath, StatusReplicasPath: sc.StatusReplicasPath}
				if sc.LabelSelectorPath != nil {
					kv.Scale.LabelSelectorPath = *sc.LabelSelectorPath
				}
			}
		}
		for _, col := range v.AdditionalPrinterColumns {
			// A column without a description is described by its path in
			// Table answers, as kube-apiserver's table convertor does.
			desc := col.Description
			if desc == "" {
				desc = "Custom resource definition column (in JSONPath format): " + col.JSONPath
			}
			kv.PrinterColumns = append(kv.PrinterColumns, kinds.PrinterColumn{
				Name: col.Name, Type: col.Type, Format: col.Format, Description: desc,
				Priority: col.Priority, JSONPath: col.JSONPath,
			})
		}
		for _, f := range v.SelectableFields {
			kv.SelectableFields = append(kv.SelectableFields, f.JSONPath)
		}
		d.Versions = append(d.Versions, kv)
	}
	return d, nil
}
