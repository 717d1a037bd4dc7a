package apiserver

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"time"
)

// openAPIDoc is one group version's OpenAPI v3 document, built once when
// serving starts, with the hash its URL carries.
type openAPIDoc struct {
	data []byte
	hash string
	err  error
}

func (s *Server) openAPIDoc(gv groupVersion) *openAPIDoc {
	var resources []openAPIResource
	for _, r := range s.resourcesOf(gv) {
		resources = append(resources, r.openAPI())
	}
	d := &openAPIDoc{}
	d.data, d.err = openAPIGroupVersion(gv.group, gv.version, resources)
	d.hash = fmt.Sprintf("%X", sha512.Sum512(d.data))
	return d
}

// openAPI is what the OpenAPI generator needs of a resource.
func (r *resource) openAPI() openAPIResource {
	return openAPIResource{
		Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural,
		Namespaced: r.Namespaced, Type: r.typ, Status: r.statusField != nil,
	}
}

func openAPIPath(gv groupVersion) string {
	if gv.group == "" {
		return "api/" + gv.version
	}
	return "apis/" + gv.group + "/" + gv.version
}

// serveOpenAPIRoot lists the group-version documents by their hashed URLs.
func serveOpenAPIRoot(docs map[groupVersion]*openAPIDoc) http.HandlerFunc {
	paths := map[string]any{}
	for gv, d := range docs {
		paths[openAPIPath(gv)] = map[string]string{"serverRelativeURL": "/openapi/v3/" + openAPIPath(gv) + "?hash=" + d.hash}
	}
	root := map[string]any{"paths": paths}
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, root) }
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
		writeBody(w, r, http.StatusOK, "application/json", d.data)
	}
}

// serveOpenAPIV2 answers /openapi/v2 with an empty document. kubectl 1.27
// and 1.28 fetch it before the v3 documents and give up on a 404; an empty
// document sends them on to v3, where the schemas are.
func serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	writeBody(w, r, http.StatusOK, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", nil)
}
