// Package discovery makes the discovery documents of a set of group
// versions as kube-apiserver serves them: the legacy meta/v1 forms of
// /api, /apis, /apis/{group} and /api/{version} or /apis/{group}/{version},
// and the aggregated form (apidiscovery.k8s.io v2 and v2beta1, of the same
// shape) of /api and /apis that kubectl asks for first.
//
// # What it owns
//
// The documents only: apiserver decides what is served and writes them
// (the legacy ones through its JSON-only negotiation). They are made once
// per set of group versions, when a server's registry changes, not per
// request.
package discovery

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/internal/httpbody"
)

// GroupVersion is one served group version ("" is the core group) and its
// resources, in the order discovery lists them.
type GroupVersion struct {
	Group, Version string
	Resources      []Resource
	// Endpoints are the custom subresources of those resources and the
	// kinds answered there (package actions), listed after them.
	Endpoints []actions.Endpoint
}

// Resource is one resource of a group version.
type Resource struct {
	Kind, Plural, Singular        string
	Namespaced                    bool
	Verbs, ShortNames, Categories []string
	StorageVersionHash            string // "" for none
	Subresources                  []Subresource
}

// Subresource is one subresource of a resource; its response kind is the
// resource's unless Kind is set (autoscaling/v1 Scale).
type Subresource struct {
	Name                 string
	Group, Version, Kind string
	Verbs                []string
}

// Documents are the documents of a set of group versions: the legacy ones
// as values to write as JSON, the aggregated ones as bytes.
type Documents struct {
	CoreVersions []string          // /api's versions
	Groups       map[string]any    // /apis
	Group        map[string]any    // /apis/{group}, by group
	Resources    map[[2]string]any // by group and version
	core, apis   map[string][]byte // aggregated, by apidiscovery version
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type resourceDiscovery struct {
	Resource         string                 `json:"resource"`
	ResponseKind     groupVersionKind       `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []subresourceDiscovery `json:"subresources,omitempty"`
}

type subresourceDiscovery struct {
	Subresource  string           `json:"subresource"`
	ResponseKind groupVersionKind `json:"responseKind"`
	Verbs        []string         `json:"verbs"`
}

type versionDiscovery struct {
	Version   string              `json:"version"`
	Resources []resourceDiscovery `json:"resources"`
	Freshness string              `json:"freshness"`
}

type groupDiscovery struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Versions []versionDiscovery `json:"versions"`
}

// New makes the documents of gvs, given in discovery's order: the core
// group first, each group's versions together, the preferred first.
func New(gvs []GroupVersion) *Documents {
	d := &Documents{CoreVersions: []string{}, Group: map[string]any{}, Resources: map[[2]string]any{}}
	var groups []apiGroup
	aggregated := map[bool][]groupDiscovery{true: {}, false: {}}
	for _, gv := range gvs {
		legacy := []apiResource{}
		vd := versionDiscovery{Version: gv.Version, Freshness: "Current", Resources: []resourceDiscovery{}}
		for _, r := range withEndpoints(gv) {
			legacy = append(legacy, apiResource{Name: r.Plural, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
				Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories, StorageVersionHash: r.StorageVersionHash})
			scope := "Cluster"
			if r.Namespaced {
				scope = "Namespaced"
			}
			kind := groupVersionKind{gv.Group, gv.Version, r.Kind}
			rd := resourceDiscovery{Resource: r.Plural, ResponseKind: kind, Scope: scope, SingularResource: r.Singular,
				Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories}
			for _, sub := range r.Subresources {
				sd, sr := subresourceDiscovery{sub.Name, kind, sub.Verbs}, apiResource{Name: r.Plural + "/" + sub.Name, Namespaced: r.Namespaced, Kind: r.Kind, Verbs: sub.Verbs}
				if sub.Kind != "" {
					sd.ResponseKind = groupVersionKind{sub.Group, sub.Version, sub.Kind}
					sr.Kind = sub.Kind
					if sub.Group != gv.Group || sub.Version != gv.Version { // as pods/eviction; pods/binding names no group version
						sr.Group, sr.Version = sub.Group, sub.Version
					}
				}
				rd.Subresources = append(rd.Subresources, sd)
				legacy = append(legacy, sr)
			}
			vd.Resources = append(vd.Resources, rd)
		}
		apiVersion := gv.Version
		if gv.Group != "" {
			apiVersion = gv.Group + "/" + gv.Version
		}
		d.Resources[[2]string{gv.Group, gv.Version}] = map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": apiVersion, "resources": legacy}
		core := gv.Group == ""
		if g := aggregated[core]; len(g) > 0 && g[len(g)-1].Metadata.Name == gv.Group {
			g[len(g)-1].Versions = append(g[len(g)-1].Versions, vd)
		} else {
			gd := groupDiscovery{Versions: []versionDiscovery{vd}}
			gd.Metadata.Name = gv.Group
			aggregated[core] = append(g, gd)
		}
		if core {
			d.CoreVersions = append(d.CoreVersions, gv.Version)
			continue
		}
		v := groupVersionForDiscovery{apiVersion, gv.Version}
		if n := len(groups); n > 0 && groups[n-1].Name == gv.Group {
			groups[n-1].Versions = append(groups[n-1].Versions, v)
		} else {
			groups = append(groups, apiGroup{Name: gv.Group, Versions: []groupVersionForDiscovery{v}, PreferredVersion: v})
		}
	}
	if groups == nil {
		groups = []apiGroup{}
	}
	for _, g := range groups {
		g.Kind, g.APIVersion = "APIGroup", "v1"
		d.Group[g.Name] = g
	}
	d.Groups = map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
	d.core, d.apis = map[string][]byte{}, map[string][]byte{}
	for _, version := range []string{"v2", "v2beta1"} {
		for core, docs := range map[bool]map[string][]byte{true: d.core, false: d.apis} {
			// Plain data: it always marshals.
			docs[version], _ = json.Marshal(map[string]any{
				"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + version,
				"metadata": map[string]any{}, "items": aggregated[core],
			})
		}
	}
	return d
}

const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList"

// ServeAggregated answers /api (core) or /apis in the aggregated form when
// the request's Accept header asks for it, and reports whether it did.
func (d *Documents) ServeAggregated(w http.ResponseWriter, r *http.Request, core bool) bool {
	version := wantsAggregated(r)
	if version == "" {
		return false
	}
	docs := d.apis
	if core {
		docs = d.core
	}
	w.Header().Set("Vary", "Accept")
	httpbody.Write(w, r, http.StatusOK, fmt.Sprintf(aggregatedMediaType, version), docs[version])
	return true
}

// wantsAggregated returns the aggregated discovery version the Accept header
// asks for first ("v2" or "v2beta1"), or "".
func wantsAggregated(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		params := map[string]string{}
		fields := strings.Split(part, ";")
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			params[k] = v
		}
		if strings.TrimSpace(fields[0]) == "application/json" && params["g"] == "apidiscovery.k8s.io" && params["as"] == "APIGroupDiscoveryList" &&
			(params["v"] == "v2" || params["v"] == "v2beta1") {
			return params["v"]
		}
	}
	return ""
}

// withEndpoints are the resources of gv with its endpoints: an answered
// kind is a resource with the verb create alone (as tokenreviews); a
// subresource lists its verbs and the kind it reads, else the kind get
// answers (as pods/eviction and pods/binding), else its resource's (a
// stream, as pods/log).
func withEndpoints(gv GroupVersion) []Resource {
	rs := slices.Clone(gv.Resources)
	for _, e := range gv.Endpoints {
		verbs := slices.Sorted(maps.Keys(e.Verbs))
		if e.Subresource == "" {
			singular := e.Singular
			if singular == "" {
				singular = strings.ToLower(e.Kind)
			}
			rs = append(rs, Resource{Kind: e.Kind, Plural: e.Resource, Singular: singular, Namespaced: e.Namespaced,
				Verbs: verbs, ShortNames: e.ShortNames, Categories: e.Categories})
			continue
		}
		sub := Subresource{Name: e.Subresource, Verbs: verbs}
		for _, name := range []string{"create", "update", "get"} {
			if v, ok := e.Verbs[name]; ok && sub.Kind == "" && (v.In != nil || v.Out != nil) {
				t := v.In
				if t == nil {
					t = v.Out
				}
				sub.Group, sub.Version, sub.Kind = actions.KindOf(t, gv.Group, gv.Version)
			}
		}
		for i := range rs {
			if rs[i].Plural == e.Resource {
				rs[i].Subresources = append(slices.Clip(rs[i].Subresources), sub)
			}
		}
	}
	return rs
}
