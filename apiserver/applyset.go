package apiserver

import (
	"net/http"

	"github.com/kapi-dev/kapi/internal/applyset"
)

// applySetParentTypes answers kubectl's question for the kinds that may be
// ApplySet parents (Resource.ApplySetParent), from the registry of the
// moment (see internal/applyset); when the server serves
// CustomResourceDefinitions itself, api answers, and the kinds registered
// as parent types join its answer to kubectl's question.
func (s *Server) applySetParentTypes(api http.HandlerFunc) http.HandlerFunc {
	fail := func(w http.ResponseWriter, r *http.Request, message string) {
		writeStatus(w, r, nil, badRequest("%s", message).Status)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		kinds, ownCRDs := parentTypes(s.reg.Load().resources)
		switch {
		case len(kinds) == 0 || r.Method != http.MethodGet:
			api(w, r)
		case ownCRDs:
			applyset.WithParentTypes(api, kinds).ServeHTTP(w, r)
		default:
			applyset.Handler(kinds, fail).ServeHTTP(w, r)
		}
	}
}

// parentTypes lists the kinds of resources registered as ApplySet
// parents, with their served versions, and says whether the server serves
// kinds of apiextensions.k8s.io itself.
func parentTypes(resources []*resource) (kinds []applyset.Kind, ownCRDs bool) {
	parents := map[[2]string]bool{}
	for _, res := range resources {
		ownCRDs = ownCRDs || res.Group == "apiextensions.k8s.io"
		parents[[2]string{res.Group, res.Kind}] = parents[[2]string{res.Group, res.Kind}] || res.applySetParent
	}
	index := map[[2]string]int{}
	for _, res := range resources {
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
	return kinds, ownCRDs
}
