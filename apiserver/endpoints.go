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
	if e.Subresource == "" {
		if err := clashes(s.resources, ep.res); err != nil {
			return err
		}
	} else if i := slices.IndexFunc(s.resources, func(r *resource) bool { return r.Group == e.Group && r.Version == e.Version && r.Plural == e.Resource }); i < 0 || s.resources[i].isSubresource(e.Subresource) {
		return fmt.Errorf("apiserver: endpoint %s/%s: no such resource in %s/%s, or it has that subresource", e.Resource, e.Subresource, e.Group, e.Version)
	} else {
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
	dryRun, err := rq.dryRun(nil)
	if err != nil {
		return err
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
		w := &httpbody.Streamed{W: rq.w, ContentType: h.ContentType}
		if err := h.Stream(ctx, req, w); err != nil && !w.Started {
			return err
		}
		_, _ = w.Write(nil) // the header, if nothing was written; an error after the first byte ends the stream
		return nil
	}
	rq.objType = h.out
	if err := rq.negotiate(false, codec.ViewObject); err != nil {
		return err
	}
	var in kapi.Object
	if h.in != nil {
		rq.objType = h.in
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
	rq.objType = h.out
	if tm := out.GetTypeMeta(); tm.Kind == "" {
		tm.Kind, tm.APIVersion = h.out.kind, h.out.apiVersion()
	}
	return rq.respond(map[bool]int{true: http.StatusCreated, false: http.StatusOK}[v == verbCreate], out)
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
