package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/internal/httpbody"
	"github.com/kapi-dev/kapi/internal/openapi"
)

// openAPIDoc is one group version's OpenAPI v3 document, with the hash
// its URL carries, built the first time it is asked for.
type openAPIDoc struct {
	gv        groupVersion
	resources []*resource
	once      sync.Once
	data      []byte
	hash      string
	err       error
}

func (d *openAPIDoc) build() *openAPIDoc {
	d.once.Do(func() {
		var resources []openapi.Resource
		for _, r := range d.resources {
			resources = append(resources, r.openAPI())
		}
		d.data, d.err = openapi.GroupVersion(d.gv.group, d.gv.version, resources)
		d.hash = fmt.Sprintf("%X", sha512.Sum512(d.data))
	})
	return d
}

// openAPIRoot serves /openapi/v3: the group-version documents by their
// hashed URLs.
func (d *documents) openAPIRoot() http.HandlerFunc {
	d.rootOnce.Do(func() {
		paths := map[string]any{}
		for gv, doc := range d.reg.openAPI {
			paths[openAPIPath(gv)] = map[string]string{"serverRelativeURL": "/openapi/v3/" + openAPIPath(gv) + "?hash=" + doc.build().hash}
		}
		root := map[string]any{"paths": paths}
		d.root = func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, root) }
	})
	return d.root
}

// openAPI serves one group version's document, or nil.
func (d *documents) openAPI(gv groupVersion) http.HandlerFunc {
	doc := d.reg.openAPI[gv]
	if doc == nil {
		return nil
	}
	return serveOpenAPI(gv, doc.build())
}

// openAPI is what the OpenAPI generator needs of a resource.
func (r *resource) openAPI() openapi.Resource {
	o := openapi.Resource{
		Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural,
		Namespaced: r.Namespaced, Type: r.typ, Status: r.statusField != nil,
	}
	if r.shape != nil {
		o.Schema = r.shape.OpenAPI()
	}
	return o
}

func openAPIPath(gv groupVersion) string {
	if gv.group == "" {
		return "api/" + gv.version
	}
	return "apis/" + gv.group + "/" + gv.version
}

// serveOpenAPI serves one group version's document as kube-apiserver does:
// under its hash it is immutable, and kubectl's disk cache keeps it only
// when told for how long (Expires).
func serveOpenAPI(gv groupVersion, d *openAPIDoc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.err != nil {
			writeStatus(w, r, nil, statusOf(d.err, target{}))
			return
		}
		h := w.Header()
		etag := `"` + d.hash + `"`
		h.Set("Etag", etag)
		h.Set("Vary", "Accept")
		switch hash := r.URL.Query().Get("hash"); {
		case hash == d.hash:
			h.Set("Cache-Control", "public, immutable")
			h.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
		case hash != "":
			http.Redirect(w, r, "/openapi/v3/"+openAPIPath(gv)+"?hash="+d.hash, http.StatusMovedPermanently)
			return
		default:
			h.Set("Cache-Control", "no-cache, private")
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		httpbody.Write(w, r, http.StatusOK, "application/json", d.data)
	}
}

// The media types of /openapi/v2, as kube-apiserver serves them: JSON for
// kube-aggregator (which merges the documents of its APIServices and
// cannot read an empty body), the gnostic protobuf for kubectl and
// client-go (DiscoveryClient.OpenAPISchema), under either of its names.
const (
	openAPIV2Protobuf           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV2ProtobufDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// serveOpenAPIV2 answers /openapi/v2 with a valid Swagger 2.0 document
// without paths or definitions: the schemas are in the v3 documents, which
// kubectl 1.27 and later read, but kubectl 1.27 and 1.28 fetch this one
// first and give up on a 404. kube-aggregator treats a 404 as "no spec" too,
// but a valid document suits both. Its media types are negotiated as
// kube-openapi's handler does: the clauses of Accept by q, then JSON before
// protobuf for a wildcard; nothing acceptable is 406 without a body.
func serveOpenAPIV2(version VersionInfo) http.HandlerFunc {
	jsonDoc, _ := json.Marshal(map[string]any{
		"swagger": "2.0",
		"info":    map[string]string{"title": "Kubernetes", "version": version.GitVersion},
		"paths":   map[string]any{},
	})
	// Document{swagger: 1, info: 2 {title: 1, version: 2}, paths: 8 {}}.
	var info []byte
	info = protowire.AppendTag(info, 1, protowire.BytesType)
	info = protowire.AppendString(info, "Kubernetes")
	info = protowire.AppendTag(info, 2, protowire.BytesType)
	info = protowire.AppendString(info, version.GitVersion)
	var pbDoc []byte
	pbDoc = protowire.AppendTag(pbDoc, 1, protowire.BytesType)
	pbDoc = protowire.AppendString(pbDoc, "2.0")
	pbDoc = protowire.AppendTag(pbDoc, 2, protowire.BytesType)
	pbDoc = protowire.AppendBytes(pbDoc, info)
	pbDoc = protowire.AppendTag(pbDoc, 8, protowire.BytesType)
	pbDoc = protowire.AppendBytes(pbDoc, nil)
	etag := fmt.Sprintf(`"%X"`, sha512.Sum512(jsonDoc)) // one for both, as kube's: Vary says which
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Accept")
		var data []byte
		switch openAPIV2MediaType(r.Header.Get("Accept")) {
		case "application/json":
			data = jsonDoc
			h.Set("Content-Type", "application/json")
		case openAPIV2Protobuf:
			data = pbDoc
			h.Set("Content-Type", openAPIV2Protobuf)
		default:
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		h.Set("Etag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		httpbody.Write(w, r, http.StatusOK, h.Get("Content-Type"), data)
	}
}

// openAPIV2MediaType picks what /openapi/v2 answers an Accept header with:
// "application/json", openAPIV2Protobuf, or "" for nothing acceptable.
func openAPIV2MediaType(accept string) string {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	best, bestQ := "", 0.0
	for _, clause := range strings.Split(accept, ",") {
		// Not mime.ParseMediaType: the protobuf's older name has an "@".
		mediaType, params, _ := strings.Cut(clause, ";")
		mediaType = strings.ToLower(strings.TrimSpace(mediaType))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, _ := strings.Cut(p, "="); strings.TrimSpace(k) == "q" {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || !(q > 0 && q <= 1) {
					q = 0
				}
			}
		}
		if q <= bestQ {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", "application/json":
			best, bestQ = "application/json", q
		case openAPIV2Protobuf, openAPIV2ProtobufDeprecated:
			best, bestQ = openAPIV2Protobuf, q
		}
	}
	return best
}
