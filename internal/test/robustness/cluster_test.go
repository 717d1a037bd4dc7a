package robustness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// cluster is an etcd cluster of this process, on fixed loopback ports so
// that a member can be killed and started again with its data.
type cluster struct {
	t       *testing.T
	members []*member
}

type member struct {
	name         string
	dir          string
	client, peer url.URL
	initial      string // the --initial-cluster of every member
	etcd         *embed.Etcd
}

func freeURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// startCluster starts size etcd members on loopback ports chosen free.
// A port chosen is released until its member binds it, so another process
// may take it meanwhile (CI runs test binaries side by side): the cluster
// is then started again on other ports, in fresh directories.
func startCluster(t *testing.T, size int) *cluster {
	for attempt := 1; ; attempt++ {
		c, err := tryCluster(t, size)
		if err == nil {
			t.Cleanup(c.stop)
			return c
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("starting the cluster again on other ports: %v", err)
	}
}

// tryCluster starts a cluster, or stops what it started and says why not.
func tryCluster(t *testing.T, size int) (*cluster, error) {
	c := &cluster{t: t}
	var initial []string
	for i := range size {
		m := &member{name: fmt.Sprintf("m%d", i), dir: t.TempDir(), client: freeURL(t), peer: freeURL(t)}
		initial = append(initial, m.name+"="+m.peer.String())
		c.members = append(c.members, m)
	}
	var wg sync.WaitGroup
	errs := make([]error, size)
	for i, m := range c.members {
		m.initial = strings.Join(initial, ",")
		wg.Go(func() { errs[i] = m.start() }) // a member waits for the others to elect
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) stop() {
	for _, m := range c.members {
		m.stop()
	}
}

func (m *member) start() error {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = m.dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.client}, []url.URL{m.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peer}, []url.URL{m.peer}
	cfg.InitialCluster = m.initial
	cfg.TickMs, cfg.ElectionMs = 10, 100
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return err
	case <-time.After(60 * time.Second):
		e.Close()
		return errors.New("etcd member not ready after 60s")
	}
	m.etcd = e
	return nil
}

// stop kills the member: its listeners close at once, as with kill -9,
// though its files are closed cleanly.
func (m *member) stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

func (c *cluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client.Host)
	}
	return eps
}

// leader is the index of the member that leads, or -1.
func (c *cluster) leader() int {
	for i, m := range c.members {
		if m.etcd != nil && m.etcd.Server.Leader() == m.etcd.Server.MemberID() {
			return i
		}
	}
	return -1
}

func (c *cluster) store(t *testing.T, prefix string) *etcd.Store {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := etcd.New(ctx, client, etcd.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// replica is one kapi server of the widgets API, on an address it keeps
// across a stop and a start.
type replica struct {
	t     *testing.T
	addr  string
	store func(t *testing.T) storage.Interface

	mu  sync.Mutex
	srv *apiserver.Server
	hs  *http.Server
}

func startReplica(t *testing.T, store func(t *testing.T) storage.Interface) *replica {
	r := &replica{t: t, addr: freeURL(t).Host, store: store}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) URL() string { return "http://" + r.addr }

func (r *replica) start() {
	r.t.Helper()
	srv, err := apiserver.New(apiserver.WithStorage(r.store(r.t)), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		r.t.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		r.t.Fatal(err)
	}
	var l net.Listener
	for range 100 { // the port may linger a moment after the last stop
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(l) }()
	r.mu.Lock()
	r.srv, r.hs = srv, hs
	r.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(r.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("replica %s not ready after 30s", r.addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop closes the replica as a process being stopped would: its watches
// end, requests that arrive are refused, its connections close.
func (r *replica) stop() {
	r.mu.Lock()
	srv, hs := r.srv, r.hs
	r.srv, r.hs = nil, nil
	r.mu.Unlock()
	if srv == nil {
		return
	}
	_ = srv.Close()
	_ = hs.Close()
}
