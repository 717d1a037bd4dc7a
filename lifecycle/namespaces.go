package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/storage"
)

// NamespaceDeleter empties and removes the namespaces marked for deletion:
// see the package documentation.
type NamespaceDeleter struct {
	objects    Objects
	namespaces Resource
	logger     *slog.Logger
	queue      *queue

	mu          sync.Mutex
	terminating map[string]bool // namespaces marked for deletion, by name
	failures    map[string]int  // consecutive failures, by namespace
}

// How soon a namespace is looked at again: after a failure (doubling up to
// a limit), and while content remains (its deletion is what usually brings
// it back sooner).
const (
	retryFirst       = 50 * time.Millisecond
	retryLimit       = 30 * time.Second
	remainingRecheck = 5 * time.Second
)

// errContentRemaining says a namespace still holds objects, waiting for
// their finalizers.
var errContentRemaining = errors.New("some content remains in the namespace")

// NewNamespaceDeleter makes the controller; the resource of namespaces must
// be among those objects serves. Logs go to logger (slog.Default() if nil).
func NewNamespaceDeleter(objects Objects, logger *slog.Logger) (*NamespaceDeleter, error) {
	if logger == nil {
		logger = slog.Default()
	}
	d := &NamespaceDeleter{objects: objects, logger: logger, queue: newQueue(),
		terminating: map[string]bool{}, failures: map[string]int{}}
	i := slices.IndexFunc(objects.Resources(), func(r Resource) bool { return r.Group == "" && r.Plural == "namespaces" })
	if i < 0 {
		return nil, errors.New("lifecycle: namespaces are not served")
	}
	d.namespaces = objects.Resources()[i]
	return d, nil
}

// Run deletes namespaces until ctx ends; it returns when everything it
// started has stopped.
func (d *NamespaceDeleter) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer d.queue.stop()
	watch := func(r Resource, changed func(Change)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := d.objects.Watch(ctx, r, changed); err != nil && ctx.Err() == nil {
					d.logger.Warn("kapi: namespace deletion: watch", "resource", r.Plural, "err", err)
					sleep(ctx, time.Second)
				}
			}
		}()
	}
	watch(d.namespaces, d.namespaceChanged)
	for _, r := range d.objects.Resources() {
		if r.Namespaced {
			watch(r, d.contentChanged)
		}
	}
	for {
		name, ok := d.queue.next(ctx)
		if !ok {
			return
		}
		err := d.sync(ctx, name)
		d.mu.Lock()
		switch {
		case err == nil:
			delete(d.failures, name)
		case errors.Is(err, errContentRemaining):
			delete(d.failures, name)
			d.queue.addAfter(ctx, name, remainingRecheck)
		default:
			n := d.failures[name]
			d.failures[name] = n + 1
			d.queue.addAfter(ctx, name, min(retryFirst<<min(n, 20), retryLimit))
			if ctx.Err() == nil {
				d.logger.Warn("kapi: namespace deletion", "namespace", name, "err", err)
			}
		}
		d.mu.Unlock()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (d *NamespaceDeleter) namespaceChanged(c Change) {
	meta, deleted := c.Meta, c.Deleted
	if c.Synced {
		return
	}
	d.mu.Lock()
	if deleted || meta.DeletionTimestamp == nil {
		delete(d.terminating, meta.Name)
	} else {
		d.terminating[meta.Name] = true
	}
	d.mu.Unlock()
	if !deleted && meta.DeletionTimestamp != nil {
		d.queue.add(meta.Name)
	}
}

// contentChanged looks at a namespace again when an object in it goes or
// is marked for deletion: that may be what it waits for.
func (d *NamespaceDeleter) contentChanged(c Change) {
	meta := c.Meta
	if c.Synced || !c.Deleted && meta.DeletionTimestamp == nil {
		return
	}
	d.mu.Lock()
	terminating := d.terminating[meta.Namespace]
	d.mu.Unlock()
	if terminating {
		d.queue.add(meta.Namespace)
	}
}

// sync does one round of the deletion of a namespace, as kube's
// namespacedResourcesDeleter.Delete.
func (d *NamespaceDeleter) sync(ctx context.Context, name string) error {
	ns, err := d.get(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	if ns.Status.Phase != builtin.NamespaceTerminating {
		ns, err = d.retryOnConflict(ctx, ns, func(ns *builtin.Namespace) (*builtin.Namespace, error) {
			if ns.Status.Phase == builtin.NamespaceTerminating {
				return ns, nil
			}
			ns.Status.Phase = builtin.NamespaceTerminating
			return d.update(ctx, ns, "status")
		})
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	if !slices.Contains(ns.Spec.Finalizers, builtin.FinalizerKubernetes) {
		return nil // not ours to finalize (any more)
	}
	if err := d.deleteContent(ctx, ns); err != nil {
		return err
	}
	_, err = d.retryOnConflict(ctx, ns, func(ns *builtin.Namespace) (*builtin.Namespace, error) {
		ns.Spec.Finalizers = slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers), func(f string) bool { return f == builtin.FinalizerKubernetes })
		return d.update(ctx, ns, "finalize")
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil // removed: by us, or by another replica
	}
	return err
}

func (d *NamespaceDeleter) get(ctx context.Context, name string) (*builtin.Namespace, error) {
	obj, err := d.objects.Read(ctx, d.namespaces, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*builtin.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %q is a %T", name, obj)
	}
	return ns, nil
}

func (d *NamespaceDeleter) update(ctx context.Context, ns *builtin.Namespace, subresource string) (*builtin.Namespace, error) {
	obj, err := d.objects.Update(ctx, d.namespaces, ns, subresource)
	if err != nil {
		return nil, err
	}
	out, ok := obj.(*builtin.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %q is a %T", ns.Name, obj)
	}
	return out, nil
}

// retryOnConflict applies change to ns until it is not refused for being
// stale, reading the namespace again each time; it gives up if the
// namespace was replaced by another of the same name.
func (d *NamespaceDeleter) retryOnConflict(ctx context.Context, ns *builtin.Namespace, change func(*builtin.Namespace) (*builtin.Namespace, error)) (*builtin.Namespace, error) {
	for {
		out, err := change(ns)
		if !errors.Is(err, storage.ErrConflict) {
			return out, err
		}
		latest, err := d.get(ctx, ns.Name)
		if err != nil {
			return nil, err
		}
		if latest.UID != ns.UID {
			return nil, fmt.Errorf("namespace %q was replaced while it was being deleted", ns.Name)
		}
		ns = latest
	}
}

// deleteContent deletes what the namespace holds, records what remains in
// its conditions, and returns errContentRemaining while anything does.
func (d *NamespaceDeleter) deleteContent(ctx context.Context, ns *builtin.Namespace) error {
	remaining := map[string]int{}  // "widgets.example.com" → count
	finalizers := map[string]int{} // finalizer → count
	var failures []error
	for _, r := range d.objects.Resources() {
		if !r.Namespaced {
			continue
		}
		left, err := d.deleteResource(ctx, r, ns.Name)
		if err != nil {
			failures = append(failures, err)
		}
		if len(left) > 0 {
			remaining[r.Plural+"."+r.Group] = len(left)
		}
		for _, obj := range left {
			for _, f := range obj.GetObjectMeta().Finalizers {
				finalizers[f]++
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	conditions := contentConditions(remaining, finalizers, failures)
	if changed := setConditions(&ns.Status, conditions); changed {
		if _, err := d.update(ctx, ns, "status"); err != nil && ctx.Err() == nil {
			// As kube's controller: the next round writes them.
			d.logger.Info("kapi: namespace deletion: conditions not written", "namespace", ns.Name, "err", err)
		}
	}
	switch {
	case len(failures) > 0:
		return errors.Join(failures...)
	case len(remaining) > 0:
		return errContentRemaining
	}
	return nil
}

// deleteResource deletes the objects of one resource in a namespace and
// returns those that remain, held by their finalizers.
func (d *NamespaceDeleter) deleteResource(ctx context.Context, r Resource, namespace string) ([]kapi.Object, error) {
	objs, err := d.objects.List(ctx, r, namespace)
	if err != nil && objs == nil {
		return nil, err
	}
	for _, obj := range objs {
		meta := obj.GetObjectMeta()
		if meta.DeletionTimestamp != nil {
			continue // marked already: its finalizers decide
		}
		if err := d.objects.Delete(ctx, r, namespace, meta.Name, DeleteOptions{UID: meta.UID, PropagationPolicy: "Background"}); err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			return nil, err
		}
	}
	return d.objects.List(ctx, r, namespace)
}

// The conditions kube's namespace controller keeps, in its order, and what
// each says when all is well.
var namespaceConditions = []struct{ typ, reason, message string }{
	{builtin.NamespaceDeletionDiscoveryFailure, "ResourcesDiscovered", "All resources successfully discovered"},
	{builtin.NamespaceDeletionGVParsingFailure, "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{builtin.NamespaceDeletionContentFailure, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{builtin.NamespaceContentRemaining, "ContentRemoved", "All content successfully removed"},
	{builtin.NamespaceFinalizersRemaining, "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// contentConditions are the conditions that are true after a round of
// deletion, with kube's reasons and messages.
func contentConditions(remaining, finalizers map[string]int, failures []error) []builtin.NamespaceCondition {
	var out []builtin.NamespaceCondition
	if len(failures) > 0 {
		msgs := make([]string, len(failures))
		for i, err := range failures {
			msgs[i] = err.Error()
		}
		sort.Strings(msgs)
		out = append(out, builtin.NamespaceCondition{Type: builtin.NamespaceDeletionContentFailure, Status: kapi.ConditionTrue,
			Reason: "ContentDeletionFailed", Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(failures), strings.Join(msgs, ", "))})
	}
	if len(remaining) > 0 {
		out = append(out, builtin.NamespaceCondition{Type: builtin.NamespaceContentRemaining, Status: kapi.ConditionTrue,
			Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + counts(remaining, "%s has %d resource instances")})
	}
	if len(finalizers) > 0 {
		out = append(out, builtin.NamespaceCondition{Type: builtin.NamespaceFinalizersRemaining, Status: kapi.ConditionTrue,
			Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + counts(finalizers, "%s in %d resource instances")})
	}
	return out
}

// counts lists what each count counts, formatted, in order.
func counts(m map[string]int, format string) string {
	parts := make([]string, 0, len(m))
	for what, n := range m {
		parts = append(parts, fmt.Sprintf(format, what, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// setConditions brings every condition of the controller up to date in
// status: those in conditions true, the others false with their all-is-well
// reason. It reports whether anything changed.
func setConditions(status *builtin.NamespaceStatus, conditions []builtin.NamespaceCondition) bool {
	changed := false
	now := kapi.Now()
	status.Conditions = slices.Clone(status.Conditions)
	for _, kind := range namespaceConditions {
		want := builtin.NamespaceCondition{Type: kind.typ, Status: kapi.ConditionFalse, Reason: kind.reason, Message: kind.message}
		if i := slices.IndexFunc(conditions, func(c builtin.NamespaceCondition) bool { return c.Type == kind.typ }); i >= 0 {
			want = conditions[i]
		}
		want.LastTransitionTime = now
		i := slices.IndexFunc(status.Conditions, func(c builtin.NamespaceCondition) bool { return c.Type == kind.typ })
		if i < 0 {
			status.Conditions = append(status.Conditions, want)
			changed = true
			continue
		}
		old := &status.Conditions[i]
		if old.Status == want.Status && old.Reason == want.Reason && old.Message == want.Message {
			continue
		}
		if old.Status == want.Status {
			want.LastTransitionTime = old.LastTransitionTime
		}
		*old = want
		changed = true
	}
	return changed
}
