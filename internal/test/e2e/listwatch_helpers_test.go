package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// switchProxy is a reverse proxy in front of a kapi server that records every
// request (with the start of each response body), can hold new requests at a
// gate, and can switch to another server. It lets a test cut a client's
// watch, keep its next request waiting, and answer it from another server.
type switchProxy struct {
	URL string

	mu     sync.Mutex
	target *url.URL
	gate   chan struct{} // closed while requests may pass
	log    []*proxiedRequest

	transport *http.Transport
}

// proxiedRequest is one request that went through (or waits at) the proxy.
type proxiedRequest struct {
	Method string
	URL    string // path and query
	Status int    // 0 until the response header arrived
	Target string // the server that answered
	body   bytes.Buffer
	held   bool // it waited at the closed gate
	done   bool // the response body has ended
}

func (r *proxiedRequest) String() string {
	s := fmt.Sprintf("%s %s -> %d", r.Method, r.URL, r.Status)
	if r.held {
		s += " (held at the gate)"
	}
	if r.Target != "" {
		s += " from " + r.Target
	}
	return s
}

const proxiedBodyLimit = 64 << 10

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	p := &switchProxy{target: u, gate: open, transport: &http.Transport{}}
	hs := httptest.NewServer(p)
	p.URL = hs.URL
	t.Cleanup(func() {
		p.resume()
		hs.CloseClientConnections()
		hs.Close()
		p.transport.CloseIdleConnections()
	})
	return p
}

func (p *switchProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	entry := &proxiedRequest{Method: r.Method, URL: r.URL.RequestURI()}
	p.mu.Lock()
	gate := p.gate
	select {
	case <-gate:
	default:
		entry.held = true
	}
	p.log = append(p.log, entry)
	p.mu.Unlock()

	select {
	case <-gate:
	case <-r.Context().Done():
		return
	}
	p.mu.Lock()
	target := p.target
	entry.Target = target.Host
	p.mu.Unlock()

	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		FlushInterval: -1, // watch events go through at once
		Transport:     p.transport,
		ModifyResponse: func(resp *http.Response) error {
			p.mu.Lock()
			entry.Status = resp.StatusCode
			p.mu.Unlock()
			resp.Body = &teeBody{ReadCloser: resp.Body, p: p, entry: entry}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.mu.Lock()
			entry.Status = http.StatusBadGateway
			fmt.Fprintf(&entry.body, "proxy: %v", err)
			entry.done = true
			p.mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}

// teeBody keeps the start of a response body in the request's log entry.
type teeBody struct {
	io.ReadCloser
	p     *switchProxy
	entry *proxiedRequest
}

func (b *teeBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.p.mu.Lock()
	if room := proxiedBodyLimit - b.entry.body.Len(); room > 0 {
		b.entry.body.Write(buf[:min(n, room)])
	}
	if err != nil {
		b.entry.done = true
	}
	b.p.mu.Unlock()
	return n, err
}

func (b *teeBody) Close() error {
	b.p.mu.Lock()
	b.entry.done = true
	b.p.mu.Unlock()
	return b.ReadCloser.Close()
}

// pause makes new requests wait at the gate until resume.
func (p *switchProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default:
	}
}

// resume lets the waiting and the new requests through.
func (p *switchProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// switchTo sends the requests that pass the gate from now on to target.
func (p *switchProxy) switchTo(t *testing.T, target string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = u
}

// proxiedSnapshot is a copy of one log entry, safe to read.
type proxiedSnapshot struct {
	Index  int
	Method string
	URL    string
	Status int
	Held   bool
	Done   bool
	Body   string
	Query  url.Values
	Path   string
}

func (p *switchProxy) requests() []proxiedSnapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]proxiedSnapshot, len(p.log))
	for i, e := range p.log {
		u, _ := url.Parse(e.URL)
		out[i] = proxiedSnapshot{Index: i, Method: e.Method, URL: e.URL, Status: e.Status, Held: e.held, Done: e.done,
			Body: e.body.String(), Query: u.Query(), Path: u.Path}
	}
	return out
}

func (p *switchProxy) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for i, e := range p.log {
		fmt.Fprintf(&b, "  %d. %s\n", i, e)
	}
	return b.String()
}

// proxyServer is a *server whose URL is the proxy's, for the helpers that
// only use the URL (dynamicClient, startInformer, newKubectl).
func (p *switchProxy) server() *server { return &server{URL: p.URL} }

// isWatch reports whether a logged request is a watch.
func (s proxiedSnapshot) isWatch() bool {
	return s.Query.Get("watch") == "true" || s.Query.Get("watch") == "1"
}

// isStreamingList reports whether a logged request is a watch that asks for
// initial events (client-go's streaming list).
func (s proxiedSnapshot) isStreamingList() bool {
	return s.isWatch() && s.Query.Get("sendInitialEvents") == "true"
}

// isList reports whether a logged request is a plain LIST of widgets.
func (s proxiedSnapshot) isList() bool {
	return s.Method == http.MethodGet && !s.isWatch() && strings.HasSuffix(s.Path, "/widgets")
}

// eventually polls cond (every 20ms, at most timeout) and fails the test
// with what() if it never holds.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, what())
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting: %s", what())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// names returns the sorted names of a list's items.
func names(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetName())
	}
	sort.Strings(out)
	return out
}

// nsNames returns the sorted namespace/name of a list's items.
func nsNames(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	sort.Strings(out)
	return out
}

// labeledWidget returns a Widget with labels and a color.
func labeledWidget(name, color string, labels map[string]string) *unstructured.Unstructured {
	w := newWidget(name, map[string]any{"color": color})
	if len(labels) > 0 {
		w.SetLabels(labels)
	}
	return w
}

// nextWatchEvent returns the next event that is not a BOOKMARK, or fails the
// test after 10s or if the watch ends.
func nextWatchEvent(t *testing.T, w watch.Interface, want string) watch.Event {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended; want %s", want)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			return ev
		case <-timeout.C:
			t.Fatalf("no event within 10s; want %s", want)
		}
	}
}

// wantWatchEvent reads the next non-bookmark event and checks its type, name
// and (if not "") resourceVersion; it returns the event's object.
func wantWatchEvent(t *testing.T, w watch.Interface, typ watch.EventType, name, rv string) *unstructured.Unstructured {
	t.Helper()
	want := fmt.Sprintf("%s %s@%s", typ, name, rv)
	ev := nextWatchEvent(t, w, want)
	obj, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("event %s carries a %T (%v); want %s", ev.Type, ev.Object, ev.Object, want)
	}
	if ev.Type != typ || obj.GetName() != name || (rv != "" && obj.GetResourceVersion() != rv) {
		t.Fatalf("event %s %s@%s; want %s; object: %s", ev.Type, obj.GetName(), obj.GetResourceVersion(), want, mustJSON(obj.Object))
	}
	return obj
}

// filteredInformer is a dynamic informer on widgets in the test namespace
// whose list and watch carry the given selectors.
type filteredInformer struct {
	informer cache.SharedIndexInformer
	events   chan string
	log      *requestLog
}

// startFilteredInformer starts an informer with a label or field selector
// and waits (at most 30s) for it to sync. It checks that the requests carried
// the selector and that the informer listed as the mode says (streaming: a
// watch with sendInitialEvents=true answered 200 and no LIST; otherwise a
// LIST and no streaming watch).
func startFilteredInformer(t *testing.T, srv *server, streaming bool, labelSelector, fieldSelector string) *filteredInformer {
	t.Helper()
	fi := &filteredInformer{events: make(chan string, 100)}
	fi.informer, fi.log = startSelectingInformer(t, srv, streaming, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			fi.events <- "add " + obj.(*unstructured.Unstructured).GetName()
		},
		UpdateFunc: func(_, obj any) {
			fi.events <- "update " + obj.(*unstructured.Unstructured).GetName()
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				fi.events <- "delete-unknown " + d.Key
				return
			}
			fi.events <- "delete " + obj.(*unstructured.Unstructured).GetName()
		},
	}, labelSelector, fieldSelector)
	return fi
}

// storeState is name -> resourceVersion of what an informer's store holds.
func storeState(informer cache.SharedIndexInformer) map[string]string {
	out := map[string]string{}
	for _, obj := range informer.GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		out[u.GetName()] = u.GetResourceVersion()
	}
	return out
}

// waitStoreIs waits (at most 30s) until the informer's store holds exactly
// wantNames, each at the resourceVersion a fresh LIST (with the same
// selectors) reports, and the LIST itself returns exactly wantNames.
func waitStoreIs(t *testing.T, informer cache.SharedIndexInformer, widgets dynamic.ResourceInterface, opts metav1.ListOptions, wantNames ...string) {
	t.Helper()
	want := sorted(wantNames...)
	var diff string
	var listed []string
	eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		list, err := widgets.List(ctx, opts)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		listed = names(list.Items)
		server := map[string]string{}
		for _, it := range list.Items {
			server[it.GetName()] = it.GetResourceVersion()
		}
		diff = stateDiff(server, storeState(informer))
		return diff == "" && slices.Equal(listed, want)
	}, func() string {
		return fmt.Sprintf("the server lists %v for %+v (want %v) and the informer's store differs from it by:\n%s", listed, opts, want, diff)
	})
}

// pendingEvents returns the informer events already delivered and not yet
// read, without waiting.
func pendingEvents(events chan string) []string {
	var out []string
	for {
		select {
		case e := <-events:
			out = append(out, e)
		default:
			return out
		}
	}
}
