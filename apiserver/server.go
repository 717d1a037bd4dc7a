package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/internal/listcache"
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

	handler atomic.Pointer[http.Handler] // set when serving starts; no registration after

	mu        sync.Mutex // guards registration and the start and end of serving
	resources []*resource
	running   bool // the hub's goroutine was started: done will be closed
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
	background        sync.WaitGroup // the in-process controllers
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
	}{{c.namespaces, s.registerNamespaces}, {c.leases, s.registerLeases}, {c.events, s.registerEvents}} {
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
		return fmt.Errorf("apiserver: register %s: too late: Register must be called before Complete, the first request (ServeHTTP) and Close; a server's resources are fixed from then on", r.gvk())
	}
	for _, o := range s.resources {
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
	s.resources = append(s.resources, r) // its cache is made by complete
	return nil
}

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
	h := s.observed(s.flow.Handler(s.routes()))
	s.handler.Store(&h)
	s.running = true
	collector, err := gc.New(&objects{s: s, user: garbageCollector, manager: "generic-garbage-collector"}, gc.WithLogger(s.config.logger))
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
func (s *Server) routes() (http.Handler, *chi.Mux) {
	r := chi.NewRouter()
	r.Use(s.withFairness) // after authentication: withAuth wraps r
	r.NotFound(s.applySetParentTypes(func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, r, nil, NewStatusError(http.StatusNotFound, "NotFound", "the server could not find the requested resource").Status)
	}))
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
	r.Get("/api", s.serveCoreVersions())
	r.Get("/apis", s.serveGroups())
	docs := map[groupVersion]*openAPIDoc{}
	for _, gv := range s.groupVersions() {
		docs[gv] = s.openAPIDoc(gv)
	}
	r.Get("/openapi/v3", serveOpenAPIRoot(docs))
	r.Get("/openapi/v2", serveOpenAPIV2(s.config.version))

	for _, gv := range s.groupVersions() {
		base := "/apis/" + gv.group + "/" + gv.version
		if gv.group == "" {
			base = "/api/" + gv.version
		} else {
			r.Get("/apis/"+gv.group, s.serveGroup(gv.group))
		}
		r.Get("/openapi/v3"+base, serveOpenAPI(gv, docs[gv]))
		r.Get(base, s.serveResources(gv))
		r.Get(base+"/", s.serveResources(gv))
		s.resourceRoutes(r, base, gv, notAllowed)
	}
	s.accessReviewRoutes(r)
	if s.config.cors != nil { // outside authentication: preflights carry no credentials
		return s.config.cors.Handler(s.withAuth(r)), r
	}
	return s.withAuth(r), r
}

// resourceRoutes adds the resource paths of one group version under base.
// They are routes of the top router, not subrouters: every router a
// request passes through stays on the stack of its handler, which for a
// watch lives as long as the watch, and the runtime halves an idle stack
// only while a quarter of it is in use (see TestIdleWatcherCost). Each path
// is routed with and without a trailing slash, and answers the methods it
// does not serve with 405, as the subrouters did: without that a PUT to a
// namespaced collection would match the cluster-scoped subresource route.
func (s *Server) resourceRoutes(r chi.Router, base string, gv groupVersion, notAllowed http.HandlerFunc) {
	collection := map[string]verb{http.MethodGet: verbList, http.MethodPost: verbCreate, http.MethodDelete: verbDeleteCollection}
	// /namespaces/{name}/status and /finalize are routed as a namespaced
	// collection; newRequest tells them apart.
	namespacedCollection := map[string]verb{http.MethodGet: verbList, http.MethodPost: verbCreate, http.MethodDelete: verbDeleteCollection,
		http.MethodPut: verbUpdate, http.MethodPatch: verbPatch}
	item := map[string]verb{http.MethodGet: verbGet, http.MethodPut: verbUpdate, http.MethodPatch: verbPatch, http.MethodDelete: verbDelete}
	sub := map[string]verb{http.MethodGet: verbGet, http.MethodPut: verbUpdate, http.MethodPatch: verbPatch}
	for _, route := range []struct {
		path  string
		verbs map[string]verb
	}{
		{"/namespaces/{namespace}/{resource}", namespacedCollection},
		{"/namespaces/{namespace}/{resource}/{name}", item},
		{"/namespaces/{namespace}/{resource}/{name}/{subresource}", sub},
		{"/{resource}", collection},
		{"/{resource}/{name}", item},
		{"/{resource}/{name}/{subresource}", sub},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			h := notAllowed
			if v, ok := route.verbs[method]; ok {
				h = s.handle(gv, v)
			}
			r.Method(method, base+route.path, h)
			r.Method(method, base+route.path+"/", h)
		}
	}
}

type groupVersion struct{ group, version string }

// groupVersions lists the served group versions: the core group first,
// then each group where it was first registered, its versions together by
// Kubernetes' priority (the preferred first).
func (s *Server) groupVersions() []groupVersion {
	var gvs []groupVersion
	for _, r := range s.resources {
		gv := groupVersion{r.Group, r.Version}
		if r.version.served && !slices.Contains(gvs, gv) {
			gvs = append(gvs, gv)
		}
	}
	first := map[string]int{"": -1}
	for i, gv := range gvs {
		if _, ok := first[gv.group]; !ok {
			first[gv.group] = i
		}
	}
	slices.SortStableFunc(gvs, func(a, b groupVersion) int {
		if a.group != b.group {
			return first[a.group] - first[b.group]
		}
		return versions.Compare(b.version, a.version)
	})
	return gvs
}

// resourcesOf lists the resources served in a group version.
func (s *Server) resourcesOf(gv groupVersion) []*resource {
	var out []*resource
	for _, r := range s.resources {
		if r.Group == gv.group && r.Version == gv.version && r.version.served {
			out = append(out, r)
		}
	}
	return out
}
