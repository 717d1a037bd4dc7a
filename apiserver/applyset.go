package apiserver

import (
	"net/http"

	"github.com/kapi-dev/kapi/internal/applyset"
)

// applySetParentTypes answers kubectl's question for the kinds that may be
// ApplySet parents (Resource.ApplySetParent), unless the server serves
// CustomResourceDefinitions itself (see internal/applyset), and passes
// other paths to notFound. It is in the router's NotFound rather than a
// route of its own: a static route beside /apis/{group} deepens chi's
// search for every request, enough for an idle watch's stack to stay at
// 16 KiB (TestIdleWatchStack).
func (s *Server) applySetParentTypes(notFound http.HandlerFunc) http.HandlerFunc {
	parents := map[[2]string]bool{}
	for _, res := range s.resources {
		if res.Group == "apiextensions.k8s.io" {
			return notFound // its own list answers
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
	if len(kinds) == 0 {
		return notFound
	}
	parentTypes := applyset.Handler(kinds, func(w http.ResponseWriter, r *http.Request, message string) {
		writeStatus(w, r, nil, badRequest("%s", message).Status)
	})
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != applyset.Path:
			notFound(w, r)
		case r.Method != http.MethodGet:
			writeStatus(w, r, nil, NewStatusError(http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource").Status)
		default:
			parentTypes.ServeHTTP(w, r)
		}
	}
}
