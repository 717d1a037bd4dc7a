package robustness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/postgres/pgtest"
)

// backend is the store every replica of a run shares.
type backend interface {
	// store opens a new client of the shared store, closed when the test
	// ends: one per replica start, and the oracle's.
	store(t *testing.T) storage.Interface
	// disrupt kills parts of the store and starts them again while ctx
	// lasts, as sc asks; it returns with the store whole again.
	disrupt(ctx context.Context, t *testing.T, sc scenario)
}

// etcdBackend is an etcd cluster of sc.members members, with the run's
// keys under a prefix of their own.
func etcdBackend(t *testing.T, sc scenario) backend {
	return &etcdRun{cluster: startCluster(t, max(sc.members, 1)), prefix: fmt.Sprintf("/robustness/%d/", time.Now().UnixNano())}
}

type etcdRun struct {
	*cluster
	prefix string
}

func (e *etcdRun) store(t *testing.T) storage.Interface { return e.cluster.store(t, e.prefix) }

// disrupt kills the leader a third of the way in and starts it again
// halfway, if sc asks and there are several members.
func (e *etcdRun) disrupt(ctx context.Context, t *testing.T, sc scenario) {
	if !sc.killMember || len(e.members) < 2 {
		return
	}
	sleep(ctx, sc.duration/3)
	if i := e.leader(); i >= 0 {
		t.Logf("killing etcd member %s, the leader", e.members[i].name)
		e.members[i].stop()
		sleep(ctx, sc.duration/6)
		if err := e.members[i].start(); err != nil {
			t.Errorf("restarting %s: %v", e.members[i].name, err)
		}
	}
}

// postgresBackend is a throwaway PostgreSQL cluster of the test's own,
// which it may crash: the run's tables in a schema of their own. Without
// PostgreSQL the test skips, except in CI.
func postgresBackend(t *testing.T, sc scenario) backend {
	c, err := pgtest.Start()
	if err != nil {
		if errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("CI") == "" {
			t.Skipf("no PostgreSQL to test on: %v (install postgresql)", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Log(err)
		}
	})
	p := &postgresRun{cluster: c, schema: fmt.Sprintf("robustness_%d", time.Now().UnixNano())}
	if sc.rotateWriter {
		// A lease short beside the writer's turns, so that each turn
		// takes it over.
		p.opts = append(p.opts, postgres.WithWriterLease(100*time.Millisecond))
	}
	return p
}

type postgresRun struct {
	cluster *pgtest.Cluster
	schema  string
	opts    []postgres.Option
	down    atomic.Int64 // how many times it was crashed
}

func (p *postgresRun) store(t *testing.T) storage.Interface {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, p.cluster.URL(), append([]postgres.Option{postgres.WithSchema(p.schema)}, p.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// disrupt, if sc.killStore, kills the postmaster with SIGKILL at 3/10 of
// the run and stops PostgreSQL with pg_ctl stop -m immediate at 6/10, each
// time starting it again a tenth of the run later (replica A is stopped
// and started before: from 1/10 to 2/10).
func (p *postgresRun) disrupt(ctx context.Context, t *testing.T, sc scenario) {
	if !sc.killStore {
		return
	}
	for i, how := range []string{"kill", "immediate"} {
		sleep(ctx, sc.duration*time.Duration(3-i)/10)
		var err error
		if how == "kill" {
			t.Log("killing PostgreSQL's postmaster (SIGKILL)")
			err = p.cluster.Kill()
		} else {
			t.Log("stopping PostgreSQL: pg_ctl stop -m immediate")
			err = p.cluster.Stop("immediate")
		}
		if err != nil {
			t.Errorf("crashing PostgreSQL: %v", err)
			return
		}
		p.down.Add(1)
		sleep(ctx, sc.duration/10)
		if how == "kill" {
			err = p.cluster.StartAfterKill()
		} else {
			err = p.cluster.Start()
		}
		if err != nil {
			t.Errorf("starting PostgreSQL again: %v", err)
			return
		}
		t.Log("PostgreSQL started again")
	}
}

// revisionWhenUp is the store's revision, asked until the store answers.
func revisionWhenUp(t *testing.T, s storage.Interface) (int64, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rev, err := s.Revision(t.Context())
		if err == nil || time.Now().After(deadline) {
			return rev, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
