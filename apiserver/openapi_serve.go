package apiserver

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"sync"

	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/internal/openapi"
)

// openAPIDoc is one group version's OpenAPI v3 document, with the hash
// its URL carries, built the first time it is asked for.
type openAPIDoc struct {
	gv        groupVersion
	resources []*resource
	endpoints []*endpoint
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
		var endpoints []actions.Endpoint
		for _, ep := range d.endpoints {
			endpoints = append(endpoints, ep.Endpoint)
		}
		d.data, d.err = openapi.GroupVersion(d.gv.group, d.gv.version, resources, endpoints...)
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

// serveOpenAPI serves one group version's document (openapi.Serve).
func serveOpenAPI(gv groupVersion, d *openAPIDoc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.err != nil {
			writeStatus(w, r, nil, statusOf(d.err, target{}))
			return
		}
		openapi.Serve(w, r, "/openapi/v3/"+openAPIPath(gv), d.data, d.hash)
	}
}
