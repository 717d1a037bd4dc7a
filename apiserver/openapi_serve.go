package apiserver

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"sync"
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

func (s *Server) serveOpenAPI(gv groupVersion) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d := s.openAPIFor(gv)
		if d.err != nil {
			writeStatus(w, r, statusOf(d.err, target{}))
			return
		}
		w.Header().Set("Etag", `"`+d.hash+`"`)
		if r.URL.Query().Get("hash") == d.hash {
			w.Header().Set("Cache-Control", "public, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		writeBody(w, http.StatusOK, "application/json", d.data)
	}
}
