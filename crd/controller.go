package crd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/lifecycle"
	"github.com/kapi-dev/kapi/storage"
)

// controller accepts the names of CustomResourceDefinitions, serves their
// kinds, and cleans up after deleted ones: kube-apiserver's naming,
// establishing and finalizer controllers in one. It is level-triggered:
// it acts on each definition as read from the store, so several replicas
// on one store may run it at once (every write is conditional, a conflict
// is retried from a fresh read) and each serves the kinds itself.
type controller struct {
	serve  func(kinds.Definition) error
	remove func(group, kind string) error
	logger *slog.Logger

	objects lifecycle.Objects
	crds    lifecycle.Resource

	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
	// served are the kinds served here, by definition name.
	served map[string]servedKind
	// terminating are the definitions being deleted, whose kinds refuse
	// creates (kinds.Definition.Terminating).
	terminating map[string]bool
	// names are the accepted names of every definition, by name, as last
	// read, for the naming of the others: listed once, then kept by each
	// sync (a change to a definition is a sync of it), so that a sync
	// does not read every definition (N² at a restart with many).
	names map[string]groupNames
	// initial are the definitions that existed when the controller
	// started and that it has not looked at yet; ready is called once
	// there are none (nil before the watch's first sync, and after).
	initial map[string]bool
	ready   func()
	// failures count the syncs of a definition that failed in a row, for
	// the backoff of its retries; the worker's own.
	failures map[string]int
}

// groupNames are a definition's group and accepted names.
type groupNames struct {
	group string
	names Names
}

// servedKind is a kind served for a definition, and what it was made
// from: the definition's generation and accepted names.
type servedKind struct {
	group, kind string
	made        string
	resource    lifecycle.Resource // where its objects are stored
	def         kinds.Definition   // what it was served from
}

func newController(s *apiserver.Server, opts []kinds.Option) *controller {
	serve, remove := kindServer(s, opts)
	return &controller{serve: serve, remove: remove, logger: slog.Default(),
		pending: map[string]bool{}, wake: make(chan struct{}, 1), served: map[string]servedKind{},
		terminating: map[string]bool{}}
}

// How soon a definition is looked at again: after a failure (doubling
// while it keeps failing, up to maxRetryAfter), and while objects of a
// deleted definition's kind wait for their finalizers.
const (
	retryAfter    = 200 * time.Millisecond
	maxRetryAfter = 30 * time.Second
	recheckAfter  = time.Second
)

func (c *controller) run(ctx context.Context, objects lifecycle.Objects, ready func()) {
	c.objects, c.ready = objects, ready
	i := slices.IndexFunc(objects.Resources(), func(r lifecycle.Resource) bool {
		return r.Group == Group && r.Plural == "customresourcedefinitions"
	})
	if i < 0 {
		c.logger.Error("kapi: crd: CustomResourceDefinitions are not served")
		return
	}
	c.crds = objects.Resources()[i]
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for ctx.Err() == nil {
			var seen []string
			err := objects.Watch(ctx, c.crds, func(ch lifecycle.Change) {
				switch {
				case ch.Synced:
					c.synced(seen)
				case ch.Meta != nil:
					seen = append(seen, ch.Meta.Name)
					c.add(ch.Meta.Name)
				}
			})
			if err != nil && ctx.Err() == nil {
				c.logger.Warn("kapi: crd: watch", "err", err)
				sleep(ctx, time.Second)
			}
		}
	})
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		names := make([]string, 0, len(c.pending))
		for n := range c.pending {
			names = append(names, n)
		}
		clear(c.pending)
		c.mu.Unlock()
		slices.Sort(names)
		for _, name := range names {
			if ctx.Err() != nil {
				return
			}
			again, err := c.sync(ctx, name)
			if err != nil && ctx.Err() == nil {
				again = c.retryDelay(name, err)
			} else {
				delete(c.failures, name)
			}
			if again > 0 {
				c.addAfter(ctx, name, again)
			}
			c.looked(name)
		}
	}
}

// retryDelay is how soon a definition whose sync failed with err is looked
// at again: soon after a conflict (another writer won; the next read sees
// its write), else at a delay doubling with each failure in a row, as
// kube-apiserver's controllers' work queues back off.
func (c *controller) retryDelay(name string, err error) time.Duration {
	if errors.Is(err, storage.ErrConflict) {
		return retryAfter
	}
	c.logger.Warn("kapi: crd", "name", name, "err", err)
	if c.failures == nil {
		c.failures = map[string]int{}
	}
	n := c.failures[name]
	c.failures[name] = n + 1
	return min(retryAfter<<min(n, 16), maxRetryAfter)
}

// synced is told of the definitions that existed when the watch began, on
// its first sync: the server is ready once each has been looked at (their
// kinds served), as kube-apiserver is once its CRD informers have synced.
func (c *controller) synced(names []string) {
	c.mu.Lock()
	// Definitions deleted while the watch was down: looked at again, a
	// sync finds them gone and forgets them.
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		seen[n] = true
	}
	var gone []string
	for name := range c.names {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		c.mu.Unlock()
		for _, name := range gone {
			c.add(name)
		}
		c.mu.Lock()
	}
	if c.ready == nil {
		c.mu.Unlock()
		return
	}
	c.initial = map[string]bool{}
	for _, n := range names {
		c.initial[n] = true
	}
	c.mu.Unlock()
	// Looked at again: the worker may have taken some already, before
	// they were known to be initial.
	for _, n := range names {
		c.add(n)
	}
	c.looked("")
}

// looked notes that a definition has been looked at.
func (c *controller) looked(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initial == nil {
		return
	}
	delete(c.initial, name)
	if len(c.initial) == 0 {
		c.initial = nil
		c.ready()
		c.ready = nil
	}
}

func (c *controller) add(name string) {
	c.mu.Lock()
	c.pending[name] = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *controller) addAfter(ctx context.Context, name string, d time.Duration) {
	go func() {
		if sleep(ctx, d) {
			c.add(name)
		}
	}()
}

// sleep waits d, or less if ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sync brings one definition and its kind to what the definition says; it
// returns when to look again, if it must.
func (c *controller) sync(ctx context.Context, name string) (time.Duration, error) {
	obj, err := c.objects.Read(ctx, c.crds, "", name)
	if errors.Is(err, storage.ErrNotFound) {
		c.stop(name)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	crd := obj.(*CustomResourceDefinition)
	// As kube-apiserver's handler, by the Terminating condition a DELETE
	// sets.
	c.mu.Lock()
	c.terminating[name] = conditionTrue(crd, Terminating)
	c.mu.Unlock()
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, crd)
	}
	others, err := c.namesBesides(ctx, crd)
	if err != nil {
		return 0, err
	}
	accepted := crd.Status.AcceptedNames
	changed := acceptNames(crd, others)
	if cond := condition(crd, NamesAccepted); cond != nil && cond.Status == kapi.ConditionTrue {
		if err := c.start(crd); err != nil {
			if !isDefinitionError(err) {
				return 0, err // retried: the definition may be served yet
			}
			// A definition the kind cannot be served from is reported as
			// kube-apiserver's nonstructuralschema controller reports a
			// schema it cannot use. Established, once true, stays true, as
			// in kube-apiserver, and the kind served before is served
			// still.
			changed = setCondition(crd, Condition{Type: NonStructuralSchema, Status: kapi.ConditionTrue, Reason: "Violations", Message: err.Error()}) || changed
			if !conditionTrue(crd, Established) {
				changed = setCondition(crd, Condition{Type: Established, Status: kapi.ConditionFalse, Reason: "InstallationFailed", Message: err.Error()}) || changed
			}
		} else {
			changed = removeCondition(crd, NonStructuralSchema) || changed
			changed = setCondition(crd, Condition{Type: Established, Status: kapi.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}) || changed
		}
	}
	if changed {
		if _, err = c.objects.Update(ctx, c.crds, crd, "status"); err == nil {
			c.noteNames(crd)
			if !sameNames(accepted, crd.Status.AcceptedNames) {
				// Names it gave up may be what another definition of
				// the group waits for: kube-apiserver's naming
				// controller requeues the group after each sync.
				c.lookAtGroup(crd.Spec.Group, crd.Name)
			}
		}
	}
	return 0, err
}

// definitionError is the error of a definition its kind cannot be served
// from, as opposed to one of serving it.
type definitionError struct{ error }

func (e definitionError) Unwrap() error { return e.error }

// isDefinitionError says whether err, of start, is the definition's fault:
// retrying cannot mend it, a change of the definition can.
func isDefinitionError(err error) bool {
	var de definitionError
	return errors.As(err, &de) || errors.Is(err, kinds.ErrDefinition)
}

// lookAtGroup has the definitions of group but name looked at again: they
// may take names name has given up.
func (c *controller) lookAtGroup(group, name string) {
	c.mu.Lock()
	var again []string
	for other, n := range c.names {
		if n.group == group && other != name {
			again = append(again, other)
		}
	}
	c.mu.Unlock()
	for _, other := range again {
		c.add(other)
	}
}

// namesBesides are the accepted names of the other definitions of crd's
// group; it notes crd's own, as just read.
func (c *controller) namesBesides(ctx context.Context, crd *CustomResourceDefinition) ([]Names, error) {
	c.mu.Lock()
	listed := c.names != nil
	c.mu.Unlock()
	if !listed {
		all, err := c.objects.List(ctx, c.crds, "")
		if err != nil {
			return nil, err
		}
		names := make(map[string]groupNames, len(all))
		for _, o := range all {
			other := o.(*CustomResourceDefinition)
			names[other.Name] = groupNames{other.Spec.Group, other.Status.AcceptedNames}
		}
		c.mu.Lock()
		c.names = names
		c.mu.Unlock()
	}
	c.noteNames(crd)
	c.mu.Lock()
	defer c.mu.Unlock()
	var others []Names
	for name, n := range c.names {
		if n.group == crd.Spec.Group && name != crd.Name {
			others = append(others, n.names)
		}
	}
	return others, nil
}

// noteNames records a definition's accepted names as read or written.
func (c *controller) noteNames(crd *CustomResourceDefinition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names != nil {
		c.names[crd.Name] = groupNames{crd.Spec.Group, crd.Status.AcceptedNames}
	}
}

// start serves the kind of an accepted definition, or serves it anew if
// the definition changed since.
func (c *controller) start(crd *CustomResourceDefinition) error {
	n := crd.Status.AcceptedNames
	made := fmt.Sprint(crd.Generation, n)
	c.mu.Lock()
	cur, ok := c.served[crd.Name]
	c.mu.Unlock()
	if ok && cur.made == made {
		return nil
	}
	def, err := Definition(crd)
	if err != nil {
		return definitionError{err}
	}
	name := crd.Name
	def.Terminating = func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.terminating[name]
	}
	if ok && (cur.group != def.Group || cur.kind != def.Kind) {
		// A new kind of the same plural: the old one goes first, as the
		// two cannot be served at once; if the new one cannot be served,
		// the old one is served again, so that what Established says
		// stays true.
		if err := c.remove(cur.group, cur.kind); err != nil {
			return err
		}
		if err := c.serve(def); err != nil {
			if rerr := c.serve(cur.def); rerr != nil {
				c.mu.Lock()
				delete(c.served, crd.Name) // nothing is served: tried again
				c.mu.Unlock()
				return errors.Join(err, fmt.Errorf("serving %s again: %w", cur.kind, rerr))
			}
			return err
		}
	} else if err := c.serve(def); err != nil {
		return err
	}
	sk := servedKind{group: def.Group, kind: def.Kind, made: made, def: def}
	for _, v := range def.Versions {
		if v.Storage {
			sk.resource = lifecycle.Resource{Group: def.Group, Version: v.Name, Kind: def.Kind, Plural: def.Plural, Namespaced: def.Namespaced}
		}
	}
	c.mu.Lock()
	c.served[crd.Name] = sk
	c.mu.Unlock()
	return nil
}

// stop stops serving the kind of a definition that is gone, and looks
// again at the definitions of its group, which may have its names now.
func (c *controller) stop(name string) {
	c.mu.Lock()
	cur, ok := c.served[name]
	delete(c.served, name)
	delete(c.terminating, name)
	delete(c.names, name)
	c.mu.Unlock()
	if ok {
		if err := c.remove(cur.group, cur.kind); err != nil {
			c.logger.Warn("kapi: crd: stop serving", "name", name, "err", err)
		}
	}
	_, group, _ := strings.Cut(name, ".") // a definition is named <plural>.<group>
	c.lookAtGroup(group, name)
}

// finalize deletes the objects of a deleted definition's kind, then
// removes its cleanup finalizer, as kube-apiserver's finalizer controller
// does; the definition goes with the finalizer, and its kind when the
// controller sees it gone.
func (c *controller) finalize(ctx context.Context, crd *CustomResourceDefinition) (time.Duration, error) {
	if !slices.Contains(crd.Finalizers, CleanupFinalizer) {
		return 0, nil
	}
	established := conditionTrue(crd, Established)
	if established {
		if err := c.start(crd); err != nil {
			return 0, err
		}
		if setCondition(crd, Condition{Type: Terminating, Status: kapi.ConditionTrue, Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress"}) {
			return 0, c.writeStatus(ctx, crd)
		}
		c.mu.Lock()
		res := c.served[crd.Name].resource
		c.mu.Unlock()
		left, err := c.deleteAll(ctx, res)
		if err != nil {
			setCondition(crd, Condition{Type: Terminating, Status: kapi.ConditionTrue, Reason: "InstanceDeletionFailed", Message: fmt.Sprintf("could not issue all deletes: %v", err)})
			_ = c.writeStatus(ctx, crd)
			return 0, err
		}
		if left > 0 {
			return recheckAfter, nil
		}
		setCondition(crd, Condition{Type: Terminating, Status: kapi.ConditionFalse, Reason: "InstanceDeletionCompleted", Message: "removed all instances"})
	} else {
		setCondition(crd, Condition{Type: Terminating, Status: kapi.ConditionFalse, Reason: "NeverEstablished", Message: "resource was never established"})
	}
	if err := c.writeStatus(ctx, crd); err != nil {
		return 0, err
	}
	obj, err := c.objects.Read(ctx, c.crds, "", crd.Name)
	if err != nil {
		return 0, err
	}
	crd = obj.(*CustomResourceDefinition)
	crd.Finalizers = slices.DeleteFunc(slices.Clone(crd.Finalizers), func(f string) bool { return f == CleanupFinalizer })
	_, err = c.objects.Update(ctx, c.crds, crd, "")
	return 0, err
}

func (c *controller) writeStatus(ctx context.Context, crd *CustomResourceDefinition) error {
	_, err := c.objects.Update(ctx, c.crds, crd, "status")
	return err
}

// deleteAll deletes every object of a kind and says how many are left
// (held by finalizers).
func (c *controller) deleteAll(ctx context.Context, res lifecycle.Resource) (int, error) {
	objs, err := c.objects.List(ctx, res, "")
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, o := range objs {
		m := o.GetObjectMeta()
		if m.DeletionTimestamp != nil {
			continue
		}
		err := c.objects.Delete(ctx, res, m.Namespace, m.Name, lifecycle.DeleteOptions{UID: m.UID})
		if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	objs, err = c.objects.List(ctx, res, "")
	return len(objs), err
}
