package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/internal/applyset"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/internal/lastwrite"
	"github.com/kapi-dev/kapi/internal/listcache"
	"github.com/kapi-dev/kapi/internal/openapi"
	"github.com/kapi-dev/kapi/internal/requestinfo"
	"github.com/kapi-dev/kapi/internal/storehealth"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/versions"
	"github.com/kapi-dev/kapi/watch"
)

// Server serves registered resources over the Kubernetes API. Create it with
// New, add resources with Register, then use it as an http.Handler. Close
// releases it.
type Server struct {
	config config
	hub    *watch.Hub
	// health is what /readyz knows of the store.
	health *storehealth.Health
	flow   *guard.Flow      // what is in flight (internal/guard)
	lists  listcache.Budget // the whole-collection lists kept (internal/listcache)
	// wrote is the revision of this server's last write of each key
	// (storeObject), which its cache shows soon after (latest).
	wrote      lastwrite.Record
	cacheWaits atomic.Int64 // how often a write waited for the watch cache (waitCache), for tests

	handler atomic.Pointer[http.Handler] // set when serving starts

	mu        sync.Mutex // guards registration and the start and end of serving
	resources []*resource
	// reg is what is served, published when serving starts and replaced
	// (never changed) by RegisterKind and Remove; resources is its
	// resources from then on.
	reg     atomic.Pointer[registry]
	running bool // the hub's goroutine was started: done will be closed
	// completed says registration has ended (Complete), with completeErr.
	completed   bool
	completeErr error
	ctx         context.Context
	stop        context.CancelFunc
	done        chan struct{}

	namespaces *resource // served namespaces, or nil (namespaces.go)
	// deletedNamespaces are the namespaces this server marked for
	// deletion, by name, with when (namespaces.go).
	deletedNamespaces sync.Map
	events            *resource      // core events, which store both kinds (events.go)
	collector         *gc.Collector  // told of the kinds RegisterKind and Remove change
	background        sync.WaitGroup // the in-process controllers
	controllers       []*controller  // those of other packages (controllers.go)
	endpoints         []*endpoint    // custom subresources and answered kinds (endpoints.go)
}

// New makes a server. Its storage is in memory unless WithStorage says
// otherwise.
func New(opts ...Option) (*Server, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if c.store == nil {
		c.store = memory.New()
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	s := &Server{config: c, done: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(context.Background())
	// The watch cache follows the store itself and retries on its own;
	// requests reach it through the guard that fails fast while it is down
	// (internal/storehealth).
	s.health = storehealth.New(s.ctx, c.store, c.logger)
	s.config.store = s.health.Store()
	s.hub = watch.New(c.store, c.keyPrefix, watch.WithHistory(historyEvents, c.historyWindow), watch.WithErrorHandler(func(err error) {
		c.logger.Warn("kapi: watch cache", "err", err)
		s.health.Suspect() // its watch of the store broke, most likely
	}))
	s.flow = newFlow(s.ctx, &c)
	for _, builtin := range []struct {
		on       bool
		register func() error
	}{{c.namespaces, s.registerNamespaces}, {c.leases, s.registerLeases}, {c.events, s.registerEvents}, {true, s.addAccessReviews}} {
		if !builtin.on {
			continue
		}
		if err := builtin.register(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) add(r *resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handler.Load() != nil || s.completed {
		return fmt.Errorf("apiserver: register %s: too late: Register must be called before Complete, the first request (ServeHTTP) and Close (RegisterKind adds kinds later)", r.gvk())
	}
	if err := clashes(s.resources, r); err != nil {
		return err
	}
	if err := clashesWithAnswered(s.endpoints, r); err != nil {
		return err
	}
	s.resources = append(s.resources, r) // its cache is made by complete
	return nil
}

// clashes says why r cannot join resources.
func clashes(resources []*resource, r *resource) error {
	for _, o := range resources {
		if o.Group == r.Group && o.Kind == r.Kind {
			if err := r.agrees(o); err != nil {
				return fmt.Errorf("apiserver: register %s: %w", r.gvk(), err)
			}
			continue // versions of one kind share their names
		}
		if o.Group == r.Group && o.Plural == r.Plural {
			return fmt.Errorf("apiserver: register %s: clashes with %s (resource %q)", r.gvk(), o.gvk(), o.Plural)
		}
		if o.Group != r.Group || o.Version != r.Version {
			continue
		}
		if o.Plural == r.Plural || o.Kind == r.Kind {
			return fmt.Errorf("apiserver: register %s: clashes with %s (resource %q)", r.gvk(), o.gvk(), o.Plural)
		}
		for _, n := range append([]string{r.Singular}, r.ShortNames...) {
			if n == o.Plural || n == o.Singular || slices.Contains(o.ShortNames, n) {
				return fmt.Errorf("apiserver: register %s: name %q is already used by %s", r.gvk(), n, o.gvk())
			}
		}
	}
	return nil
}

// change replaces the resources of the kind group/kind with rs (none:
// removes it). Before serving it only registers; while serving the kind's
// cache is made, the next registry published, and the replaced kind's
// cache removed, which ends its watches.
func (s *Server) change(group, kind string, rs []*resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kept, gone []*resource
	for _, o := range s.resources {
		if o.Group == group && o.Kind == kind || o.storedWith != nil && o.storedWith.Group == group && o.storedWith.Kind == kind {
			gone = append(gone, o)
		} else {
			kept = append(kept, o)
		}
	}
	if len(gone) == 0 && len(rs) == 0 {
		return fmt.Errorf("apiserver: remove %s.%s: %w", kind, group, errNoKind)
	}
	for _, o := range gone {
		// A kind of the program's own (Register, the built-in kinds) is
		// never replaced nor removed by one defined at run time, as
		// kube-apiserver's own kinds win over a CRD's.
		if !o.changeable {
			return fmt.Errorf("apiserver: %s.%s: %w", kind, group, errFixedKind)
		}
	}
	next := slices.Clip(kept)
	for _, r := range rs {
		if err := clashes(next, r); err != nil {
			return err
		}
		if err := clashesWithAnswered(s.endpoints, r); err != nil {
			return err
		}
		next = append(next, r)
	}
	if !s.completed {
		s.resources = next
		return nil
	}
	if len(rs) > 0 {
		if err := s.completeKind(group, rs); err != nil {
			return fmt.Errorf("apiserver: %w", err)
		}
	}
	s.resources = next
	s.publish(s.reg.Load())
	if c := s.collector; c != nil && len(gone) > 0 {
		c.Remove(group, kind)
	}
	if len(rs) > 0 && s.collector != nil {
		st := rs[0].storageVersion()
		s.collector.Add(gc.Resource{Group: st.Group, Version: st.Version, Kind: st.Kind, Plural: st.Plural, Namespaced: st.Namespaced})
	}
	for _, o := range gone {
		if o.cache != nil && o.storageVersion() == o {
			s.hub.Unregister(o.cache)
			o.lists.Leave()
			o.frames.Leave()
		}
	}
	return nil
}

var (
	errNoKind    = errors.New("no such kind")
	errFixedKind = errors.New("registered with Register, not RegisterKind: it cannot be replaced or removed")
)

// Remove stops serving a kind registered with RegisterKind (one registered
// with Register, or built in, is an error): its resources answer 404,
// discovery and OpenAPI no longer list it, and its watches end; requests
// under way finish. Its objects stay in storage. Package kinds removes the
// kinds it defines this way.
func (s *Server) Remove(group, kind string) error { return s.change(group, kind, nil) }

// ServeHTTP serves the Kubernetes API. The first call starts the cache that
// feeds reads and watches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := s.handler.Load()
	if h == nil {
		h = s.start()
	}
	(*h).ServeHTTP(w, r)
}

// start builds the routes, with every document that does not change once
// serving has begun, and starts the hub.
func (s *Server) start() *http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.handler.Load(); h != nil {
		return h
	}
	if err := s.complete(); err != nil {
		s.config.logger.Error("kapi: registration is incomplete", "err", err)
		h := incompleteHandler(err)
		s.handler.Store(&h)
		return &h
	}
	s.publish(nil)
	s.holdStreams()
	h := s.observed(s.flow.Handler(s.routes()))
	s.handler.Store(&h)
	s.running = true
	collector, err := gc.New(&objects{s: s, user: garbageCollector, manager: "generic-garbage-collector"}, gc.WithLogger(s.config.logger))
	s.collector = collector
	go func() {
		defer close(s.done)
		var lifecycle sync.WaitGroup
		if err != nil { // cannot be: its options are the server's own
			s.config.logger.Error("kapi: no garbage collector", "err", err)
		} else {
			lifecycle.Go(func() { collector.Run(s.ctx) })
		}
		if err := s.hub.Run(s.ctx); err != nil {
			s.config.logger.Error("kapi: the watch cache stopped", "err", err)
		}
		lifecycle.Wait()
	}()
	if s.namespaces != nil {
		s.startNamespaces()
	}
	if s.events != nil {
		s.startEvents()
	}
	s.startControllers()
	return &h
}

// Close ends every watch and stops the cache; later requests are answered
// 503. The storage is left open: it belongs to whoever passed it in.
func (s *Server) Close() error {
	s.mu.Lock()
	var closed http.Handler = http.HandlerFunc(s.flow.ShuttingDown)
	s.handler.Store(&closed)
	running := s.running
	s.mu.Unlock()
	s.stop()
	if running {
		<-s.done
	}
	s.background.Wait()
	s.health.Close()
	return nil
}

// routes are the server's handler below the guard, and the router in it.
// The routes are the same whatever is registered: each request finds its
// group version and resource in the registry published last.
func (s *Server) routes() (http.Handler, *chi.Mux) {
	r := chi.NewRouter()
	r.Use(s.withFairness) // after authentication: withAuth wraps r
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, r, nil, NewStatusError(http.StatusNotFound, "NotFound", "the server could not find the requested resource").Status)
	}
	notAllowed := func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, r, nil, NewStatusError(http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource").Status)
	}
	r.MethodNotAllowed(notAllowed)

	for probe, checks := range map[string][]healthCheck{"healthz": liveChecks(), "livez": liveChecks(), "readyz": s.readyChecks()} {
		r.Get("/"+probe, s.serveHealth(probe, checks))
		r.Get("/"+probe+"/{check}", serveHealthCheck(checks))
	}
	r.Get("/version", s.serveVersion)
	if s.config.metrics != nil {
		r.Method(http.MethodGet, "/metrics", s.config.metrics)
	}
	// A document of the registry: not found when it has none there.
	doc := func(pick func(d *documents, r *http.Request) http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if h := pick(s.reg.Load().documents(s), r); h != nil {
				h(w, r)
				return
			}
			notFound(w, r)
		}
	}
	gvOf := func(r *http.Request) groupVersion {
		return groupVersion{chi.URLParam(r, "group"), chi.URLParam(r, "version")}
	}
	r.Get("/api", doc(func(d *documents, _ *http.Request) http.HandlerFunc { return d.serveCoreVersions }))
	r.Get("/apis", doc(func(d *documents, _ *http.Request) http.HandlerFunc { return d.serveGroups }))
	r.Get("/openapi/v3", doc(func(d *documents, _ *http.Request) http.HandlerFunc { return d.openAPIRoot() }))
	r.Get("/openapi/v2", openapi.ServeV2(s.config.version.GitVersion))
	for _, base := range []string{"/api/{version}", "/apis/{group}/{version}"} {
		r.Get("/openapi/v3"+base, doc(func(d *documents, r *http.Request) http.HandlerFunc { return d.openAPI(gvOf(r)) }))
	}
	// Discovery of a group or group version, and resources: the paths
	// are read by newRequest, not routed by chi, whose search for a route
	// recurses once per path segment and parameter: that deepened the
	// stack of every watch's handler past the size the runtime halves an
	// idle stack to (see TestIdleWatchStack). No route matches them: one of
	// "/api/*" made chi set each request's path value "*" (a map), unread.
	api := s.handle(doc, notAllowed)
	r.NotFound(requestinfo.APIOr(api, notFound))
	r.HandleFunc(applyset.Path, s.applySetParentTypes(api))
	if s.config.cors != nil { // outside authentication: preflights carry no credentials
		return s.config.cors.Handler(s.withAuth(r)), r
	}
	return s.withAuth(r), r
}

type groupVersion struct{ group, version string }

// registry is what a server serves at one time: its resources by group
// version and plural, and the discovery and OpenAPI documents made of
// them, once, when first asked for. It is never changed once published:
// a change publishes another, so that a request finds its resource with
// one atomic load and no lock.
type registry struct {
	resources []*resource
	gvs       []groupVersion                        // served, in discovery's order
	byGV      map[groupVersion]map[string]*resource // served resources by plural
	ofGV      map[groupVersion][]*resource          // in the order of their registration
	once      sync.Once
	docs      *documents
	// openAPI are the OpenAPI documents by group version, shared with
	// the next registry for the group versions a change leaves as they
	// were.
	openAPI map[groupVersion]*openAPIDoc
	// endpoints are the custom subresources and answered kinds (their
	// subresource ""), by where they are served.
	endpoints map[endpointKey]*endpoint
}

// publish makes s.resources the registry served; prev is the registry it
// replaces, or nil.
func (s *Server) publish(prev *registry) {
	reg := &registry{resources: slices.Clip(s.resources), byGV: map[groupVersion]map[string]*resource{},
		ofGV: map[groupVersion][]*resource{}, openAPI: map[groupVersion]*openAPIDoc{}, endpoints: map[endpointKey]*endpoint{}}
	for _, r := range reg.resources {
		gv := groupVersion{r.Group, r.Version}
		if !r.version.served {
			continue
		}
		if reg.byGV[gv] == nil {
			reg.gvs = append(reg.gvs, gv)
			reg.byGV[gv] = map[string]*resource{}
		}
		reg.byGV[gv][r.Plural] = r
		reg.ofGV[gv] = append(reg.ofGV[gv], r)
	}
	for _, ep := range s.endpoints {
		gv := groupVersion{ep.Group, ep.Version}
		reg.endpoints[endpointKey{gv, ep.Resource, ep.Subresource}] = ep
		if ep.Subresource == "" && reg.byGV[gv] == nil && !slices.Contains(reg.gvs, gv) {
			reg.gvs = append(reg.gvs, gv) // a group version of answered kinds alone
		}
	}
	first := map[string]int{"": -1}
	for i, gv := range reg.gvs {
		if _, ok := first[gv.group]; !ok {
			first[gv.group] = i
		}
	}
	slices.SortStableFunc(reg.gvs, func(a, b groupVersion) int {
		if a.group != b.group {
			return first[a.group] - first[b.group]
		}
		return versions.Compare(b.version, a.version)
	})
	for _, gv := range reg.gvs {
		if prev != nil && prev.openAPI[gv] != nil && slices.Equal(prev.resourcesOf(gv), reg.resourcesOf(gv)) {
			reg.openAPI[gv] = prev.openAPI[gv]
		} else {
			reg.openAPI[gv] = &openAPIDoc{gv: gv, resources: reg.resourcesOf(gv), endpoints: reg.endpointsOf(gv)}
		}
	}
	s.reg.Store(reg)
}

// registered are the resources registered, served or not.
func (s *Server) registered() []*resource {
	if reg := s.reg.Load(); reg != nil {
		return reg.resources
	}
	return s.resources
}

// groupVersions lists the served group versions: the core group first,
// then each group where it was first registered, its versions together by
// Kubernetes' priority (the preferred first).
func (reg *registry) groupVersions() []groupVersion { return reg.gvs }

// resourcesOf lists the resources served in a group version, in the order
// of their registration.
func (reg *registry) resourcesOf(gv groupVersion) []*resource { return reg.ofGV[gv] }
