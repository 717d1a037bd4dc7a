package apiserver

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// openAPIDocs builds each group version's OpenAPI v3 document once, with the
// hash its URL carries.
type openAPIDoc struct {
	once sync.Once
	data []byte
	hash string
	err  error
}

func (s *Server) openAPIFor(gv groupVersion) *openAPIDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.openAPI == nil {
		s.openAPI = map[groupVersion]*openAPIDoc{}
	}
	d := s.openAPI[gv]
	if d == nil {
		d = &openAPIDoc{}
		s.openAPI[gv] = d
	}
	d.once.Do(func() {
		var resources []openAPIResource
		for _, r := range s.resourcesOf(gv) {
			resources = append(resources, openAPIResource{
				Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural,
				Namespaced: r.Namespaced, Type: r.typ, Status: r.statusField != nil,
			})
		}
		d.data, d.err = openAPIGroupVersion(gv.group, gv.version, resources)
		d.hash = fmt.Sprintf("%X", sha512.Sum512(d.data))
	})
	return d
}

func openAPIPath(gv groupVersion) string {
	if gv.group == "" {
		return "api/" + gv.version
	}
	return "apis/" + gv.group + "/" + gv.version
}

func (s *Server) serveOpenAPIRoot(w http.ResponseWriter, r *http.Request) {
	paths := map[string]any{}
	for _, gv := range s.groupVersions() {
		d := s.openAPIFor(gv)
		if d.err != nil {
			writeStatus(w, r, statusOf(d.err, target{}))
			return
		}
		paths[openAPIPath(gv)] = map[string]string{"serverRelativeURL": "/openapi/v3/" + openAPIPath(gv) + "?hash=" + d.hash}
	}
	writeJSON(w, r, map[string]any{"paths": paths})
}

// serveOpenAPI serves one group version's document as kube-apiserver does:
// under its hash it is immutable, and kubectl's disk cache keeps it only
// when told for how long (Expires).
func (s *Server) serveOpenAPI(gv groupVersion) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d := s.openAPIFor(gv)
		if d.err != nil {
			writeStatus(w, r, statusOf(d.err, target{}))
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
		writeBody(w, http.StatusOK, "application/json", d.data)
	}
}

// serveOpenAPIV2 answers /openapi/v2 with an empty document. kubectl 1.27
// and 1.28 fetch it before the v3 documents and give up on a 404; an empty
// document sends them on to v3, where the schemas are.
func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	writeBody(w, http.StatusOK, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", nil)
}
