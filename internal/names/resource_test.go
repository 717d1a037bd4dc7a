package names

import (
	"strings"
	"testing"
)

func TestCheckResource(t *testing.T) {
	good := Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Singular: "widget", ShortNames: []string{"wd"}}
	if errs := CheckResource(good); len(errs) != 0 {
		t.Fatalf("CheckResource(%+v) = %v, want none", good, errs)
	}
	core := Resource{Version: "v1", Kind: "Pod", Plural: "pods", Singular: "pod"}
	if errs := CheckResource(core); len(errs) != 0 {
		t.Fatalf("CheckResource of the core group = %v, want none", errs)
	}
	for _, tc := range []struct {
		change func(*Resource)
		want   string
	}{
		{func(r *Resource) { r.Version = "" }, `version "" is not a DNS-1123 label`},
		{func(r *Resource) { r.Version = "V1" }, `version "V1"`},
		{func(r *Resource) { r.Group = "Example.com" }, `group "Example.com" is not a DNS-1123 subdomain`},
		{func(r *Resource) { r.Kind = "" }, `kind "" is empty`},
		{func(r *Resource) { r.Kind = "a.b" }, `kind "a.b"`},
		{func(r *Resource) { r.Plural = "" }, "Resource.Plural is required"},
		{func(r *Resource) { r.Plural = "Widgets" }, `plural "Widgets"`},
		{func(r *Resource) { r.Singular = "" }, `singular ""`},
		{func(r *Resource) { r.ShortNames = []string{"ok", "no_"} }, `short name "no_"`},
	} {
		r := good
		tc.change(&r)
		errs := CheckResource(r)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("CheckResource(%+v) = %v, want one error with %q", r, errs, tc.want)
		}
	}
}
