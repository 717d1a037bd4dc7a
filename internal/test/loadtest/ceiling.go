package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// The ceiling is a no-op net/http server that answers with bytes recorded
// from kapi: what a server that did nothing but write its response could do
// on this machine. The harness configures it over HTTP under ceilingPath.
const ceilingPath = "/__ceiling/"

// recorded is one response of kapi's, to be replayed.
type recorded struct {
	Code   int         `json:"code"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// record sends one request and keeps its response.
func record(ctx context.Context, c *http.Client, method, url string, header http.Header, body []byte) (*recorded, error) {
	_, data, resp, err := send(ctx, c, method, url, header, body, true)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	h.Del("Date") // net/http writes its own
	return &recorded{Code: resp.StatusCode, Header: h, Body: data}, nil
}

// ceilingConfig is what the ceiling answers: resp to every request that is
// not a watch; to a watch, watchHeader and then, after every non-watch
// request, frame; to a streaming list (a watch with sendInitialEvents=true),
// watchHeader and initial.
type ceilingConfig struct {
	Response    *recorded   `json:"response,omitempty"`
	WatchHeader http.Header `json:"watchHeader,omitempty"`
	Frame       []byte      `json:"frame,omitempty"`
	// Initial is kapi's whole answer to a streaming list up to its
	// initial-events-end bookmark, the frames as they came: the ceiling
	// writes it in one go and then holds the watch open, as a server with
	// nothing to do but send what it has would.
	Initial []byte `json:"initial,omitempty"`
}

type ceiling struct {
	mu  sync.RWMutex
	cfg ceilingConfig

	// store, if not nil, makes the ceiling the bolt-only server (kapi's
	// bolt store) or the PostgreSQL-only server (kapi's PostgreSQL store):
	// each write (a request that is not a GET) first stores the answer it
	// replays, an object as kapi stores one, and is answered once that is
	// committed. A POST creates a key of its own; any other write updates
	// the key where kapi keeps the object its path names (creating it the
	// first time), comparing the revision it last wrote there, as kapi's
	// PUT and PATCH do. It is what kapi's writes on that store would do if
	// kapi's own handling cost nothing.
	store  storage.Interface
	stored atomic.Int64
	revs   sync.Map // an updated key → the revision of its last write here
	// etcd, if not nil, makes the ceiling the etcd-only server: each
	// request (a GET too) first makes the etcd requests kapi on etcd makes
	// for it (see etcdOnly).
	etcd *etcdOnly

	// The watch fan-out: every watcher's own handler goroutine writes the
	// frame, once per write, as soon as it is told; so the ceiling fans
	// out on every core and a slow connection delays no other, as in kapi.
	evMu    sync.Mutex
	written int64         // writes so far, each one frame for every watcher
	changed chan struct{} // closed at the next write
}

// newCeiling returns the ceiling's handler and a function that releases
// it; with a directory, the bolt-only server, its file in dir.
func newCeiling(dir string) (*ceiling, func(), error) {
	c := &ceiling{changed: make(chan struct{})}
	if dir == "" {
		return c, func() {}, nil
	}
	s, err := bolt.Open(filepath.Join(dir, "kapi.db"))
	if err != nil {
		return nil, nil, err
	}
	c.store = s
	return c, func() { _ = s.Close() }, nil
}

// newPostgresCeiling returns the PostgreSQL-only server: the ceiling
// storing each write through a PostgreSQL store at url, in a schema of its
// own, which first holds fill values of ~1 KiB (see fillStore).
func newPostgresCeiling(ctx context.Context, url string, fill int) (*ceiling, func(), error) {
	s, err := postgres.Open(ctx, url, postgres.WithSchema("postgres_only"))
	if err != nil {
		return nil, nil, err
	}
	if err := fillStore(ctx, s, fill); err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return &ceiling{changed: make(chan struct{}), store: s}, func() { _ = s.Close() }, nil
}

// fillStore creates n values of ~1 KiB in s, under a prefix no workload
// writes, so that the PostgreSQL-only server's tables hold as many rows as
// kapi's, which every pass seeds with its widgets: the same statements
// cost PostgreSQL more on the larger table (measured: 130-144 against
// 172-206 µs of PostgreSQL's CPU per PATCH when the bare client's tables
// held only the keys it wrote).
func fillStore(ctx context.Context, s storage.Interface, n int) error {
	if n <= 0 {
		return nil
	}
	value := bytes.Repeat([]byte("x"), 1024)
	started := time.Now()
	err := inParallel(ctx, n, 8, func(i int) error {
		_, err := s.Create(ctx, fmt.Sprintf("/example.com/widgets/fill/f-%05d", i), value)
		if errors.Is(err, storage.ErrExists) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("filling the PostgreSQL-only store: %w", err)
	}
	log.Printf("the PostgreSQL-only store holds %d values of %d bytes more, stored in %s", n, len(value), time.Since(started).Round(time.Millisecond))
	return nil
}

// storeWrite stores value as the write r would: see ceiling.store. An
// update compares the revision this server last wrote to the key, as
// kapi's compares the one its watch cache holds.
func (c *ceiling) storeWrite(r *http.Request, value []byte) error {
	ctx := r.Context()
	if r.Method == http.MethodPost {
		_, err := c.store.Create(ctx, fmt.Sprintf("/example.com/widgets/store-only/c-%d", c.stored.Add(1)), value)
		return err
	}
	key := storeOnlyKey(r.URL.Path)
	for {
		var expect int64
		if v, ok := c.revs.Load(key); ok {
			expect = v.(int64)
		}
		rev, err := c.store.Update(ctx, key, value, expect)
		if errors.Is(err, storage.ErrNotFound) {
			rev, err = c.store.Create(ctx, key, value)
		}
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrExists) {
			// Written meanwhile by another request: from the store's
			// revision, as kapi starts again from it.
			kv, gerr := c.store.Get(ctx, key, 0)
			if gerr != nil {
				return gerr
			}
			c.revs.Store(key, kv.ModRevision)
			continue
		}
		if err == nil {
			c.revs.Store(key, rev)
		}
		return err
	}
}

// storeOnlyKey is where kapi keeps the object a path names
// (/apis/GROUP/VERSION/namespaces/NS/RESOURCE/NAME is under
// /RESOURCE.GROUP/NS/NAME); any other path is under /store-only.
func storeOnlyKey(path string) string {
	f := strings.Split(strings.Trim(path, "/"), "/")
	if len(f) == 7 && f[0] == "apis" && f[3] == "namespaces" {
		return "/" + f[5] + "." + f[1] + "/" + f[4] + "/" + f[6]
	}
	return "/store-only" + path
}

// wrote tells the watchers of one more write.
func (c *ceiling) wrote() {
	c.evMu.Lock()
	c.written++
	close(c.changed)
	c.changed = make(chan struct{})
	c.evMu.Unlock()
}

func (c *ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ceilingPath+"config" {
		var cfg ceilingConfig
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil || (cfg.Response == nil && cfg.Initial == nil) {
			http.Error(w, fmt.Sprintf("bad config: %v", err), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.cfg = cfg
		c.mu.Unlock()
		return
	}
	c.mu.RLock()
	cfg := c.cfg
	c.mu.RUnlock()
	q := r.URL.Query()
	watch := q.Get("watch") == "true" || q.Get("watch") == "1"
	if watch && cfg.Initial != nil && q.Get("sendInitialEvents") == "true" {
		streamInitial(w, r, cfg.WatchHeader, cfg.Initial)
		return
	}
	if cfg.Response == nil {
		http.Error(w, "the ceiling is not configured", http.StatusServiceUnavailable)
		return
	}
	if watch && cfg.Frame != nil {
		c.watch(w, r, cfg.WatchHeader, cfg.Frame)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	if c.etcd != nil {
		if err := c.etcd.do(r, cfg.Response.Body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if c.store != nil && r.Method != http.MethodGet {
		if err := c.storeWrite(r, cfg.Response.Body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	h := w.Header()
	for k, v := range cfg.Response.Header {
		h[k] = v
	}
	w.WriteHeader(cfg.Response.Code)
	_, _ = w.Write(cfg.Response.Body)
	if cfg.Frame != nil && r.Method != http.MethodGet {
		// A write: acknowledged first, then fanned out, as kapi does.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		c.wrote()
	}
}

func (c *ceiling) watch(w http.ResponseWriter, r *http.Request, header http.Header, frame []byte) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no flusher", http.StatusInternalServerError)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	// The writes after the client sees the headers are its events.
	c.evMu.Lock()
	seen, changed := c.written, c.changed
	w.WriteHeader(http.StatusOK)
	f.Flush()
	c.evMu.Unlock()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
		c.evMu.Lock()
		n := c.written - seen
		seen, changed = c.written, c.changed
		c.evMu.Unlock()
		for range n {
			if _, err := w.Write(frame); err != nil {
				return
			}
		}
		f.Flush()
	}
}

// streamInitial answers a streaming list: the recorded initial events and
// their closing bookmark, one write, then nothing until the client leaves.
func streamInitial(w http.ResponseWriter, r *http.Request, header http.Header, initial []byte) {
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(initial); err != nil {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-r.Context().Done()
}

// configureCeiling sends cfg to the ceiling at base.
func configureCeiling(ctx context.Context, base string, cfg ceilingConfig) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	c := &http.Client{}
	defer c.CloseIdleConnections()
	_, _, _, err = send(ctx, c, "PUT", base+ceilingPath+"config", http.Header{"Content-Type": {"application/json"}}, body, false)
	return err
}

// equalResponses tells whether the ceiling at base answers as rec does
// (status, body, and the headers kapi set), for a test and a sanity check.
func checkCeiling(ctx context.Context, base string, rec *recorded) error {
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer c.CloseIdleConnections()
	got, err := record(ctx, c, "GET", base+"/", nil, nil)
	if err != nil {
		return err
	}
	if got.Code != rec.Code || !bytes.Equal(got.Body, rec.Body) {
		return fmt.Errorf("the ceiling answers %d with %d bytes, kapi %d with %d", got.Code, len(got.Body), rec.Code, len(rec.Body))
	}
	for k, v := range rec.Header {
		if fmt.Sprint(got.Header[k]) != fmt.Sprint(v) {
			return fmt.Errorf("the ceiling's header %s is %q, kapi's %q", k, got.Header[k], v)
		}
	}
	return nil
}
