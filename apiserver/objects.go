package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// objects is the server as the lifecycle controllers that run inside it
// see it (the garbage collector): its resources, the objects of its cache,
// and writes that take the path of a request, admission included.
type objects struct{ s *Server }

var _ gc.Objects = objects{}

// garbageCollector is who the collector's writes are made as, for
// admission and managedFields, as Kubernetes' collector's.
var garbageCollector = User{Name: "system:serviceaccount:kube-system:generic-garbage-collector", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}

// Resources lists each stored resource once: several registrations of one
// kind (its versions) share its objects.
func (o objects) Resources() []gc.Resource {
	var out []gc.Resource
	for _, r := range o.s.resources {
		if !slices.ContainsFunc(out, func(k gc.Resource) bool { return k.Group == r.Group && k.Kind == r.Kind }) {
			out = append(out, gc.Resource{Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural, Namespaced: r.Namespaced})
		}
	}
	return out
}

func (o objects) resource(res gc.Resource) *resource {
	for _, r := range o.s.resources {
		if r.Group == res.Group && r.Version == res.Version && r.Plural == res.Plural {
			return r
		}
	}
	return nil
}

func (o objects) Watch(ctx context.Context, res gc.Resource, changed func(gc.Change)) error {
	r := o.resource(res)
	if r == nil {
		return errors.New("no such resource")
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
		switch ev.Type {
		case watch.Bookmark:
			if ev.InitialEventsEnd {
				changed(gc.Change{Synced: true, Revision: ev.Revision})
			}
		default:
			changed(gc.Change{Meta: ev.Item.Object.(kapi.Object).GetObjectMeta(), Deleted: ev.Type == watch.Deleted, Revision: ev.Revision})
		}
	}
}

func (o objects) Sync(ctx context.Context) error {
	rev, err := o.s.config.store.Revision(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return o.s.hub.WaitFor(ctx, rev)
}

func (o objects) LastChange(res gc.Resource) int64 {
	if r := o.resource(res); r != nil {
		return r.cache.LastChange()
	}
	return 0
}

func (o objects) Get(res gc.Resource, namespace, name string) (*kapi.ObjectMeta, error) {
	r := o.resource(res)
	if r == nil {
		return nil, errors.New("no such resource")
	}
	key := r.key(namespace, name)
	it, _ := r.cache.Get(key)
	if it == nil {
		if err := r.missing(key); !errors.Is(err, storage.ErrNotFound) {
			return nil, err // an owner that cannot be read may still be there
		}
		return nil, nil
	}
	return it.Object.(kapi.Object).GetObjectMeta(), nil
}

// request is a request of the server's own, made as user, that takes the
// path of one to the named object.
func (o objects) request(ctx context.Context, res gc.Resource, namespace, name string, user User) (*request, context.Context, error) {
	r := o.resource(res)
	if r == nil {
		return nil, ctx, errors.New("no such resource")
	}
	ctx = WithUser(ctx, user)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPatch, "/", http.NoBody)
	if err != nil {
		return nil, ctx, err
	}
	hr.Header.Set("User-Agent", "kapi")
	rq := &request{s: o.s, res: r, namespace: namespace, name: name, r: hr, objType: &r.objType,
		query: url.Values{"fieldManager": {"generic-garbage-collector"}}}
	return rq, ctx, nil
}

func (o objects) Delete(ctx context.Context, res gc.Resource, namespace, name string, opts gc.DeleteOptions) error {
	rq, ctx, err := o.request(ctx, res, namespace, name, garbageCollector)
	if err != nil {
		return err
	}
	do := deleteOptions{Preconditions: &preconditions{UID: &opts.UID}, PropagationPolicy: &opts.PropagationPolicy}
	if opts.ResourceVersion != "" {
		do.Preconditions.ResourceVersion = &opts.ResourceVersion
	}
	_, _, err = rq.deleteOne(ctx, name, do, false)
	return err
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

func (o objects) UpdateMetadata(ctx context.Context, res gc.Resource, namespace, name, uid string, update func(*kapi.ObjectMeta) bool) error {
	rq, ctx, err := o.request(ctx, res, namespace, name, garbageCollector)
	if err != nil {
		return err
	}
	_, _, err = rq.write(ctx, func(cur kapi.Object) (kapi.Object, error) {
		meta := cur.GetObjectMeta()
		if meta.UID != uid {
			return nil, errUnchanged // another object of the same name
		}
		// The slices are the stored object's: update gets copies.
		meta.Finalizers = slices.Clone(meta.Finalizers)
		meta.OwnerReferences = slices.Clone(meta.OwnerReferences)
		if !update(meta) {
			return nil, errUnchanged
		}
		return cur, nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}
