package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi"
)

// Option configures a Collector.
type Option func(*config)

type config struct {
	logger  *slog.Logger
	workers int
}

// WithLogger receives what the collector could not do and will try again,
// and the references it cannot follow. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithWorkers sets how many objects are decided on at once (default 4).
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

// Collector deletes the objects whose owners are gone. Make it with New,
// run it with Run.
type Collector struct {
	objects Objects
	config  config
	set     atomic.Pointer[resourceSet] // replaced, not changed, by Add and Remove

	// run is the context of Run while it runs, and the group of its
	// goroutines, which Add joins; stops end the follow of a resource Add
	// started.
	runMu sync.Mutex
	run   context.Context
	group *sync.WaitGroup
	stops map[Resource]context.CancelFunc

	mu sync.Mutex
	// dependents are the objects that have owners, by uid; owned are
	// their uids by the uid of each owner they name.
	dependents map[string]*node
	owned      map[string]map[string]struct{}
	// deleting are the objects seen being deleted with a finalizer of the
	// collector's, by uid: they are decided on again when a dependent goes.
	deleting map[string]identity
	// applied is, by resource, the revision up to which the graph holds
	// its changes; progress is closed when it moves, if someone waits.
	applied  map[Resource]int64
	progress chan struct{}
	queue    queue
}

type groupKind struct{ group, kind string }

// resourceSet is what a collector follows: the resources, and by kind the
// one that answers for all its versions (the first registered).
type resourceSet struct {
	resources []Resource
	kinds     map[groupKind]Resource
}

// identity names one object.
type identity struct {
	res             Resource
	namespace, name string
	uid             string
}

func (id identity) String() string {
	s := id.res.Plural
	if id.res.Group != "" {
		s += "." + id.res.Group
	}
	if id.namespace != "" {
		s += " " + id.namespace + "/" + id.name
	} else {
		s += " " + id.name
	}
	return s
}

// node is an object that has owners.
type node struct {
	identity
	owners []kapi.OwnerReference
	// deleting: it has a deletionTimestamp; foreground: and the
	// foregroundDeletion finalizer.
	deleting, foreground bool
}

// New makes a collector that works through objects.
func New(objects Objects, opts ...Option) (*Collector, error) {
	c := &Collector{
		objects:    objects,
		config:     config{logger: slog.Default(), workers: 4},
		stops:      map[Resource]context.CancelFunc{},
		dependents: map[string]*node{},
		owned:      map[string]map[string]struct{}{},
		deleting:   map[string]identity{},
		applied:    map[Resource]int64{},
	}
	for _, o := range opts {
		o(&c.config)
	}
	if c.config.workers < 1 {
		return nil, fmt.Errorf("gc: workers must be at least 1, not %d", c.config.workers)
	}
	if c.config.logger == nil {
		return nil, errors.New("gc: the logger is nil")
	}
	set := &resourceSet{resources: objects.Resources(), kinds: map[groupKind]Resource{}}
	for _, r := range set.resources {
		gk := groupKind{r.Group, r.Kind}
		if _, ok := set.kinds[gk]; !ok { // the first registered version of a kind answers for all
			set.kinds[gk] = r
		}
	}
	c.set.Store(set)
	c.queue.init()
	return c, nil
}

// Add has the collector follow a resource registered after it was made,
// as a kind defined at run time is: at once if it runs.
func (c *Collector) Add(r Resource) {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	set := c.set.Load()
	next := &resourceSet{resources: append(slices.Clip(set.resources), r), kinds: maps.Clone(set.kinds)}
	if _, ok := next.kinds[groupKind{r.Group, r.Kind}]; !ok {
		next.kinds[groupKind{r.Group, r.Kind}] = r
	}
	c.set.Store(next)
	if c.run != nil {
		ctx, cancel := context.WithCancel(c.run)
		c.stops[r] = cancel
		c.group.Go(func() { c.follow(ctx, r, func() {}) })
	}
}

// Remove stops following the resources of a kind no longer served; owner
// references to it are then left alone, as to any kind no resource serves.
func (c *Collector) Remove(group, kind string) {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	set := c.set.Load()
	next := &resourceSet{kinds: maps.Clone(set.kinds)}
	delete(next.kinds, groupKind{group, kind})
	for _, r := range set.resources {
		if r.Group != group || r.Kind != kind {
			next.resources = append(next.resources, r)
		} else if stop := c.stops[r]; stop != nil {
			stop()
			delete(c.stops, r)
		}
	}
	c.set.Store(next)
}

// Run collects until ctx ends. It watches every resource, and starts
// deciding once each has sent its objects: before that, a missing owner
// may only not have been seen yet.
func (c *Collector) Run(ctx context.Context) {
	allSynced := make(chan struct{})
	remaining := atomic.Int64{}
	var wg sync.WaitGroup
	c.runMu.Lock()
	resources := c.set.Load().resources
	c.run, c.group = ctx, &wg
	remaining.Store(int64(len(resources)))
	if len(resources) == 0 {
		close(allSynced)
	}
	for _, r := range resources {
		// Each follow its own context, so that Remove stops it as it
		// stops those Add started.
		rctx, cancel := context.WithCancel(ctx)
		c.stops[r] = cancel
		wg.Go(func() {
			synced := sync.OnceFunc(func() {
				if remaining.Add(-1) == 0 {
					close(allSynced)
				}
			})
			// A follow removed before its first sync holds no one up.
			defer func() {
				if ctx.Err() == nil {
					synced()
				}
			}()
			c.follow(rctx, r, synced)
		})
	}
	c.runMu.Unlock()
	select {
	case <-allSynced:
		for range c.config.workers {
			wg.Go(func() { c.work(ctx) })
		}
	case <-ctx.Done():
	}
	<-ctx.Done()
	c.runMu.Lock()
	c.run = nil // Add joins wg no more
	clear(c.stops)
	c.runMu.Unlock()
	wg.Wait()
}

// follow keeps the graph current with the objects of one resource, watching
// again whenever a watch ends early. firstSync is called once, when the
// first watch has sent every object.
func (c *Collector) follow(ctx context.Context, r Resource, firstSync func()) {
	first := true
	retry := time.Duration(0)
	for ctx.Err() == nil {
		var seen map[string]struct{} // on a watch after the first: the objects that still exist
		if !first {
			seen = map[string]struct{}{}
		}
		initial := true
		err := c.objects.Watch(ctx, r, func(ch Change) {
			switch {
			case ch.Synced:
				if initial {
					initial = false
					if !first {
						c.resynced(r, seen)
					}
					c.advance(r, ch.Revision)
					if first {
						first = false
						firstSync()
					}
				}
			case ch.Deleted:
				c.deleted(ch.Meta)
			default:
				if initial && seen != nil {
					seen[ch.Meta.UID] = struct{}{}
				}
				c.changed(r, ch.Meta)
			}
			if !initial && !ch.Synced {
				// Initial changes carry their objects' revisions, in key
				// order: only the state's as a whole counts.
				c.advance(r, ch.Revision)
			}
		})
		if ctx.Err() != nil {
			return
		}
		if !initial {
			retry = 0
		}
		c.config.logger.Info("kapi gc: watching again", "resource", r.Plural, "err", err)
		retry = min(max(2*retry, 50*time.Millisecond), 5*time.Second)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

// advance records that the graph holds the changes of r up to rev.
func (c *Collector) advance(r Resource, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applied[r] = rev
	if c.progress != nil {
		close(c.progress)
		c.progress = nil
	}
}

// caughtUp waits until the server's reads reflect every write committed
// before the call, and the graph every change they reflect: a decision
// that rests on what the graph lacks (no dependent is left, these are the
// dependents) is then not made on a change the graph has yet to see.
func (c *Collector) caughtUp(ctx context.Context) error {
	if err := c.objects.Sync(ctx); err != nil {
		return err
	}
	resources := c.set.Load().resources
	want := make(map[Resource]int64, len(resources))
	for _, r := range resources {
		want[r] = c.objects.LastChange(r)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		c.mu.Lock()
		behind := ""
		for r, rev := range want {
			if c.applied[r] < rev {
				behind = r.Plural
				break
			}
		}
		if behind == "" {
			c.mu.Unlock()
			return nil
		}
		if c.progress == nil {
			c.progress = make(chan struct{})
		}
		progress := c.progress
		c.mu.Unlock()
		select {
		case <-progress:
		case <-ctx.Done():
			return fmt.Errorf("the graph has not caught up with %s: %w", behind, ctx.Err())
		}
	}
}

// changed brings an object's change into the graph and queues what it
// calls for.
func (c *Collector) changed(r Resource, meta *kapi.ObjectMeta) {
	id := identity{r, meta.Namespace, meta.Name, meta.UID}
	deleting := meta.DeletionTimestamp != nil
	foreground := deleting && slices.Contains(meta.Finalizers, FinalizerForeground)
	orphan := deleting && slices.Contains(meta.Finalizers, FinalizerOrphan)
	var n *node
	c.mu.Lock()
	if foreground || orphan {
		if _, was := c.deleting[id.uid]; !was && foreground {
			for dep := range c.owned[id.uid] {
				c.queue.add(c.dependents[dep].identity)
			}
		}
		c.deleting[id.uid] = id
		c.queue.add(id)
	} else {
		delete(c.deleting, id.uid)
	}
	if old := c.dependents[id.uid]; old != nil {
		c.removeNode(old)
	}
	if len(meta.OwnerReferences) > 0 {
		n = &node{identity: id, owners: meta.OwnerReferences, deleting: deleting, foreground: foreground}
		c.addNode(n)
	}
	c.mu.Unlock()
	if n != nil && !deleting && c.mayBeDue(n) {
		c.queue.add(id)
	}
}

// deleted takes an object out of the graph and queues its dependents, and
// the owners that wait for it to go.
func (c *Collector) deleted(meta *kapi.ObjectMeta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(meta.UID)
}

// forget is deleted under c.mu.
func (c *Collector) forget(uid string) {
	delete(c.deleting, uid)
	if old := c.dependents[uid]; old != nil {
		c.removeNode(old)
		for _, ref := range old.owners {
			if owner, ok := c.deleting[ref.UID]; ok {
				c.queue.add(owner)
			}
		}
	}
	for dep := range c.owned[uid] {
		c.queue.add(c.dependents[dep].identity)
	}
}

// resynced follows a watch after the first: the objects of r the graph
// holds that no longer exist were deleted meanwhile, and any owner may
// have gone unseen, so every dependent is looked at again.
func (c *Collector) resynced(r Resource, seen map[string]struct{}) {
	c.mu.Lock()
	var gone []string
	for uid, n := range c.dependents {
		if _, ok := seen[uid]; !ok && n.res == r {
			gone = append(gone, uid)
		}
	}
	for uid, id := range c.deleting {
		if _, ok := seen[uid]; !ok && id.res == r {
			gone = append(gone, uid)
		}
	}
	for _, uid := range gone {
		c.forget(uid)
	}
	all := make([]*node, 0, len(c.dependents))
	for _, n := range c.dependents {
		all = append(all, n)
	}
	c.mu.Unlock()
	for _, n := range all {
		if !n.deleting && c.mayBeDue(n) {
			c.queue.add(n.identity)
		}
	}
}

func (c *Collector) addNode(n *node) {
	c.dependents[n.uid] = n
	for _, ref := range n.owners {
		deps := c.owned[ref.UID]
		if deps == nil {
			deps = map[string]struct{}{}
			c.owned[ref.UID] = deps
		}
		deps[n.uid] = struct{}{}
	}
}

func (c *Collector) removeNode(n *node) {
	delete(c.dependents, n.uid)
	for _, ref := range n.owners {
		if deps := c.owned[ref.UID]; deps != nil {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(c.owned, ref.UID)
			}
		}
	}
}

// mayBeDue says whether a dependent may have to lose references or go: an
// owner is missing, has another uid, cannot be read, or is being deleted
// in the foreground. It reads the server's current state without waiting:
// a decision reads it again, and an owner deleted after this look queues
// its dependents then.
func (c *Collector) mayBeDue(n *node) bool {
	for _, ref := range n.owners {
		owner, ok, err := c.owner(n.identity, ref, false)
		if err != nil {
			return true
		}
		if ok && (owner == nil || owner.UID != ref.UID || owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, FinalizerForeground)) {
			return true
		}
	}
	return false
}

// owner reads the owner a reference names; ok is false when the reference
// cannot be followed: a kind no resource serves, or a namespaced owner of
// a cluster-scoped object. Kubernetes' collector leaves those alone too.
func (c *Collector) owner(id identity, ref kapi.OwnerReference, log bool) (owner *kapi.ObjectMeta, ok bool, err error) {
	group := ""
	if i := strings.LastIndexByte(ref.APIVersion, '/'); i >= 0 {
		group = ref.APIVersion[:i]
	}
	r, found := c.set.Load().kinds[groupKind{group, ref.Kind}]
	namespace := ""
	switch {
	case !found:
		if log {
			c.config.logger.Info("kapi gc: an owner reference names a kind no resource serves: the object is left alone", "object", id.String(), "apiVersion", ref.APIVersion, "kind", ref.Kind)
		}
		return nil, false, nil
	case r.Namespaced && id.namespace == "":
		if log {
			c.config.logger.Info("kapi gc: a cluster-scoped object names a namespaced owner: the object is left alone", "object", id.String(), "apiVersion", ref.APIVersion, "kind", ref.Kind, "name", ref.Name)
		}
		return nil, false, nil
	case r.Namespaced:
		namespace = id.namespace
	}
	owner, err = c.objects.Get(r, namespace, ref.Name)
	return owner, true, err
}
