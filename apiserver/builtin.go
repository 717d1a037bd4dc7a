package apiserver

import (
	"context"
	"slices"

	"github.com/kapi-dev/kapi"
)

// kindHooks are what a built-in kind does differently from a registered
// resource, each nil when it does nothing.
type kindHooks struct {
	// create changes an object about to be created, after defaulting.
	create func(obj kapi.Object)
	// update puts back into want what updates of the resource (not of a
	// subresource) may not change.
	update func(cur, want kapi.Object)
	// subresources are written subresources besides status and scale
	// (PUT only): each takes what it writes from want into next, a copy of
	// the stored object.
	subresources map[string]func(next, want kapi.Object)
	// delete is told of a DELETE of obj, which it may change (a namespace
	// becomes Terminating) or refuse.
	delete func(obj kapi.Object) error
	// held says that obj may not go yet though its metadata.finalizers are
	// empty (a namespace whose content is still being deleted).
	held func(obj kapi.Object) bool
	// noDeleteCollection refuses DELETE of the collection (405), as
	// kube-apiserver does for namespaces.
	noDeleteCollection bool
}

// held says whether a DELETE only marks obj for deletion, and whether an
// update of an object marked so keeps it: while it has finalizers, or its
// kind holds it.
func (r *resource) held(obj kapi.Object) bool {
	return len(obj.GetObjectMeta().Finalizers) > 0 || r.hooks.held != nil && r.hooks.held(obj)
}

// subresourceNames lists the kind's own subresources, in order.
func (k *kindHooks) subresourceNames() []string {
	names := make([]string, 0, len(k.subresources))
	for name := range k.subresources {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// isSubresource says whether the resource has the named subresource.
func (r *resource) isSubresource(name string) bool {
	return name == "status" && r.statusField != nil || name == "scale" && r.scale != nil || r.hooks.subresources[name] != nil
}

// verbs are the verbs discovery lists for the resource.
func (r *resource) verbs() []string {
	if r.hooks.noDeleteCollection {
		return slices.DeleteFunc(slices.Clone(resourceVerbs), func(v string) bool { return v == "deletecollection" })
	}
	return resourceVerbs
}

// runBackground runs a controller until the server closes; Close waits
// for it to return.
func (s *Server) runBackground(run func(ctx context.Context)) {
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		run(s.ctx)
	}()
}
