package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/httpbody"
)

// VersionInfo is what /version answers, as Kubernetes' version.Info.
type VersionInfo struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// defaultVersion reports the Kubernetes API level kapi implements, with
// kapi's own version as build metadata.
func defaultVersion() VersionInfo {
	v := VersionInfo{
		Major: "1", Minor: "33", GitVersion: "v1.33.0+kapi",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/kapi-dev/kapi" && d.Version != "" && d.Version != "(devel)" {
				v.GitVersion += "." + d.Version
			}
		}
	}
	return v
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, s.config.version)
}

// jsonOnly is the offer of documents served in JSON alone.
var jsonOnly = codec.Offer{Views: []codec.View{codec.ViewObject}, JSONOnly: true}

// writeJSON answers with a document that is only offered in JSON.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) { writeJSONCode(w, r, http.StatusOK, v) }

func writeJSONCode(w http.ResponseWriter, r *http.Request, code int, v any) {
	if _, err := codec.Negotiate(r.Header.Get("Accept"), jsonOnly); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	httpbody.Write(w, r, code, "application/json", data)
}

// documents are the discovery and OpenAPI documents of one registry.
type documents struct {
	core, groups http.HandlerFunc                  // /api, /apis
	group        map[string]http.HandlerFunc       // /apis/{group}
	resources    map[groupVersion]http.HandlerFunc // /api/{version}, /apis/{group}/{version}
	reg          *registry
	rootOnce     sync.Once
	root         http.HandlerFunc // /openapi/v3
}

// documents makes reg's documents the first time they are asked for.
func (reg *registry) documents(s *Server) *documents {
	reg.once.Do(func() {
		d := &documents{core: s.serveCoreVersions(reg), groups: s.serveGroups(reg), group: map[string]http.HandlerFunc{},
			resources: map[groupVersion]http.HandlerFunc{}, reg: reg}
		for _, gv := range reg.groupVersions() {
			if gv.group != "" && d.group[gv.group] == nil {
				d.group[gv.group] = s.serveGroup(reg, gv.group)
			}
			d.resources[gv] = s.serveResources(reg, gv)
		}
		reg.docs = d
	})
	return reg.docs
}

// Legacy discovery documents (meta/v1).

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

var (
	resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs   = []string{"get", "patch", "update"}
)

func (s *Server) apiGroups(reg *registry) []apiGroup {
	var groups []apiGroup
	for _, gv := range append(slices.Clip(reg.groupVersions()), s.accessReviewGroupVersions()...) {
		if gv.group == "" {
			continue
		}
		d := groupVersionForDiscovery{gv.group + "/" + gv.version, gv.version}
		if n := len(groups); n > 0 && groups[n-1].Name == gv.group {
			groups[n-1].Versions = append(groups[n-1].Versions, d)
			continue
		}
		groups = append(groups, apiGroup{Name: gv.group, Versions: []groupVersionForDiscovery{d}, PreferredVersion: d})
	}
	return groups
}

// serveCoreVersions answers /api: the core group's versions, or all its
// resources in the aggregated form when the client asks for it.
func (s *Server) serveCoreVersions(reg *registry) http.HandlerFunc {
	aggregated := s.aggregated(reg, true)
	versions := []string{}
	for _, gv := range reg.groupVersions() {
		if gv.group == "" {
			versions = append(versions, gv.version)
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if aggregated.serve(w, r) {
			return
		}
		writeJSON(w, r, map[string]any{
			"kind": "APIVersions", "versions": versions,
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}},
		})
	}
}

// serveGroups answers /apis: the groups, or all their resources in the
// aggregated form when the client asks for it.
func (s *Server) serveGroups(reg *registry) http.HandlerFunc {
	aggregated := s.aggregated(reg, false)
	groups := s.apiGroups(reg)
	if groups == nil {
		groups = []apiGroup{}
	}
	doc := map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
	return func(w http.ResponseWriter, r *http.Request) {
		if !aggregated.serve(w, r) {
			writeJSON(w, r, doc)
		}
	}
}

func (s *Server) serveGroup(reg *registry, group string) http.HandlerFunc {
	var doc apiGroup
	for _, g := range s.apiGroups(reg) {
		if g.Name == group {
			doc = g
		}
	}
	doc.Kind, doc.APIVersion = "APIGroup", "v1"
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, doc) }
}

func (s *Server) serveResources(reg *registry, gv groupVersion) http.HandlerFunc {
	groupVersion := gv.version
	if gv.group != "" {
		groupVersion = gv.group + "/" + gv.version
	}
	resources := s.accessReviewResources(gv)
	if resources == nil {
		resources = []apiResource{}
	}
	for _, res := range reg.resourcesOf(gv) {
		resources = append(resources, apiResource{
			Name: res.Plural, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: res.verbs(), ShortNames: res.ShortNames, Categories: res.Categories,
			StorageVersionHash: storageVersionHash(res),
		})
		if res.statusField != nil {
			resources = append(resources, apiResource{Name: res.Plural + "/status", Namespaced: res.Namespaced, Kind: res.Kind, Verbs: statusVerbs})
		}
		if res.scale != nil {
			resources = append(resources, apiResource{Name: res.Plural + "/scale", Namespaced: res.Namespaced,
				Group: scaleType.group, Version: scaleType.version, Kind: scaleType.kind, Verbs: statusVerbs})
		}
		for _, sub := range res.hooks.subresourceNames() {
			resources = append(resources, apiResource{Name: res.Plural + "/" + sub, Namespaced: res.Namespaced, Kind: res.Kind, Verbs: []string{"update"}})
		}
	}
	doc := map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": groupVersion, "resources": resources}
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, doc) }
}

// storageVersionHash lets clients notice that the storage version of a
// resource changed: the same for every version of a kind. The form is
// kube-apiserver's: the first 8 bytes of a SHA-256, in base64.
func storageVersionHash(res *resource) string {
	st := res.storageVersion()
	sum := sha256.Sum256([]byte(st.Group + "/" + st.Version + "/" + st.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// Aggregated discovery (apidiscovery.k8s.io/v2, and v2beta1 of the same shape).

const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList"

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

// aggregatedDocs are the aggregated discovery documents of /api or /apis,
// by apidiscovery version (v2, v2beta1: the same shape).
type aggregatedDocs map[string][]byte

// serve answers with the document the Accept header asks for, if it asks
// for one.
func (docs aggregatedDocs) serve(w http.ResponseWriter, r *http.Request) bool {
	version := wantsAggregated(r)
	if version == "" {
		return false
	}
	w.Header().Set("Vary", "Accept")
	httpbody.Write(w, r, http.StatusOK, fmt.Sprintf(aggregatedMediaType, version), docs[version])
	return true
}

// aggregated builds the documents of /api (core) or /apis, with every group,
// version and resource.
func (s *Server) aggregated(reg *registry, core bool) aggregatedDocs {
	groups := []groupDiscovery{}
	for _, gv := range reg.groupVersions() {
		if (gv.group == "") != core {
			continue
		}
		vd := versionDiscovery{Version: gv.version, Freshness: "Current", Resources: []resourceDiscovery{}}
		for _, res := range reg.resourcesOf(gv) {
			scope := "Cluster"
			if res.Namespaced {
				scope = "Namespaced"
			}
			kind := groupVersionKind{res.Group, res.Version, res.Kind}
			rd := resourceDiscovery{
				Resource: res.Plural, ResponseKind: kind, Scope: scope, SingularResource: res.Singular,
				Verbs: res.verbs(), ShortNames: res.ShortNames, Categories: res.Categories,
			}
			if res.statusField != nil {
				rd.Subresources = append(rd.Subresources, subresourceDiscovery{"status", kind, statusVerbs})
			}
			if res.scale != nil {
				rd.Subresources = append(rd.Subresources, subresourceDiscovery{"scale", groupVersionKind{scaleType.group, scaleType.version, scaleType.kind}, statusVerbs})
			}
			for _, sub := range res.hooks.subresourceNames() {
				rd.Subresources = append(rd.Subresources, subresourceDiscovery{sub, kind, []string{"update"}})
			}
			vd.Resources = append(vd.Resources, rd)
		}
		if n := len(groups); n > 0 && groups[n-1].Metadata.Name == gv.group {
			groups[n-1].Versions = append(groups[n-1].Versions, vd)
			continue
		}
		g := groupDiscovery{Versions: []versionDiscovery{vd}}
		g.Metadata.Name = gv.group
		groups = append(groups, g)
	}
	if !core {
		groups = append(groups, s.accessReviewDiscovery()...)
	}
	docs := aggregatedDocs{}
	for _, version := range []string{"v2", "v2beta1"} {
		// Plain data: it always marshals.
		docs[version], _ = json.Marshal(map[string]any{
			"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + version,
			"metadata": map[string]any{}, "items": groups,
		})
	}
	return docs
}
