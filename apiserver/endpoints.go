package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/httpbody"
	"github.com/kapi-dev/kapi/internal/openapi"
)

// The seam of package actions: custom subresources with handlers of
// their own (as kube-apiserver's pods/log and pods/eviction) and kinds
// answered and never stored (as TokenReview), served by the request path
// as every request: authorized on the path's attributes, bodies decoded
// as writes' and admitted, errors answered as Status.

type endpointKey struct {
	gv                    groupVersion
	resource, subresource string
}

// endpoint is an actions.Endpoint checked, with the resource that errors,
// admission and discovery name: an answered kind's own, or the one whose
// subresource it is, as registered when it was added.
type endpoint struct {
	actions.Endpoint
	res   *resource
	verbs map[verb]*endpointVerb
}

type endpointVerb struct {
	actions.Verb
	in, out *objectType
}

var endpointVerbs = map[string]verb{"get": verbGet, "create": verbCreate, "update": verbUpdate}

// AddEndpoint serves an endpoint of package actions, which must be added
// before serving starts; a subresource's resource must be registered
// before it.
func (s *Server) AddEndpoint(e actions.Endpoint) error {
	ep, err := newEndpoint(e)
	if err != nil {
		return fmt.Errorf("apiserver: endpoint %s/%s %s: %w", e.Group, e.Version, strings.TrimSuffix(e.Resource+"/"+e.Subresource, "/"), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.handler.Load() != nil || s.completed:
		return fmt.Errorf("apiserver: endpoint %s: too late: endpoints are added before serving starts", e.Resource)
	case slices.ContainsFunc(s.endpoints, func(o *endpoint) bool {
		return o.Group == e.Group && o.Version == e.Version && o.Resource == e.Resource && o.Subresource == e.Subresource
	}):
		return fmt.Errorf("apiserver: endpoint %s/%s added twice", e.Resource, e.Subresource)
	}
	switch {
	case e.Subresource != "" && e.Group == "" && e.Resource == "namespaces":
		// Its path, /api/v1/namespaces/{name}/{subresource}, reads as a
		// collection in a namespace; only the namespace's own status and
		// finalize are told apart from those.
		return fmt.Errorf("apiserver: endpoint namespaces/%s: a subresource of namespaces cannot be added", e.Subresource)
	case e.Subresource == "":
		for _, r := range s.resources {
			if r.Group == e.Group && (r.Kind == e.Kind || r.Plural == e.Resource) {
				return fmt.Errorf("apiserver: endpoint %s: clashes with the registered %s (resource %q)", ep.path(), r.gvk(), r.Plural)
			}
		}
		if err := clashes(s.resources, ep.res); err != nil {
			return err
		}
	default:
		i := slices.IndexFunc(s.resources, func(r *resource) bool { return r.Group == e.Group && r.Version == e.Version && r.Plural == e.Resource })
		if i < 0 || s.resources[i].isSubresource(e.Subresource) {
			return fmt.Errorf("apiserver: endpoint %s/%s: no such resource in %s/%s, or it has that subresource", e.Resource, e.Subresource, e.Group, e.Version)
		}
		ep.res = s.resources[i]
	}
	s.endpoints = append(s.endpoints, ep)
	return nil
}

func newEndpoint(e actions.Endpoint) (*endpoint, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	ep := &endpoint{Endpoint: e, verbs: map[verb]*endpointVerb{}}
	for name, v := range e.Verbs {
		ep.verbs[endpointVerbs[name]] = &endpointVerb{Verb: v, in: objectTypeOf(v.In, e.Group, e.Version), out: objectTypeOf(v.Out, e.Group, e.Version)}
	}
	if e.Subresource == "" {
		in := ep.verbs[verbCreate].in
		ep.res = &resource{Group: e.Group, Version: e.Version, Kind: e.Kind, Plural: e.Resource, Singular: e.Singular,
			Namespaced: e.Namespaced, ShortNames: e.ShortNames, Categories: e.Categories, typ: in.typ, objType: *in}
		if err := ep.res.complete(false); err != nil {
			return nil, err
		}
		if in.kind != e.Kind {
			return nil, fmt.Errorf("the body's kind is %s, not %s", in.kind, e.Kind)
		}
	}
	// Every type must be describable in OpenAPI, as a resource's.
	if _, err := openapi.GroupVersion(e.Group, e.Version, nil, e); err != nil {
		return nil, err
	}
	return ep, nil
}

// objectTypeOf describes the type of obj (actions.KindOf), nil for none.
func objectTypeOf(obj kapi.Object, group, version string) *objectType {
	if obj == nil {
		return nil
	}
	t := reflect.TypeOf(obj).Elem()
	ot := &objectType{typ: t, protobuf: codec.SupportsProtobuf(t) == nil,
		newObject: func() kapi.Object { return reflect.New(t).Interface().(kapi.Object) }}
	ot.group, ot.version, ot.kind = actions.KindOf(obj, group, version)
	ot.gv = groupVersion{ot.group, ot.version}.apiVersion()
	return ot
}

// serveEndpoint serves a request to an endpoint: its path and options
// checked as any request's, a subresource's object read (404 if there is
// none), the body decoded and admitted, then answered.
func (rq *request) serveEndpoint(v verb) error {
	ep := rq.endpoint
	if ep.Subresource == "" {
		rq.res = ep.res
	}
	h := ep.verbs[v]
	switch {
	case rq.res == nil, ep.Subresource == "" && rq.name != "", rq.res.Namespaced != (rq.namespace != ""):
		return NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, "the server could not find the requested resource")
	case h == nil:
		return NewStatusError(http.StatusMethodNotAllowed, kapi.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
	}
	if err := rq.checkPathNames(); err != nil {
		return err
	}
	if err := rq.checkWriteOptions(v); err != nil {
		return err
	}
	var dryRun bool
	if v != verbGet { // kube-apiserver reads dryRun on writes alone
		var err error
		if dryRun, err = rq.dryRun(nil); err != nil {
			return err
		}
	}
	ctx, req := rq.r.Context(), actions.Request{Namespace: rq.namespace, Name: rq.name, Query: rq.query, DryRun: dryRun}
	if ep.Subresource != "" {
		kv, err := rq.s.config.store.Get(ctx, rq.res.key(rq.namespace, rq.name), 0)
		if err != nil {
			return err
		}
		if req.Object, err = rq.res.readStored(kv); err != nil {
			return err
		}
	}
	if h.Stream != nil {
		return rq.serveStream(ctx, h, req)
	}
	rq.objType = h.out
	if err := rq.negotiate(false, codec.ViewObject); err != nil {
		return err
	}
	var in kapi.Object
	if h.in != nil {
		rq.objType = h.in
		var err error
		if in, err = rq.decodeBody(); err != nil {
			return err
		}
		if err := rq.admitEndpoint(ctx, v, in, dryRun); err != nil {
			return err
		}
	}
	out, err := h.Answer(ctx, req, in)
	if err != nil {
		return err
	}
	if out == nil || reflect.ValueOf(out).IsNil() { // a handler's bug, answered without a panic
		return NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError,
			fmt.Sprintf("endpoint %s answered neither an object nor an error", ep.path()))
	}
	rq.objType = h.out
	if tm := out.GetTypeMeta(); tm.Kind == "" {
		tm.Kind, tm.APIVersion = h.out.kind, h.out.apiVersion()
	}
	return rq.respond(map[bool]int{true: http.StatusCreated, false: http.StatusOK}[v == verbCreate], out)
}

// serveStream answers with what a Stream writes. Shutdown and Close end
// it, as they end watches: a followed log would otherwise hold Shutdown
// until its deadline. An error before the first byte is answered as a
// Status; after it, it is logged and the response aborted, so that the
// client sees a broken stream rather than a complete one.
func (rq *request) serveStream(ctx context.Context, h *endpointVerb, req actions.Request) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(rq.s.flow.WatchesEnd(), cancel)()
	rq.w.Header().Set("X-Content-Type-Options", "nosniff")
	w := &httpbody.Streamed{W: rq.w, ContentType: h.ContentType}
	err := h.Stream(ctx, req, w)
	switch {
	case err != nil && !w.Started:
		return err
	case err != nil && ctx.Err() == nil: // not the client gone nor the server closing
		rq.s.config.logger.Error("kapi: a stream failed after its first byte; the response is aborted",
			"endpoint", rq.endpoint.path(), "path", rq.r.URL.Path, "err", err)
		panic(http.ErrAbortHandler) // net/http breaks the connection: no last chunk
	}
	_, _ = w.Write(nil) // the header, if nothing was written
	return nil
}

// path names e in errors: group/version resource[/subresource].
func (e *endpoint) path() string {
	return e.Group + "/" + e.Version + " " + strings.TrimSuffix(e.Resource+"/"+e.Subresource, "/")
}

// holdStreams has the guard hold GETs of the Stream endpoints
// long-running, whatever their names (kube-apiserver holds log, exec,
// attach, portforward and proxy, which the guard holds anyway): a stream of
// the program's own must not be cut at the request timeout either.
func (s *Server) holdStreams() {
	for _, e := range s.endpoints {
		if v := e.verbs[verbGet]; v != nil && v.Stream != nil {
			s.flow.HoldStreams(auth.Attributes{APIGroup: e.Group, APIVersion: e.Version, Resource: e.Resource, Subresource: e.Subresource})
		}
	}
}

// clashesWithAnswered says why r cannot be registered beside the answered
// kinds among eps, which take a resource's names and path.
func clashesWithAnswered(eps []*endpoint, r *resource) error {
	var answered []*resource
	for _, ep := range eps {
		if ep.Subresource != "" {
			continue
		}
		if ep.res.Group == r.Group && (ep.res.Kind == r.Kind || ep.res.Plural == r.Plural) {
			return fmt.Errorf("apiserver: register %s: clashes with the answered kind %s (resource %q)", r.gvk(), ep.res.gvk(), ep.res.Plural)
		}
		answered = append(answered, ep.res)
	}
	return clashes(answered, r)
}

// admitEndpoint admits the body of a write to an endpoint as
// kube-apiserver's create handler does for a review or a subresource
// (pods/eviction): mutating, then validating hooks, with the body's kind;
// an answered kind's object is put in its namespace, which must exist.
func (rq *request) admitEndpoint(ctx context.Context, v verb, in kapi.Object, dryRun bool) error {
	op := OperationCreate
	if v == verbUpdate {
		op = OperationUpdate
	}
	if rq.endpoint.Subresource == "" {
		if err := rq.setNamespace(in.GetObjectMeta()); err != nil {
			return err
		}
		if err := rq.s.admitNamespace(ctx, rq, in.GetObjectMeta().Name); err != nil {
			return err
		}
	}
	for _, hooks := range [][]AdmissionFunc{rq.s.config.mutating, rq.s.config.validating} {
		if len(hooks) > 0 {
			req := rq.admissionRequest(ctx, op, in, nil, dryRun)
			req.Kind = rq.objType.kind
			if rq.endpoint.Subresource != "" {
				req.Name = rq.name
			}
			if err := rq.admit(ctx, hooks, req); err != nil {
				return err
			}
		}
	}
	return nil
}

// endpointsOf lists the endpoints of gv, by resource and subresource.
func (reg *registry) endpointsOf(gv groupVersion) []*endpoint {
	var eps []*endpoint
	for k, ep := range reg.endpoints {
		if k.gv == gv {
			eps = append(eps, ep)
		}
	}
	slices.SortFunc(eps, func(a, b *endpoint) int {
		return strings.Compare(a.Resource+"/"+a.Subresource, b.Resource+"/"+b.Subresource)
	})
	return eps
}
