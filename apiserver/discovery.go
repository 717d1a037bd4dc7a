package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/discovery"
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
	*discovery.Documents
	reg      *registry
	rootOnce sync.Once
	root     http.HandlerFunc // /openapi/v3
}

// documents makes reg's documents the first time they are asked for.
func (reg *registry) documents(s *Server) *documents {
	reg.once.Do(func() {
		var gvs []discovery.GroupVersion
		for _, gv := range reg.groupVersions() {
			d := discovery.GroupVersion{Group: gv.group, Version: gv.version}
			for _, res := range reg.resourcesOf(gv) {
				d.Resources = append(d.Resources, res.discovery())
			}
			for _, ep := range reg.endpointsOf(gv) {
				d.Endpoints = append(d.Endpoints, ep.Endpoint)
			}
			gvs = append(gvs, d)
		}
		reg.docs = &documents{Documents: discovery.New(gvs), reg: reg}
	})
	return reg.docs
}

var (
	resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs   = []string{"get", "patch", "update"}
)

// discovery is what discovery says of a resource.
func (res *resource) discovery() discovery.Resource {
	d := discovery.Resource{Kind: res.Kind, Plural: res.Plural, Singular: res.Singular, Namespaced: res.Namespaced,
		Verbs: res.verbs(), ShortNames: res.ShortNames, Categories: res.Categories, StorageVersionHash: storageVersionHash(res)}
	if res.statusField != nil {
		d.Subresources = append(d.Subresources, discovery.Subresource{Name: "status", Verbs: statusVerbs})
	}
	if res.scale != nil {
		d.Subresources = append(d.Subresources, discovery.Subresource{Name: "scale", Group: scaleType.group, Version: scaleType.version, Kind: scaleType.kind, Verbs: statusVerbs})
	}
	for _, sub := range res.hooks.subresourceNames() {
		d.Subresources = append(d.Subresources, discovery.Subresource{Name: sub, Verbs: []string{"update"}})
	}
	return d
}

// serveCoreVersions answers /api: the core group's versions, or all its
// resources in the aggregated form when the client asks for it.
func (d *documents) serveCoreVersions(w http.ResponseWriter, r *http.Request) {
	if !d.ServeAggregated(w, r, true) {
		writeJSON(w, r, map[string]any{
			"kind": "APIVersions", "versions": d.CoreVersions,
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}},
		})
	}
}

// serveGroups answers /apis: the groups, or all their resources in the
// aggregated form when the client asks for it.
func (d *documents) serveGroups(w http.ResponseWriter, r *http.Request) {
	if !d.ServeAggregated(w, r, false) {
		writeJSON(w, r, d.Groups)
	}
}

// storageVersionHash lets clients notice that the storage version of a
// resource changed: the same for every version of a kind. The form is
// kube-apiserver's: the first 8 bytes of a SHA-256, in base64.
func storageVersionHash(res *resource) string {
	st := res.storageVersion()
	sum := sha256.Sum256([]byte(st.Group + "/" + st.Version + "/" + st.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
