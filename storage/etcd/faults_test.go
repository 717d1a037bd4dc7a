package etcd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// The faults of a real etcd, not injected ones: each must reach the client
// as the row of the README's table it belongs to.

// member is a one-member etcd of a test's own, on fixed loopback ports so
// that it can be stopped and started again with its data.
type member struct {
	t      testing.TB
	dir    string
	client url.URL
	peer   url.URL
	tweak  func(*embed.Config)
	etcd   *embed.Etcd
}

func freeURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

func newMember(t testing.TB, tweak func(*embed.Config)) *member {
	m := &member{t: t, dir: t.TempDir(), client: freeURL(t), peer: freeURL(t), tweak: tweak}
	m.start()
	t.Cleanup(m.stop)
	return m
}

func (m *member) start() {
	m.t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = m.dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.client}, []url.URL{m.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peer}, []url.URL{m.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.TickMs, cfg.ElectionMs = 10, 50
	if m.tweak != nil {
		m.tweak(cfg)
	}
	e, err := startReady(cfg)
	if err != nil {
		m.t.Fatal(err)
	}
	m.etcd = e
}

// startReady starts the member cfg describes and waits until it serves,
// a minute at most (a member of several needs a quorum up).
func startReady(cfg *embed.Config) (*embed.Etcd, error) {
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(time.Minute):
		e.Close()
		return nil, errors.New("etcd not ready after a minute")
	}
}

func (m *member) stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

// replicaOn serves the widgets API on a store of its own on m, and
// returns its URL.
func replicaOn(t *testing.T, m *member) string {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client.Host}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	store, err := etcd.New(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return serveWidgets(t, store).URL
}

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

type answer struct {
	code       int
	retryAfter string
	status     kapi.Status
	body       string
}

func send(t *testing.T, method, url, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(data)}
	if resp.StatusCode >= 300 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(data, &a.status)
	}
	return a
}

func widgetJSON(name, color string, padding int) string {
	labels := ""
	if padding > 0 {
		labels = fmt.Sprintf(`,"annotations":{"pad":%q}`, strings.Repeat("x", padding))
	}
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q%s},"spec":{"color":%q}}`, name, labels, color)
}

func waitReadyz(t *testing.T, url string, want int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := send(t, http.MethodGet, url+"/readyz?verbose", "")
		if a.code == want {
			return a.body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz is %d %q after 30s, want %d", a.code, a.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEtcdRefusesTooLarge: etcd's "request is too large" is 413
// RequestEntityTooLarge, not 500, and nothing is written.
func TestEtcdRefusesTooLarge(t *testing.T) {
	m := newMember(t, func(c *embed.Config) { c.MaxRequestBytes = 64 << 10 })
	url := replicaOn(t, m)
	waitReadyz(t, url, http.StatusOK)
	a := send(t, http.MethodPost, url+widgetsPath, widgetJSON("big", "Red", 100<<10))
	if a.code != http.StatusRequestEntityTooLarge || a.status.Reason != kapi.StatusReasonRequestEntityTooLarge || !strings.Contains(a.status.Message, "request is too large") {
		t.Errorf("a write etcd refuses for its size: %d %s: %s", a.code, a.status.Reason, a.body)
	}
	if a.retryAfter != "" {
		t.Errorf("Retry-After %q: the same write will be refused again", a.retryAfter)
	}
	if a := send(t, http.MethodGet, url+widgetsPath+"/big", ""); a.code != http.StatusNotFound {
		t.Errorf("the refused widget: %d, want 404", a.code)
	}
}

// TestEtcdOutOfSpace: etcd's "mvcc: database space exceeded" is 507, with
// a message naming it, and reads go on.
func TestEtcdOutOfSpace(t *testing.T) {
	m := newMember(t, func(c *embed.Config) { c.QuotaBackendBytes = 1 << 20 })
	url := replicaOn(t, m)
	waitReadyz(t, url, http.StatusOK)
	var a answer
	for i := 0; i < 100; i++ {
		a = send(t, http.MethodPost, url+widgetsPath, widgetJSON(fmt.Sprintf("w%d", i), "Red", 100<<10))
		if a.code != http.StatusCreated {
			break
		}
	}
	if a.code != http.StatusInsufficientStorage || a.status.Reason != kapi.StatusReasonInsufficientStorage || !strings.Contains(a.status.Message, "database space exceeded") {
		t.Fatalf("a write to a full etcd: %d %s: %s", a.code, a.status.Reason, a.body)
	}
	if a := send(t, http.MethodGet, url+widgetsPath+"?limit=1", ""); a.code != http.StatusOK {
		t.Errorf("a list from a full etcd: %d %s", a.code, a.body)
	}
}

// TestEtcdStopped: while the only member is down /readyz fails and a write
// is refused at once with 503 and Retry-After, not applied; after the
// member is back both recover, and the watch cache with them.
func TestEtcdStopped(t *testing.T) {
	m := newMember(t, nil)
	url := replicaOn(t, m)
	waitReadyz(t, url, http.StatusOK)
	if a := send(t, http.MethodPost, url+widgetsPath, widgetJSON("before", "Red", 0)); a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	m.stop()
	body := waitReadyz(t, url, http.StatusServiceUnavailable)
	if !strings.Contains(body, "[-]storage failed: reason withheld\n") || !strings.HasSuffix(body, "readyz check failed\n") {
		t.Errorf("/readyz with etcd down: %q", body)
	}
	// The store is known down (readyz said so): the write is refused at
	// once, before it is sent, so its outcome is known.
	a := send(t, http.MethodPost, url+widgetsPath+"?timeout=1s", widgetJSON("during", "Red", 0))
	if a.code != http.StatusServiceUnavailable || a.retryAfter != "1" || strings.Contains(a.status.Message, "may or may not") {
		t.Errorf("a write with etcd known down: %d Retry-After %q: %s, want 503 with Retry-After 1, not applied", a.code, a.retryAfter, a.body)
	}
	t.Logf("a write with etcd down: %d %s", a.code, a.status.Message)
	began := time.Now()
	m.start()
	waitReadyz(t, url, http.StatusOK)
	t.Logf("ready %v after etcd restarted", time.Since(began))
	if a := send(t, http.MethodPost, url+widgetsPath, widgetJSON("after", "Red", 0)); a.code != http.StatusCreated {
		t.Fatalf("create after etcd is back: %d %s", a.code, a.body)
	}
	// The watch cache followed: a consistent list has the new widget.
	a = send(t, http.MethodGet, url+widgetsPath, "")
	if a.code != http.StatusOK || !strings.Contains(a.body, `"name":"after"`) || !strings.Contains(a.body, `"name":"before"`) {
		t.Errorf("list after etcd is back: %d %s", a.code, a.body)
	}
}
