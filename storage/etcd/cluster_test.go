package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// cluster is a three-member etcd of a test's own, on fixed loopback ports,
// whose members can be stopped and started again with their data.
type cluster struct {
	t       testing.TB
	members []*clusterMember
}

type clusterMember struct {
	name         string
	dir          string
	client, peer url.URL
	etcd         *embed.Etcd
}

func newCluster(t testing.TB, size int) *cluster {
	t.Helper()
	c := &cluster{t: t}
	for i := range size {
		m := &clusterMember{name: fmt.Sprintf("m%d", i), dir: t.TempDir(), client: freeURL(t), peer: freeURL(t)}
		c.members = append(c.members, m)
	}
	var wg sync.WaitGroup
	errs := make([]error, size)
	for i := range c.members {
		wg.Go(func() { errs[i] = c.start(i, c.initial()) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for i := range c.members {
			c.stop(i)
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cluster) initial() string {
	var initial []string
	for _, m := range c.members {
		initial = append(initial, m.name+"="+m.peer.String())
	}
	return strings.Join(initial, ",")
}

func (c *cluster) start(i int, initial string) error {
	m := c.members[i]
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = m.name, m.dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.client}, []url.URL{m.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peer}, []url.URL{m.peer}
	cfg.InitialCluster = initial
	cfg.TickMs, cfg.ElectionMs = 10, 100
	e, err := startReady(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	m.etcd = e
	return nil
}

// restart starts member i again, with its data.
func (c *cluster) restart(i int) {
	c.t.Helper()
	if err := c.start(i, c.initial()); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) stop(i int) {
	if m := c.members[i]; m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

// client is a client of the given members, closed when the test ends.
func (c *cluster) client(members ...int) *clientv3.Client {
	c.t.Helper()
	var endpoints []string
	for _, i := range members {
		endpoints = append(endpoints, c.members[i].client.Host)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { client.Close() })
	return client
}

// TestMemberStopped: with one member of three stopped in turn, the store's
// writes go on through the others, and its watch goes on too: every
// create once, in order, no error event, whichever member its stream and
// its transactions were on.
func TestMemberStopped(t *testing.T) {
	c := newCluster(t, 3)
	ctx := t.Context()
	s, err := etcd.New(ctx, c.client(0, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Watch(ctx, "/", rev)
	if err != nil {
		t.Fatal(err)
	}
	// create retries what two members of three must get through: a
	// leader's election, a write sent to the member as it stopped (whose
	// outcome the next try tells).
	create := func(key string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		unknown := false
		for {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := s.Create(wctx, key, []byte(key))
			cancel()
			switch {
			case err == nil, unknown && errors.Is(err, storage.ErrExists):
				return
			case errors.Is(err, storage.ErrOutcomeUnknown):
				unknown = true
			case !errors.Is(err, storage.ErrUnavailable) && !errors.Is(err, storage.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("create %s: %v", key, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("create %s with two members of three up: %v", key, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	n := 0
	write := func() {
		n++
		create(fmt.Sprintf("/k%02d", n))
	}
	write()
	for i := range c.members {
		c.stop(i)
		write()
		write()
		c.restart(i)
		write()
	}
	list, err := s.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, item := range list.Items {
		select {
		case ev := <-events:
			if ev.Err != nil || ev.Key != item.Key || ev.ModRevision != item.ModRevision {
				t.Fatalf("event %d: %+v, want the create of %s at %d", i, ev, item.Key, item.ModRevision)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no event %d (the create of %s at %d) 30 s after it", i, item.Key, item.ModRevision)
		}
	}
}

// TestCompactedWhileAway: a watch whose member stops, and which the
// cluster compacts past while it is away, ends with ErrExpired when it
// comes back, or delivers what it missed: it never goes on past a gap.
func TestCompactedWhileAway(t *testing.T) {
	c := newCluster(t, 3)
	ctx := t.Context()
	watched, err := etcd.New(ctx, c.client(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watched.Close() })
	other, err := etcd.New(ctx, c.client(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	rev, err := watched.Create(ctx, "/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	events, err := watched.Watch(ctx, "/", rev-1)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-events; ev.Err != nil || ev.ModRevision != rev {
		t.Fatalf("event %+v, want the create of /a at %d", ev, rev)
	}
	c.stop(0)
	var missed []int64
	for _, key := range []string{"/b", "/c"} {
		rev, err := other.Create(ctx, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		missed = append(missed, rev)
	}
	if err := other.Compact(ctx, missed[len(missed)-1]); err != nil {
		t.Fatal(err)
	}
	c.restart(0)
	for i, rev := range missed {
		select {
		case ev, ok := <-events:
			switch {
			case !ok:
				t.Fatal("the watch ended without an error event")
			case errors.Is(ev.Err, storage.ErrExpired):
				return
			case ev.Err != nil || ev.ModRevision != rev:
				t.Fatalf("event %d after the compaction: %+v, want the create at %d or ErrExpired", i, ev, rev)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("nothing 30 s after the member came back, want the create at %d or ErrExpired", rev)
		}
	}
}
