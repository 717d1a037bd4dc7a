package gc

import (
	"context"
	"errors"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
)

// work is one of the collector's workers: it decides on the objects the
// queue hands it, one at a time, until ctx ends.
func (c *Collector) work(ctx context.Context) {
	for {
		id, ok := c.queue.get(ctx)
		if !ok {
			return
		}
		err := c.decide(ctx, id)
		if err != nil && ctx.Err() == nil {
			c.config.logger.Info("kapi gc: will try again", "object", id.String(), "err", err)
		}
		c.queue.done(id, err)
	}
}

// decide does what the server's latest state of an object calls for.
func (c *Collector) decide(ctx context.Context, id identity) error {
	if err := c.caughtUp(ctx); err != nil {
		return err
	}
	meta, err := c.objects.Get(id.res, id.namespace, id.name)
	if err != nil || meta == nil || meta.UID != id.uid {
		return err // gone (or replaced): its deletion's event queues what it owned
	}
	if meta.DeletionTimestamp != nil {
		switch {
		case slices.Contains(meta.Finalizers, FinalizerOrphan):
			return c.orphanDependents(ctx, id)
		case slices.Contains(meta.Finalizers, FinalizerForeground):
			return c.finishForeground(ctx, id)
		}
		return nil // on its way: its dependents are decided on once it is gone
	}
	if len(meta.OwnerReferences) == 0 {
		return nil
	}
	var solid, dangling, waiting []string
	for _, ref := range meta.OwnerReferences {
		owner, ok, err := c.owner(id, ref, true)
		switch {
		case err != nil:
			return err
		case !ok:
			return nil
		case owner == nil || owner.UID != ref.UID:
			dangling = append(dangling, ref.UID)
		case owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, FinalizerForeground):
			waiting = append(waiting, ref.UID)
		default:
			solid = append(solid, ref.UID)
		}
	}
	switch {
	case len(solid) > 0:
		// A live owner keeps it; the references to owners that are gone,
		// or that wait for their dependents to go, are let go of.
		drop := append(dangling, waiting...)
		if len(drop) == 0 {
			return nil
		}
		return c.objects.UpdateMetadata(ctx, id.res, id.namespace, id.name, id.uid, func(m *kapi.ObjectMeta) bool {
			n := len(m.OwnerReferences)
			m.OwnerReferences = slices.DeleteFunc(m.OwnerReferences, func(r kapi.OwnerReference) bool { return slices.Contains(drop, r.UID) })
			return len(m.OwnerReferences) != n
		})
	case len(waiting) > 0 && c.hasDependents(id.uid):
		rv := meta.ResourceVersion
		if c.dependentInForeground(id.uid) {
			// A dependent that waits for its own dependents while this one
			// waits for it may be a cycle: this one stops blocking its
			// owners, as Kubernetes' collector does.
			if err := c.objects.UpdateMetadata(ctx, id.res, id.namespace, id.name, id.uid, unblockOwners); err != nil {
				return err
			}
			rv = ""
		}
		return c.delete(ctx, id, rv, "Foreground")
	default:
		policy := "Background"
		switch {
		case slices.Contains(meta.Finalizers, FinalizerOrphan):
			policy = "Orphan"
		case slices.Contains(meta.Finalizers, FinalizerForeground):
			policy = "Foreground"
		}
		return c.delete(ctx, id, meta.ResourceVersion, policy)
	}
}

func unblockOwners(m *kapi.ObjectMeta) bool {
	changed := false
	for i, ref := range m.OwnerReferences {
		if ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			no := false
			m.OwnerReferences[i].BlockOwnerDeletion = &no
			changed = true
		}
	}
	return changed
}

func (c *Collector) delete(ctx context.Context, id identity, rv, policy string) error {
	err := c.objects.Delete(ctx, id.res, id.namespace, id.name, DeleteOptions{UID: id.uid, ResourceVersion: rv, PropagationPolicy: policy})
	if errors.Is(err, storage.ErrNotFound) {
		return nil // another replica, or its owner, was first
	}
	return err
}

// finishForeground removes the foregroundDeletion finalizer of an object
// none of whose dependents blocks it any more, or queues those that do.
func (c *Collector) finishForeground(ctx context.Context, id identity) error {
	c.mu.Lock()
	var blocking []identity
	for dep := range c.owned[id.uid] {
		n := c.dependents[dep]
		for _, ref := range n.owners {
			if ref.UID == id.uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				blocking = append(blocking, n.identity)
				break
			}
		}
	}
	c.mu.Unlock()
	if len(blocking) == 0 {
		return c.removeFinalizer(ctx, id, FinalizerForeground)
	}
	for _, dep := range blocking {
		c.queue.add(dep)
	}
	return nil
}

// orphanDependents removes the references to an object from its dependents,
// then its orphan finalizer.
func (c *Collector) orphanDependents(ctx context.Context, id identity) error {
	c.mu.Lock()
	var deps []identity
	for dep := range c.owned[id.uid] {
		deps = append(deps, c.dependents[dep].identity)
	}
	c.mu.Unlock()
	for _, dep := range deps {
		err := c.objects.UpdateMetadata(ctx, dep.res, dep.namespace, dep.name, dep.uid, func(m *kapi.ObjectMeta) bool {
			n := len(m.OwnerReferences)
			m.OwnerReferences = slices.DeleteFunc(m.OwnerReferences, func(r kapi.OwnerReference) bool { return r.UID == id.uid })
			return len(m.OwnerReferences) != n
		})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	return c.removeFinalizer(ctx, id, FinalizerOrphan)
}

func (c *Collector) removeFinalizer(ctx context.Context, id identity, finalizer string) error {
	err := c.objects.UpdateMetadata(ctx, id.res, id.namespace, id.name, id.uid, func(m *kapi.ObjectMeta) bool {
		n := len(m.Finalizers)
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == finalizer })
		return len(m.Finalizers) != n
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

func (c *Collector) hasDependents(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.owned[uid]) > 0
}

func (c *Collector) dependentInForeground(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for dep := range c.owned[uid] {
		if c.dependents[dep].foreground {
			return true
		}
	}
	return false
}
