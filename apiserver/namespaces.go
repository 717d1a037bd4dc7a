package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/internal/tables"
	"github.com/kapi-dev/kapi/lifecycle"
	"github.com/kapi-dev/kapi/storage"
)

// systemNamespaces are created when serving starts, as kube-apiserver
// does; immortal ones (its NamespaceLifecycle admission's) cannot be
// deleted.
var systemNamespaces = []string{builtin.NamespaceDefault, builtin.NamespaceSystem, builtin.NamespacePublic, builtin.NamespaceNodeLease}

func immortal(name string) bool {
	return name == builtin.NamespaceDefault || name == builtin.NamespaceSystem || name == builtin.NamespacePublic
}

// namespaceController is who the namespace controller's writes are made by.
var namespaceController = User{Name: "system:serviceaccount:kube-system:namespace-controller",
	Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}

// registerNamespaces registers builtin.Namespace with what makes it one.
func (s *Server) registerNamespaces() error {
	err := Register(s, Resource[builtin.Namespace]{
		Version: "v1", Kind: "Namespace", Plural: "namespaces", ShortNames: []string{"ns"}, Status: true,
		ValidateName:     func(name string) []string { return names.IsDNS1123Label(name) },
		Validate:         validateNamespace,
		SelectableFields: []string{"status.phase"},
		Columns: []Column[builtin.Namespace]{
			{Name: "Status", Type: "string", Description: "The status of the namespace", Value: func(ns *builtin.Namespace) any { return ns.Status.Phase }},
			{Name: "Age", Type: "date", Description: tables.CreationTimestampDescription, Value: func(ns *builtin.Namespace) any { return ns.CreationTimestamp }},
		},
		Default: func(ns *builtin.Namespace) {
			if ns.Status.Phase == "" {
				ns.Status.Phase = builtin.NamespaceActive
			}
		},
	})
	if err != nil {
		return err
	}
	res := s.resources[len(s.resources)-1]
	res.hooks = kindHooks{
		create: func(obj kapi.Object) {
			ns := obj.(*builtin.Namespace)
			if !slices.Contains(ns.Spec.Finalizers, builtin.FinalizerKubernetes) {
				ns.Spec.Finalizers = append(ns.Spec.Finalizers, builtin.FinalizerKubernetes)
			}
			nameLabel(ns)
		},
		update: func(cur, want kapi.Object) {
			want.(*builtin.Namespace).Spec.Finalizers = cur.(*builtin.Namespace).Spec.Finalizers
			nameLabel(want.(*builtin.Namespace))
		},
		subresources: map[string]func(next, want kapi.Object){
			"finalize": func(next, want kapi.Object) {
				next.(*builtin.Namespace).Spec.Finalizers = want.(*builtin.Namespace).Spec.Finalizers
			},
		},
		delete: func(obj kapi.Object) error {
			ns := obj.(*builtin.Namespace)
			if immortal(ns.Name) {
				e := NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden, fmt.Sprintf("namespaces %q is forbidden: this namespace may not be deleted", ns.Name))
				e.Status.Details = &kapi.StatusDetails{Name: ns.Name, Kind: "namespaces"}
				return e
			}
			ns.Status.Phase = builtin.NamespaceTerminating
			s.rememberDeleted(ns.Name)
			return nil
		},
		noDeleteCollection: true,
		// A namespace is only marked by its first DELETE, and goes once
		// its spec.finalizers are gone too.
		held: func(obj kapi.Object) bool {
			ns := obj.(*builtin.Namespace)
			return ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) > 0
		},
	}
	s.namespaces = res
	return nil
}

// nameLabel sets the label kube-apiserver gives every namespace.
func nameLabel(ns *builtin.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["kubernetes.io/metadata.name"] = ns.Name
}

// validateNamespace checks spec.finalizers as kube-apiserver does: each is
// kubernetes or a qualified name with a domain.
func validateNamespace(_ context.Context, ns, _ *builtin.Namespace) FieldErrors {
	var errs FieldErrors
	for i, f := range ns.Spec.Finalizers {
		path := fmt.Sprintf("spec.finalizers[%d]", i)
		if f == builtin.FinalizerKubernetes {
			continue
		}
		domain, name, ok := strings.Cut(f, "/")
		if !ok {
			errs = append(errs, Invalid(path, f, "name is neither a standard finalizer name nor is it fully qualified"))
			continue
		}
		if msgs := names.IsDNS1123Subdomain(domain); len(msgs) > 0 || name == "" || len(name) > 63 {
			errs = append(errs, Invalid(path, f, "a qualified name must consist of a DNS subdomain, '/', and a name of at most 63 characters"))
		}
	}
	if ns.Status.Phase != builtin.NamespaceActive && ns.Status.Phase != builtin.NamespaceTerminating {
		errs = append(errs, NotSupported("status.phase", ns.Status.Phase, builtin.NamespaceActive, builtin.NamespaceTerminating))
	}
	return errs
}

// admitNamespace is kube's NamespaceLifecycle admission for a create of a
// namespaced object named name: its namespace must exist and not be
// terminating.
func (s *Server) admitNamespace(ctx context.Context, rq *request, name string) error {
	if s.namespaces == nil || !rq.res.Namespaced {
		return nil
	}
	ns, err := s.namespace(ctx, rq.namespace)
	if errors.Is(err, storage.ErrNotFound) {
		e := NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", rq.namespace))
		e.Status.Details = &kapi.StatusDetails{Name: rq.namespace, Kind: "namespaces"}
		return e
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase != builtin.NamespaceTerminating {
		return nil
	}
	e := NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden, fmt.Sprintf("%s %q is forbidden: unable to create new content in namespace %s because it is being terminated", rq.res.qualifiedResource(), name, rq.namespace))
	e.Status.Details = &kapi.StatusDetails{Name: name, Group: rq.res.Group, Kind: rq.res.Plural, Causes: []kapi.StatusCause{{
		Type: builtin.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", rq.namespace), Field: "metadata.namespace",
	}}}
	return e
}

// namespace reads a namespace as kube's admission does: from the cache,
// unless the cache does not have it (yet) or this server deleted it
// recently and the cache may not show that yet; then from the store.
func (s *Server) namespace(ctx context.Context, name string) (*builtin.Namespace, error) {
	if it, _ := s.namespaces.cache.Get(s.namespaces.key("", name)); it != nil {
		obj, _ := it.Object() // if not, read below
		ns, ok := obj.(*builtin.Namespace)
		if ok && (ns.Status.Phase == builtin.NamespaceTerminating || !s.deletedLately(name)) {
			return ns, nil
		}
	}
	kv, err := s.config.store.Get(ctx, s.namespaces.key("", name), 0)
	if err != nil {
		return nil, err
	}
	obj, err := s.namespaces.decodeStored(kv)
	if err != nil {
		return nil, err
	}
	return obj.(*builtin.Namespace), nil
}

// startNamespaces creates the system namespaces and starts the namespace
// deletion controller, which runs until the server closes. A system
// namespace the store refuses now (an etcd not up yet, a leader election)
// is created again until it is, as kube-apiserver's system namespaces
// controller keeps them: without default, nothing could be created there.
func (s *Server) startNamespaces() {
	o := &objects{s: s, user: namespaceController, manager: "kube-controller-manager"}
	if missing := s.createNamespaces(s.ctx, o, systemNamespaces); len(missing) > 0 {
		s.runBackground(func(ctx context.Context) {
			for delay := time.Second; len(missing) > 0; delay = min(2*delay, time.Minute) {
				t := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				missing = s.createNamespaces(ctx, o, missing)
			}
		})
	}
	deleter, err := lifecycle.NewNamespaceDeleter(o, s.config.logger)
	if err != nil {
		s.config.logger.Error("kapi: namespace deletion", "err", err)
		return
	}
	s.runBackground(deleter.Run)
}

// createNamespaces creates the named namespaces, and returns those it
// could not.
func (s *Server) createNamespaces(ctx context.Context, o *objects, names []string) (missing []string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, name := range names {
		rq, ctx, err := o.request(ctx, lifecycle.Resource{Version: "v1", Plural: "namespaces"}, "", "", "")
		if err == nil {
			err = rq.createObject(ctx, &builtin.Namespace{ObjectMeta: kapi.ObjectMeta{Name: name}}, recordAnUpdate)
		}
		if err != nil && !errors.Is(err, storage.ErrExists) {
			s.config.logger.Error("kapi: creating a system namespace", "namespace", name, "err", err)
			missing = append(missing, name)
		}
	}
	return missing
}

// forceLiveLookup is how long a namespace this server deleted is read from
// the store rather than the cache, as kube's forceLiveLookupTTL.
const forceLiveLookup = 30 * time.Second

// rememberDeleted notes that this server marked a namespace for deletion,
// and forgets those it marked long enough ago.
func (s *Server) rememberDeleted(name string) {
	now := time.Now()
	s.deletedNamespaces.Range(func(k, at any) bool {
		if now.Sub(at.(time.Time)) >= forceLiveLookup {
			s.deletedNamespaces.CompareAndDelete(k, at)
		}
		return true
	})
	s.deletedNamespaces.Store(name, now)
}

// deletedLately says whether this server has marked the namespace for
// deletion lately: its cache may not show it yet.
func (s *Server) deletedLately(name string) bool {
	at, ok := s.deletedNamespaces.Load(name)
	return ok && time.Since(at.(time.Time)) < forceLiveLookup
}
