package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/internal/storedmeta"
	"github.com/kapi-dev/kapi/lifecycle"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// objects is the server as the controllers that run inside it see it (the
// garbage collector, the namespace deleter, event expiry): its resources,
// the objects of its cache, and writes that take the path of a request,
// with its admission and finalizers, as a controller's requests would.
type objects struct {
	s       *Server
	user    User   // who the controller's writes are made as, for admission
	manager string // their User-Agent (before any "/": their field manager)
	// fieldManager, when set, is their field manager in its place.
	fieldManager string
}

var (
	_ gc.Objects        = (*objects)(nil)
	_ lifecycle.Objects = (*objects)(nil)
)

// garbageCollector is who the collector's writes are made as, for
// admission and managedFields, as Kubernetes' collector's.
var garbageCollector = User{Name: "system:serviceaccount:kube-system:generic-garbage-collector", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}

// Resources lists each stored resource once: several registrations of one
// kind (its versions, and those of other groups stored with it) share its
// objects.
func (o *objects) Resources() []gc.Resource {
	var out []gc.Resource
	var stored []*resource
	for _, r := range o.s.registered() {
		if !slices.Contains(stored, r.storageVersion()) {
			stored = append(stored, r.storageVersion())
			out = append(out, gc.Resource{Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural, Namespaced: r.Namespaced})
		}
	}
	return out
}

func (o *objects) resource(res gc.Resource) (*resource, error) {
	for _, r := range o.s.registered() {
		if r.Group == res.Group && r.Version == res.Version && r.Plural == res.Plural {
			return r, nil
		}
	}
	return nil, errors.New("apiserver: no resource " + res.Plural + "." + res.Group + "/" + res.Version)
}

// request is a request of the controller's own, to the named object, which
// answers no one.
func (o *objects) request(ctx context.Context, res gc.Resource, namespace, name, subresource string) (*request, context.Context, error) {
	r, err := o.resource(res)
	if err != nil {
		return nil, ctx, err
	}
	ctx = WithUser(ctx, o.user)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPatch, "/", http.NoBody)
	if err != nil {
		return nil, ctx, err
	}
	hr.Header.Set("User-Agent", o.manager)
	return &request{
		s: o.s, res: r, objType: &r.objType, namespace: namespace, name: name, subresource: subresource,
		query: url.Values{"fieldManager": {o.fieldManager}}, w: discardResponse{}, r: hr,
		out: codec.Target{Format: codec.JSON(), View: codec.ViewObject},
	}, ctx, nil
}

func (o *objects) Watch(ctx context.Context, res gc.Resource, changed func(gc.Change)) error {
	r, err := o.resource(res)
	if err != nil {
		return err
	}
	// The hub's state is the store's once it has synced; a watch started
	// before would miss it.
	if err := o.s.hub.WaitFor(ctx, 0); err != nil {
		return err
	}
	w, err := r.cache.Watch(watch.WatchOptions{InitialEvents: true, InitialEventsEnd: true})
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
			changed(gc.Change{Synced: true, Revision: ev.Revision})
		case ev.Item != nil:
			// Read without decoding the object if the collector has nothing
			// to act on in it. One that no longer decodes (a user's decoding
			// that is not deterministic) is left out, as the cache leaves
			// out one that never did.
			if meta, err := storedmeta.Meta(ev.Item, r.storageVersion().objType.plainMetadata, cachedObject); err == nil {
				changed(gc.Change{Meta: meta, Deleted: ev.Type == watch.Deleted, Revision: ev.Revision})
			}
		}
	}
}

func (o *objects) Sync(ctx context.Context) error {
	rev, err := o.s.config.store.Revision(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return o.s.hub.WaitFor(ctx, rev)
}

func (o *objects) LastChange(res gc.Resource) int64 {
	if r, err := o.resource(res); err == nil {
		return r.cache.LastChange()
	}
	return 0
}

func (o *objects) Get(res gc.Resource, namespace, name string) (*kapi.ObjectMeta, error) {
	r, err := o.resource(res)
	if err != nil {
		return nil, err
	}
	key := r.key(namespace, name)
	it, _ := r.cache.Get(key)
	if it == nil {
		if err := r.missing(key); !errors.Is(err, storage.ErrNotFound) {
			return nil, err // an owner that cannot be read may still be there
		}
		return nil, nil
	}
	return storedmeta.Meta(it, r.storageVersion().objType.plainMetadata, cachedObject)
}

func (o *objects) Read(ctx context.Context, res gc.Resource, namespace, name string) (kapi.Object, error) {
	r, err := o.resource(res)
	if err != nil {
		return nil, err
	}
	kv, err := o.s.config.store.Get(ctx, r.key(namespace, name), 0)
	if err != nil {
		return nil, err
	}
	obj, err := r.decodeStored(kv)
	if err != nil {
		return nil, err
	}
	return obj.(kapi.Object), nil
}

func (o *objects) List(ctx context.Context, res gc.Resource, namespace string) ([]kapi.Object, error) {
	rq, ctx, err := o.request(ctx, res, namespace, "", "")
	if err != nil {
		return nil, err
	}
	if err := rq.consistent(ctx, ""); err != nil {
		return nil, err
	}
	items, _, _ := rq.res.cache.List(rq.res.keyPrefix(namespace), "", 0, nil)
	out := make([]kapi.Object, len(items))
	for i, it := range items {
		if out[i], err = cachedObject(it); err != nil {
			return nil, err
		}
	}
	// As a LIST would answer: a namespace whose content cannot all be read
	// is not empty, though its readable content is gone.
	if bad := rq.res.cache.Unreadable(rq.res.keyPrefix(namespace)); len(bad) > 0 {
		return out, unreadableList(rq.res, bad)
	}
	return out, nil
}

func (o *objects) Update(ctx context.Context, res gc.Resource, obj kapi.Object, subresource string) (kapi.Object, error) {
	meta := obj.GetObjectMeta()
	rq, ctx, err := o.request(ctx, res, meta.Namespace, meta.Name, subresource)
	if err != nil {
		return nil, err
	}
	// Each attempt copies obj whole: what is stored shares with the watch
	// cache, and the caller keeps obj.
	out, _, err := rq.write(ctx, func(kapi.Object, []byte) (kapi.Object, error) { return deepCopyObject(obj), nil }, recordAnUpdate)
	return out, err
}

func (o *objects) Delete(ctx context.Context, res gc.Resource, namespace, name string, opts gc.DeleteOptions) error {
	rq, ctx, err := o.request(ctx, res, namespace, name, "")
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

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

func (o *objects) UpdateMetadata(ctx context.Context, res gc.Resource, namespace, name, uid string, update func(*kapi.ObjectMeta) bool) error {
	rq, ctx, err := o.request(ctx, res, namespace, name, "")
	if err != nil {
		return err
	}
	_, _, err = rq.write(ctx, func(cur kapi.Object, _ []byte) (kapi.Object, error) {
		if cur.GetObjectMeta().UID != uid {
			return nil, errUnchanged // another object of the same name
		}
		// cur shares its maps and slices with the watch cache's object
		// (current), and what write does to the object desired returns
		// (defaulters, declared defaults, a kind's update hook) changes
		// them in place: the write gets a copy of its own.
		want := deepCopyObject(cur)
		if !update(want.GetObjectMeta()) {
			return nil, errUnchanged
		}
		return want, nil
	}, recordAnUpdate)
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// discardResponse is the response of a request nobody reads.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}
