package apiserver

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi/internal/applyset"
)

// applySetRoutes answers kubectl's question for the kinds that may be
// ApplySet parents (Resource.ApplySetParent), unless the server serves
// CustomResourceDefinitions itself: see internal/applyset.
func (s *Server) applySetRoutes(r chi.Router) {
	parents := map[[2]string]bool{}
	for _, res := range s.resources {
		if res.Group == "apiextensions.k8s.io" {
			return // its own list answers
		}
		parents[[2]string{res.Group, res.Kind}] = parents[[2]string{res.Group, res.Kind}] || res.applySetParent
	}
	var kinds []applyset.Kind
	index := map[[2]string]int{}
	for _, res := range s.resources {
		k := [2]string{res.Group, res.Kind}
		if !parents[k] {
			continue
		}
		i, ok := index[k]
		if !ok {
			i, index[k] = len(kinds), len(kinds)
			kinds = append(kinds, applyset.Kind{Group: res.Group, Kind: res.Kind, Plural: res.Plural, Singular: res.Singular, Namespaced: res.Namespaced})
		}
		if res.version.served {
			kinds[i].Versions = append(kinds[i].Versions, applyset.Version{Name: res.Version, Storage: res.storageVersion() == res})
		}
	}
	if len(kinds) > 0 {
		r.Method(http.MethodGet, applyset.Path, applyset.Handler(kinds, func(w http.ResponseWriter, r *http.Request, message string) {
			writeStatus(w, r, nil, badRequest("%s", message).Status)
		}))
	}
}
