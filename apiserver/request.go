package apiserver

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/internal/requestinfo"
	"github.com/kapi-dev/kapi/patch"
)

type verb int

const (
	verbGet verb = iota
	verbList
	verbCreate
	verbUpdate
	verbPatch
	verbDelete
	verbDeleteCollection
)

// request is one resource request, parsed.
type request struct {
	s           *Server
	res         *resource
	endpoint    *endpoint // a custom subresource or an answered kind (endpoints.go)
	namespace   string    // "" for cluster-scoped resources and all-namespace lists
	name        string
	subresource string
	objType     *objectType // the type of the objects read and written
	query       url.Values
	out         codec.Target // the response's format and view
	// includeObject is the Table parameter: None, Metadata (also "") or Object.
	includeObject    string
	tableHeadersSent bool
	listPrefix       string // a whole collection's LIST: its prefix and revision (see joinedList)
	listRev          int64
	buf              encodeBuffers // where the response is encoded
	warned           map[string]bool
	warnedRunes      int
	rec              *recording // what observers see, or nil (observe.go)
	cacheSlow        bool       // the watch cache was waited for in vain (waitCache)
	curOffered       bool       // current's object, in rq's version, is the one this server offered for its value (see offer)
	w                http.ResponseWriter
	r                *http.Request
}

// handle serves the paths under /api/ and /apis/: the discovery document
// of a group or group version (through doc), and the resources of a group
// version, as registered when the request arrives.
func (s *Server) handle(doc func(func(*documents, *http.Request) http.HandlerFunc) http.HandlerFunc, notAllowed http.HandlerFunc) http.HandlerFunc {
	// A legacy discovery document, written as JSON.
	document := func(v any) http.HandlerFunc {
		if v == nil {
			return nil
		}
		return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, v) }
	}
	group := doc(func(d *documents, r *http.Request) http.HandlerFunc {
		return document(d.Group[resourcePathOf(r).gv.group])
	})
	resources := doc(func(d *documents, r *http.Request) http.HandlerFunc {
		gv := resourcePathOf(r).gv
		return document(d.Resources[[2]string{gv.group, gv.version}])
	})
	return func(w http.ResponseWriter, r *http.Request) {
		// Made apart, so that what making it takes is off the stack: a
		// watch's handler keeps its stack while it idles (see
		// TestIdleWatcherCost).
		switch rq, v := newRequest(s, w, r); {
		case v != verbNone || rq.subresource == "":
			rq.run(v) // verbNone: not found
		case rq.subresource == "group" && r.Method == http.MethodGet:
			group(w, r)
		case rq.subresource == "version" && r.Method == http.MethodGet:
			resources(w, r)
		default:
			notAllowed(w, r)
		}
	}
}

// verbNone is a request of no verb: one whose path names no resource, or
// that is discovery (see newRequest).
const verbNone verb = -1

// resourcePath is what the path of a request under /api/ or /apis/ names.
type resourcePath struct {
	gv                                     groupVersion
	namespace, resource, name, subresource string
	verbs                                  map[string]verb // what its methods do, nil if it names nothing
	discovery                              string          // "group", "version" for a discovery document
}

// The verbs of each kind of path. /namespaces/{name}/status and
// /finalize read as a namespaced collection; newRequest tells them apart.
var (
	collectionVerbs           = map[string]verb{http.MethodGet: verbList, http.MethodPost: verbCreate, http.MethodDelete: verbDeleteCollection}
	namespacedCollectionVerbs = map[string]verb{http.MethodGet: verbList, http.MethodPost: verbCreate, http.MethodDelete: verbDeleteCollection,
		http.MethodPut: verbUpdate, http.MethodPatch: verbPatch}
	itemVerbs        = map[string]verb{http.MethodGet: verbGet, http.MethodPut: verbUpdate, http.MethodPatch: verbPatch, http.MethodDelete: verbDelete}
	subresourceVerbs = map[string]verb{http.MethodGet: verbGet, http.MethodPut: verbUpdate, http.MethodPatch: verbPatch,
		http.MethodPost: verbCreate, http.MethodDelete: verbDelete} // the last two: endpoints only
)

// resourcePathOf reads the path of r, with or without a trailing slash:
// /api/{version}/... or /apis/{group}/{version}/..., then
// [/namespaces/{namespace}]/{resource}[/{name}[/{subresource}]].
func resourcePathOf(r *http.Request) resourcePath {
	var segments [requestinfo.Segments]string
	_, parts := requestinfo.RoutedPath(r, &segments)
	var p resourcePath
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		p.gv.version, parts = parts[1], parts[2:]
	case len(parts) == 2 && parts[0] == "apis":
		p.gv.group, p.discovery = parts[1], "group"
		return p
	case len(parts) >= 3 && parts[0] == "apis":
		p.gv.group, p.gv.version, parts = parts[1], parts[2], parts[3:]
	default:
		return p
	}
	if slices.Contains(parts, "") || p.gv.version == "" {
		return p
	}
	if len(parts) == 0 {
		p.discovery = "version"
		return p
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		p.namespace, parts = parts[1], parts[2:]
		p.verbs = [...]map[string]verb{namespacedCollectionVerbs, itemVerbs, subresourceVerbs, nil}[min(len(parts), 4)-1]
	} else {
		p.verbs = [...]map[string]verb{collectionVerbs, itemVerbs, subresourceVerbs, nil}[min(len(parts), 4)-1]
	}
	p.resource = parts[0]
	if len(parts) > 1 {
		p.name = parts[1]
	}
	if len(parts) > 2 {
		p.subresource = parts[2]
	}
	return p
}

// newRequest reads a request to the path of a resource, and the verb of
// its method; verbNone, with subresource saying "group" or "version" for
// a discovery document, or "" for a path that names nothing, else
// anything for a method the path does not serve.
func newRequest(s *Server, w http.ResponseWriter, r *http.Request) (*request, verb) {
	p := resourcePathOf(r)
	rq := &request{s: s, namespace: p.namespace, name: p.name, subresource: p.subresource, w: w, r: r}
	if p.discovery != "" {
		rq.subresource = p.discovery
		return rq, verbNone
	}
	if p.verbs == nil {
		rq.subresource = ""
		return rq, verbNone
	}
	v, ok := p.verbs[r.Method]
	if !ok {
		rq.subresource = r.Method
		if p.name != "" && p.subresource == "" && s.reg.Load().endpoints[endpointKey{p.gv, p.resource, ""}] != nil {
			rq.subresource = "" // an answered kind has no object's path: 404, as kube-apiserver routes none
		}
		return rq, verbNone
	}
	byPlural := s.reg.Load().byGV[p.gv]
	rq.res = byPlural[p.resource]
	if ns := byPlural["namespaces"]; ns != nil && rq.res != ns && rq.name == "" && rq.namespace != "" && ns.isSubresource(p.resource) {
		// A namespace's own subresource, not a collection in it.
		rq.res, rq.name, rq.namespace, rq.subresource = ns, rq.namespace, "", p.resource
		switch v {
		case verbList:
			v = verbGet
		case verbCreate, verbDeleteCollection:
			rq.subresource = r.Method
			return rq, verbNone
		}
	}
	if rq.res == nil || rq.subresource != "" && !rq.res.isSubresource(rq.subresource) {
		rq.endpoint = s.reg.Load().endpoints[endpointKey{p.gv, p.resource, rq.subresource}]
	}
	if r.URL.RawQuery != "" { // else nil, which reads as empty without a map made
		rq.query = r.URL.Query()
	}
	if len(s.config.observers) > 0 { // else no context to search
		rq.rec = recordFrom(r.Context())
	}
	return rq, v
}

func (rq *request) run(v verb) {
	defer rq.buf.release() // after the response is written: it may be one
	if err := rq.serve(v); err != nil {
		rq.fail(err)
	}
}

func (rq *request) serve(v verb) error {
	if rq.endpoint != nil {
		return rq.serveEndpoint(v)
	}
	res := rq.res
	if res == nil || rq.namespace != "" && !res.Namespaced || res.Namespaced && rq.namespace == "" && rq.name != "" ||
		rq.subresource == "status" && res.statusField == nil || rq.subresource == "scale" && res.scale == nil ||
		rq.subresource != "" && rq.subresource != "status" && rq.subresource != "scale" && res.hooks.subresources[rq.subresource] == nil {
		return NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, "the server could not find the requested resource")
	}
	if res.hooks.subresources[rq.subresource] != nil && v != verbUpdate || rq.subresource != "" && (v == verbCreate || v == verbDelete) { // finalize: written only, as kube's namespaces/finalize
		return NewStatusError(http.StatusMethodNotAllowed, kapi.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
	}
	rq.objType = &res.objType
	if text := res.deprecationWarning(); text != "" {
		rq.warn(text)
	}
	if rq.subresource == "scale" {
		rq.objType = scaleType
	}
	if res.Namespaced && rq.namespace == "" && (v == verbCreate || v == verbDeleteCollection) || rq.name == "" && (v == verbUpdate || v == verbPatch) ||
		v == verbDeleteCollection && res.hooks.noDeleteCollection {
		return NewStatusError(http.StatusMethodNotAllowed, kapi.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
	}
	if err := rq.checkPathNames(); err != nil {
		return err
	}
	if v == verbList || v == verbDeleteCollection {
		if err := rq.checkListNumbers(); err != nil {
			return err
		}
	}
	if err := rq.checkWriteOptions(v); err != nil {
		return err
	}
	watch, _ := rq.boolParam("watch")
	var err error
	switch {
	case v == verbList && watch:
		err = rq.negotiate(true, codec.ViewObject, codec.ViewTable, codec.ViewMetadata)
	case v == verbGet && rq.subresource != "scale":
		err = rq.negotiate(false, codec.ViewObject, codec.ViewTable, codec.ViewMetadata)
	case v == verbList:
		err = rq.negotiate(false, codec.ViewObject, codec.ViewTable, codec.ViewMetadataList)
	default:
		err = rq.negotiate(false, codec.ViewObject)
	}
	if err != nil {
		return err
	}
	ctx := rq.r.Context()
	switch v {
	case verbGet:
		if rq.subresource == "scale" {
			return rq.getScale(ctx)
		}
		return rq.get(ctx)
	case verbList:
		if watch {
			spec, err := rq.parseWatch(ctx)
			if err != nil {
				return err
			}
			return rq.streamWatch(ctx, spec)
		}
		return rq.list(ctx)
	case verbCreate:
		return rq.create(ctx)
	case verbUpdate:
		if rq.subresource == "scale" {
			return rq.updateScale(ctx)
		}
		return rq.update(ctx)
	case verbPatch:
		return rq.patch(ctx)
	case verbDelete:
		return rq.delete(ctx)
	case verbDeleteCollection:
		return rq.deleteCollection(ctx)
	}
	return fmt.Errorf("unknown verb %d", v)
}

// checkPathNames refuses a name or namespace in the path that no object
// can have.
func (rq *request) checkPathNames() error {
	if msgs := names.IsPathSegmentName(rq.name); rq.name != "" && len(msgs) > 0 {
		return badRequest("Name parameter invalid: %q: %s", rq.name, strings.Join(msgs, ";"))
	}
	if msgs := names.IsPathSegmentName(rq.namespace); rq.namespace != "" && len(msgs) > 0 {
		return badRequest("Namespace parameter invalid: %q: %s", rq.namespace, strings.Join(msgs, ";"))
	}
	return nil
}

// checkListNumbers refuses list options that are not numbers where numbers
// are due, before any verb that takes them acts: a deletecollection reads
// them too, and must not delete when a client's options make no sense.
func (rq *request) checkListNumbers() error {
	for _, name := range []string{"limit", "timeoutSeconds"} {
		if s := rq.query.Get(name); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err != nil || n < 0 {
				return badRequest("%s must be a non-negative integer, not %q", name, s)
			}
		}
	}
	if rv := rq.query.Get("resourceVersion"); rv != "" {
		if _, err := parseRevision(rv); err != nil {
			return err
		}
	}
	return nil
}

// checkWriteOptions refuses what kube-apiserver refuses in the options of a
// write: a fieldManager over 128 bytes or with a character that is not
// printable (it is recorded in managedFields and shown to users), and force
// on a patch that is not an apply.
func (rq *request) checkWriteOptions(v verb) error {
	var kind string
	switch v {
	case verbCreate:
		kind = "CreateOptions"
	case verbUpdate:
		kind = "UpdateOptions"
	case verbPatch:
		kind = "PatchOptions"
	default:
		return nil // a switch: a map literal here was made anew for every request
	}
	manager := rq.query.Get("fieldManager")
	var errs FieldErrors
	if _, force := rq.query["force"]; force && v == verbPatch {
		if mt := mediaType(rq.r.Header.Get("Content-Type")); mt != string(patch.ApplyYAML) && mt != string(patch.ApplyCBOR) {
			errs = append(errs, Forbidden("force", "may not be specified for non-apply patch"))
		}
	}
	if len(manager) > patch.MaxManagerLength {
		errs = append(errs, &FieldError{Type: kapi.CauseTypeFieldValueTooLong, Field: "fieldManager", Detail: fmt.Sprintf("may not be more than %d bytes", patch.MaxManagerLength)})
	}
	for i, r := range manager {
		if !unicode.IsPrint(r) {
			errs = append(errs, Invalid("fieldManager", manager, fmt.Sprintf("invalid character %#U (at position %d)", r, i)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return optionsInvalid(kind, errs)
}

// optionsInvalid is kube-apiserver's 422 for invalid options of a request
// (CreateOptions, PatchOptions...): the options' kind in meta.k8s.io, no
// name.
func optionsInvalid(kind string, errs FieldErrors) error {
	e := invalid(target{}, errs)
	e.Status.Message = kind + ".meta.k8s.io \"\" is invalid: " + errs.Error()
	e.Status.Details.Group, e.Status.Details.Kind = "meta.k8s.io", kind
	return e
}

// fail answers with the Status of err, in the negotiated format if there
// is one. Handlers that begin a response (a watch) do not fail after that.
func (rq *request) fail(err error) {
	writeStatus(rq.w, rq.r, rq.out.Format, statusOf(err, target{rq.res, rq.name}))
}

// boolParam reads a boolean query parameter (see requestinfo.BoolQuery), as
// the authorizer read watch.
func (rq *request) boolParam(name string) (value, set bool) {
	return requestinfo.BoolQuery(rq.query, name)
}

// dryRun reads the dryRun parameter: only All is known.
func (rq *request) dryRun(fromBody []string) (bool, error) {
	values := append(rq.query["dryRun"], fromBody...)
	for _, v := range values {
		if v != "All" {
			return false, badRequest("Invalid dryRun value %q: only \"All\" is supported", v)
		}
	}
	return len(values) > 0, nil
}

// parseRevision reads a resourceVersion sent by a client.
func parseRevision(s string) (int64, error) {
	rev, err := strconv.ParseInt(s, 10, 64)
	if err != nil || rev < 0 {
		return 0, badRequest("invalid resource version %q: must be a non-negative integer", s)
	}
	return rev, nil
}

func formatRevision(rev int64) string { return strconv.FormatInt(rev, 10) }

// errCacheBehind says that the cache has not caught up with the store in
// time; gets and lists then read the store instead.
var errCacheBehind = NewStatusError(http.StatusGatewayTimeout, kapi.StatusReasonTimeout, "the cache has not caught up with the store yet; try again")

// consistent waits until the cache can answer a read with resourceVersion rv:
// "" is the store's latest revision, "0" any, another value at least it.
func (rq *request) consistent(ctx context.Context, rv string) error {
	var rev int64
	switch rv {
	case "0":
	case "":
		var err error
		if rev, err = rq.s.config.store.Revision(ctx); err != nil {
			return err
		}
	default:
		var err error
		if rev, err = parseRevision(rv); err != nil {
			return err
		}
	}
	if rq.s.hub.Reached(rev) {
		return nil // the usual case: no timer, no wait
	}
	if err := rq.s.hub.WaitWithin(ctx, rev, 3*time.Second); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rv == "" || rv == "0" {
			return errCacheBehind
		}
		return tooLargeResourceVersion(fmt.Sprintf("Too large resource version: %d, current: %d", rev, rq.s.hub.Revision()))
	}
	return nil
}

func unmarshalStored(data []byte, obj kapi.Object) error {
	return codec.UnmarshalJSON(data, obj)
}

// shallowCopy returns a new object whose fields are those of obj.
func shallowCopy(obj kapi.Object) kapi.Object {
	v := reflect.New(reflect.TypeOf(obj).Elem())
	v.Elem().Set(reflect.ValueOf(obj).Elem())
	return v.Interface().(kapi.Object)
}

// mediaType is the bare media type of a Content-Type header.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}
