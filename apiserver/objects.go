package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/lifecycle"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// objects is the server as the in-process controllers see it
// (lifecycle.Objects): reads and writes go through the path of a request,
// with its admission and finalizers, as a controller's requests would.
type objects struct {
	s *Server
	// user is who the controller's writes are made as, for admission;
	// agent its field manager.
	user  User
	agent string
}

var _ lifecycle.Objects = (*objects)(nil)

func (o *objects) Resources() []lifecycle.Resource {
	out := make([]lifecycle.Resource, len(o.s.resources))
	for i, r := range o.s.resources {
		out[i] = lifecycle.Resource{Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural, Namespaced: r.Namespaced}
	}
	return out
}

func (o *objects) resource(r lifecycle.Resource) (*resource, error) {
	for _, res := range o.s.resources {
		if res.Group == r.Group && res.Version == r.Version && res.Plural == r.Plural {
			return res, nil
		}
	}
	return nil, errors.New("apiserver: no resource " + r.Plural + "." + r.Group + "/" + r.Version)
}

// request is a request of the controller's own, which answers no one.
func (o *objects) request(ctx context.Context, r lifecycle.Resource, namespace, name, subresource string) (*request, error) {
	res, err := o.resource(r)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(WithUser(ctx, o.user), http.MethodGet, "/", http.NoBody)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("User-Agent", o.agent)
	return &request{
		s: o.s, res: res, objType: &res.objType, namespace: namespace, name: name, subresource: subresource,
		query: url.Values{}, w: discardResponse{}, r: hr, out: codec.Target{Format: codec.JSON(), View: codec.ViewObject},
	}, nil
}

func (o *objects) Read(ctx context.Context, r lifecycle.Resource, namespace, name string) (kapi.Object, error) {
	res, err := o.resource(r)
	if err != nil {
		return nil, err
	}
	kv, err := o.s.config.store.Get(ctx, res.key(namespace, name), 0)
	if err != nil {
		return nil, err
	}
	obj, err := res.decodeStored(kv)
	if err != nil {
		return nil, err
	}
	return obj.(kapi.Object), nil
}

func (o *objects) List(ctx context.Context, r lifecycle.Resource, namespace string) ([]kapi.Object, error) {
	rq, err := o.request(ctx, r, namespace, "", "")
	if err != nil {
		return nil, err
	}
	if err := rq.consistent(ctx, ""); err != nil {
		return nil, err
	}
	items, _, _ := rq.res.cache.List(rq.res.keyPrefix(namespace), "", 0, nil)
	out := make([]kapi.Object, len(items))
	for i, it := range items {
		out[i] = it.Object.(kapi.Object)
	}
	return out, nil
}

func (o *objects) Update(ctx context.Context, r lifecycle.Resource, obj kapi.Object, subresource string) (kapi.Object, error) {
	meta := obj.GetObjectMeta()
	rq, err := o.request(ctx, r, meta.Namespace, meta.Name, subresource)
	if err != nil {
		return nil, err
	}
	out, _, err := rq.write(ctx, func(kapi.Object) (kapi.Object, error) { return shallowCopy(obj), nil })
	return out, err
}

func (o *objects) Delete(ctx context.Context, r lifecycle.Resource, namespace, name string, opts lifecycle.DeleteOptions) error {
	rq, err := o.request(ctx, r, namespace, name, "")
	if err != nil {
		return err
	}
	do := deleteOptions{Preconditions: &preconditions{}}
	if opts.PropagationPolicy != "" {
		do.PropagationPolicy = &opts.PropagationPolicy
	}
	if opts.UID != "" {
		do.Preconditions.UID = &opts.UID
	}
	if opts.ResourceVersion != "" {
		do.Preconditions.ResourceVersion = &opts.ResourceVersion
	}
	_, _, err = rq.deleteOne(ctx, name, do, false)
	var se *StatusError
	if errors.As(err, &se) && se.Status.Code == http.StatusConflict { // a precondition that no longer holds
		return fmt.Errorf("%w: %s", storage.ErrConflict, se.Status.Message)
	}
	return err
}

func (o *objects) Watch(ctx context.Context, r lifecycle.Resource, changed func(lifecycle.Change)) error {
	res, err := o.resource(r)
	if err != nil {
		return err
	}
	if err := o.s.hub.WaitFor(ctx, 0); err != nil { // the initial events are those of a synced cache
		return err
	}
	w, err := res.cache.Watch(watch.WatchOptions{InitialEvents: true, InitialEventsEnd: true})
	if err != nil {
		return err
	}
	for {
		ev, err := w.Next(ctx)
		if err != nil {
			return err
		}
		switch {
		case ev.Type == watch.Bookmark && ev.InitialEventsEnd:
			changed(lifecycle.Change{Synced: true, Revision: ev.Revision})
		case ev.Item != nil:
			changed(lifecycle.Change{Meta: ev.Item.Object.(kapi.Object).GetObjectMeta(), Deleted: ev.Type == watch.Deleted, Revision: ev.Revision})
		}
	}
}

// discardResponse is the response of a request nobody reads.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}
