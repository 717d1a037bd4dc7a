package requestinfo

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/names"
	ksel "github.com/kapi-dev/kapi/internal/selector"
)

// Of reads what a request asks for from its method, path and
// query, as kube-apiserver's RequestInfo does (without the deprecated
// /watch/ and /proxy/ path prefixes, which kapi does not serve). It runs
// before routing, so it must split the path where the router will: a
// request is authorized for exactly what the handler then does.
func Of(r *http.Request) auth.Attributes {
	var segments [Segments]string
	path, parts := RoutedPath(r, &segments)
	a := auth.Attributes{Verb: lowerMethod(r.Method), Path: path}
	if len(parts) < 3 {
		return a
	}
	switch parts[0] {
	case "api":
		parts = parts[1:]
	case "apis":
		if len(parts) < 4 {
			return a // a group's discovery, /apis/{group}/{version}
		}
		a.APIGroup = parts[1]
		parts = parts[2:]
	default:
		return a
	}
	a.ResourceRequest = true
	a.APIVersion = parts[0]
	parts = parts[1:]
	switch r.Method {
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodGet, http.MethodHead:
		a.Verb = "get"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
	default:
		a.Verb = ""
	}
	// /namespaces/{namespace}/{resource}/...; but /namespaces/{name} and
	// a namespace's own subresources are the namespaces resource.
	if parts[0] == "namespaces" && len(parts) > 1 {
		a.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	a.Resource = parts[0]
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	if a.Name == "" && a.Verb == "get" {
		query := r.URL.Query()
		a.Verb = "list"
		if watch, _ := BoolQuery(query, "watch"); watch {
			a.Verb = "watch"
		}
		a.Name = selectedName(query.Get("fieldSelector"))
	}
	if a.Name == "" && a.Verb == "delete" {
		a.Verb = "deletecollection"
	}
	if a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection" {
		a.LabelSelector, a.FieldSelector, a.SelectorError = selectorRequirements(r.URL.Query())
	}
	return a
}

// selectorRequirements parses the selectors of a request for its
// authorization, as kube-apiserver does for the verbs that take them.
func selectorRequirements(query url.Values) (labels, fields []auth.SelectorRequirement, err error) {
	var errs []error
	if s := query.Get("labelSelector"); s != "" {
		reqs, err := ksel.ParseLabels(s)
		errs = append(errs, err)
		labels = ksel.AuthRequirements(reqs)
	}
	if s := query.Get("fieldSelector"); s != "" {
		reqs, err := ksel.ParseFields(s)
		errs = append(errs, err)
		fields = ksel.AuthRequirements(reqs)
	}
	return labels, fields, errors.Join(errs...)
}

// lowerMethod is strings.ToLower without an allocation for the usual
// methods.
func lowerMethod(m string) string {
	switch m {
	case http.MethodGet:
		return "get"
	case http.MethodHead:
		return "head"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(m)
}

// APIOr is a handler that serves a request whose routed path (RoutedPath)
// is under /api/ or /apis/ by api, and any other by other: a router's
// handler of the paths no route of it matched.
func APIOr(api, other http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var segments [Segments]string
		if p, _ := RoutedPath(r, &segments); strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/") {
			api(w, r)
		} else {
			other(w, r)
		}
	}
}

// Segments is how many segments of a path Of reads:
// /apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}/{subresource}
// and one for whatever follows.
const Segments = 9

// RoutedPath returns the path the server's router will match and its
// segments, unescaped, in segments: the last holds the rest of a longer
// path, as strings.SplitN. Like chi, it takes the path a parent chi router
// left to route, else the escaped path when the request has one (so an
// escaped "/" stays inside its segment), else the path.
func RoutedPath(r *http.Request, segments *[Segments]string) (string, []string) {
	routed := r.URL.Path
	escaped := false
	if r.URL.RawPath != "" {
		routed, escaped = r.URL.RawPath, true
	}
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
		routed = rctx.RoutePath
	}
	var parts []string
	if rest := strings.Trim(routed, "/"); rest != "" {
		// strings.SplitN(rest, "/", Segments), into segments
		// rather than a new slice.
		parts = segments[:0]
		for len(parts) < Segments-1 {
			segment, after, found := strings.Cut(rest, "/")
			if !found {
				break
			}
			parts, rest = append(parts, segment), after
		}
		parts = append(parts, rest)
	}
	if !escaped {
		return routed, parts
	}
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	if u, err := url.PathUnescape(routed); err == nil {
		routed = u
	}
	return routed, parts
}

// selectedName is the name a field selector restricts a list or watch to
// (metadata.name=NAME), as kube-apiserver authorizes such a request for
// that name. The handler applies the same selector, so it sees no other
// object.
func selectedName(fieldSelector string) string {
	reqs, err := ksel.ParseFields(fieldSelector)
	if err != nil {
		return ""
	}
	for _, r := range reqs {
		if r.Key == "metadata.name" && r.Op == "=" && len(names.IsPathSegmentName(r.Values[0])) == 0 {
			return r.Values[0]
		}
	}
	return ""
}

// BoolQuery reads a boolean query parameter as kube-apiserver converts
// them: absent is false, "false" and "0" (in any case) are false, any other
// value is true. set says whether it was given.
func BoolQuery(query url.Values, name string) (value, set bool) {
	values, set := query[name]
	if !set || len(values) == 0 {
		return false, false
	}
	switch strings.ToLower(values[0]) {
	case "false", "0":
		return false, true
	}
	return true, true
}
