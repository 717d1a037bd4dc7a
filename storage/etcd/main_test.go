package etcd_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage/etcd"
)

// The package's tests share one etcd server, started in this process on
// loopback ports the kernel picks, with its data in a temporary directory:
// nothing to install, nothing left behind. Each test's stores live under a
// prefix of their own.

// The server starts at its first use, inside m.Run rather than before it:
// its goroutines read os.Stderr (logrus.New, in etcd's websocket proxy),
// which m.Run sets under go test -json, a data race under -race.
var (
	etcdOnce    sync.Once
	etcdStarted *embed.Etcd
)

// etcdServer is the embedded server, for tests of an in-process client.
func etcdServer() *embed.Etcd {
	etcdOnce.Do(func() {
		server, err := startEtcd()
		if err != nil {
			panic(fmt.Sprintf("starting etcd: %v", err))
		}
		etcdStarted = server
	})
	return etcdStarted
}

// etcdEndpoint is the embedded server's client URL.
func etcdEndpoint() string { return etcdServer().Clients[0].Addr().String() }

func TestMain(m *testing.M) {
	code := m.Run()
	if etcdStarted != nil {
		etcdStarted.Close()
	}
	os.Exit(code)
}

// startEtcd starts a one-member etcd on loopback. It fsyncs as a real one
// does, so that the benchmarks measure what a deployment pays.
func startEtcd() (*embed.Etcd, error) {
	dir, err := os.MkdirTemp("", "kapi-etcd-")
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// Port 0: the kernel picks free ports; the listeners say which.
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{local}, []url.URL{local}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{local}, []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// A lone member elects itself after one election timeout: keep it short.
	cfg.TickMs, cfg.ElectionMs = 10, 50
	server, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-server.Server.ReadyNotify():
	case err := <-server.Err():
		server.Close()
		os.RemoveAll(dir)
		return nil, err
	case <-time.After(30 * time.Second):
		server.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcd not ready after 30s")
	}
	// Remove the directory once the server has stopped.
	go func() {
		<-server.Server.StopNotify()
		os.RemoveAll(dir)
	}()
	return server, nil
}

// mustClient returns a client of the test server, closed when the test
// ends.
func mustClient(t testing.TB) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

var prefixes atomic.Int64

// freshPrefix returns a prefix no other test uses.
func freshPrefix() string { return fmt.Sprintf("/test/%d/", prefixes.Add(1)) }

// mustStore returns a store under prefix, on a client of its own, closed
// when the test ends.
func mustStore(t testing.TB, prefix string) *etcd.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := etcd.New(ctx, mustClient(t), etcd.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
