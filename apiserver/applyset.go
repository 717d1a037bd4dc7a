package apiserver

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi/internal/applyset"
)

// applySetRoutes answers kubectl's question for the kinds that may be
// ApplySet parents (Resource.ApplySetParent), unless the server serves
// CustomResourceDefinitions itself: see internal/applyset.
func (s *Server) applySetRoutes(r chi.Router) {
	var kinds []applyset.Kind
	index := map[[2]string]int{}
	for _, res := range s.resources {
		if res.Group == "apiextensions.k8s.io" {
			return // its own list answers
		}
	}
	for _, res := range s.resources {
		k := [2]string{res.Group, res.Kind}
		i, ok := index[k]
		if !ok && !res.applySetParent {
			continue
		}
		if !ok {
			i, index[k] = len(kinds), len(kinds)
			kinds = append(kinds, applyset.Kind{Group: res.Group, Kind: res.Kind, Plural: res.Plural,
				Singular: res.Singular, Namespaced: res.Namespaced})
		}
		if res.version.served {
			kinds[i].Versions = append(kinds[i].Versions, applyset.Version{Name: res.Version, Storage: res.storageVersion() == res})
		}
	}
	if len(kinds) == 0 {
		return
	}
	r.Get(applyset.Path, func(w http.ResponseWriter, req *http.Request) {
		body, err := applyset.ParentTypes(kinds, req.URL.Query().Get("labelSelector"))
		if err != nil {
			writeStatus(w, req, nil, badRequest("%s", strings.TrimPrefix(err.Error(), applyset.ErrSelector.Error()+": ")).Status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
