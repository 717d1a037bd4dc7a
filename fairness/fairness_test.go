package fairness_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/fairness"
)

// oneLevel is a configuration of one level of the given seats and queue
// length, a flow per user.
func oneLevel(t *testing.T, seats, queue int) *fairness.Controller {
	t.Helper()
	c, err := fairness.New(fairness.Config{
		Schemas: []fairness.Schema{
			{Name: "masters", Level: "exempt", Match: fairness.InGroup("system:masters")},
			{Name: "all", Level: "all", Match: func(fairness.Request) bool { return true }},
		},
		Levels: []fairness.Level{{Name: "exempt", Exempt: true}, {Name: "all", Seats: seats, QueueLength: queue, Flows: 4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dispatcher records the order in which queued requests are admitted.
type dispatcher struct {
	mu    sync.Mutex
	order []string
	dones map[string]func()
}

// enqueue starts a request of user named name, and returns once it waits
// (or, when wait is false, once it was started).
func (d *dispatcher) enqueue(t *testing.T, c *fairness.Controller, user, name string, wait bool) {
	t.Helper()
	before := c.Waiting()
	go func() {
		_, done, err := c.Admit(context.Background(), fairness.Request{User: user})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		d.mu.Lock()
		d.order = append(d.order, name)
		d.dones[name] = done
		d.mu.Unlock()
	}()
	if !wait {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); c.Waiting() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s does not wait", name)
		}
	}
}

// waitFor returns once n requests have been admitted.
func (d *dispatcher) waitFor(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		d.mu.Lock()
		got := len(d.order)
		d.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d requests admitted", n)
}

func (d *dispatcher) finish(name string) {
	d.mu.Lock()
	done := d.dones[name]
	d.mu.Unlock()
	done()
}

func TestFlowsTakeTurns(t *testing.T) {
	c := oneLevel(t, 1, 10)
	d := &dispatcher{dones: map[string]func(){}}
	d.enqueue(t, c, "flooder", "f0", false)
	d.waitFor(t, 1)
	for _, n := range []string{"f1", "f2", "f3"} {
		d.enqueue(t, c, "flooder", n, true)
	}
	d.enqueue(t, c, "quiet", "q1", true)
	for i, n := range []string{"f0", "f1", "q1", "f2"} {
		d.finish(n)
		d.waitFor(t, i+2)
	}
	want := []string{"f0", "f1", "q1", "f2", "f3"}
	if !slices.Equal(d.order, want) {
		t.Errorf("admitted in the order %v, want %v", d.order, want)
	}
}

func TestFlowWithFewestSeatsFirst(t *testing.T) {
	c := oneLevel(t, 2, 10)
	d := &dispatcher{dones: map[string]func(){}}
	d.enqueue(t, c, "flooder", "f0", false)
	d.enqueue(t, c, "flooder", "f1", false)
	d.waitFor(t, 2)
	d.enqueue(t, c, "flooder", "f2", true)
	d.enqueue(t, c, "quiet", "q1", true)
	d.finish("f0") // flooder still holds a seat: quiet goes first
	d.waitFor(t, 3)
	if got := d.order[2]; got != "q1" {
		t.Errorf("the freed seat went to %s, want q1 (order %v)", got, d.order)
	}
}

func TestBoundedQueues(t *testing.T) {
	c := oneLevel(t, 1, 1)
	_, done, err := c.Admit(context.Background(), fairness.Request{User: "flooder"})
	if err != nil {
		t.Fatal(err)
	}
	d := &dispatcher{dones: map[string]func(){}}
	d.enqueue(t, c, "flooder", "f1", true)
	if _, _, err := c.Admit(context.Background(), fairness.Request{User: "flooder"}); !errors.Is(err, fairness.ErrRejected) {
		t.Errorf("over a full queue: %v, want ErrRejected", err)
	}
	t.Run("another flow has a queue of its own", func(t *testing.T) {
		d.enqueue(t, c, "quiet", "q1", true)
	})
	t.Run("exempt requests are not queued", func(t *testing.T) {
		dec, done, err := c.Admit(context.Background(), fairness.Request{User: "admin", Groups: []string{"system:masters"}})
		if err != nil || !dec.Exempt || dec.PriorityLevel != "exempt" {
			t.Fatalf("admin: %+v, %v", dec, err)
		}
		done()
	})
	t.Run("a wait ends with the context's deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
		defer cancel()
		// A quarter of the 40ms is its wait; it is rejected, not served.
		if _, _, err := c.Admit(ctx, fairness.Request{User: "patient"}); !errors.Is(err, fairness.ErrRejected) {
			t.Errorf("after its wait: %v, want ErrRejected", err)
		}
	})
	done()
	d.waitFor(t, 1)
	d.finish(d.order[0])
	d.waitFor(t, 2)
	d.finish(d.order[1])
}

func TestConfigErrors(t *testing.T) {
	for name, c := range map[string]fairness.Config{
		"unknown level": {Schemas: []fairness.Schema{{Name: "s", Level: "nope", Match: func(fairness.Request) bool { return true }}}},
		"no match":      {Schemas: []fairness.Schema{{Name: "s", Level: "l"}}, Levels: []fairness.Level{{Name: "l", Exempt: true}}},
		"no seats":      {Levels: []fairness.Level{{Name: "l", Seats: 0, QueueLength: 1}}},
		"twice":         {Levels: []fairness.Level{{Name: "l", Exempt: true}, {Name: "l", Exempt: true}}},
	} {
		if _, err := fairness.New(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := fairness.New(fairness.Default(600)); err != nil {
		t.Errorf("Default: %v", err)
	}
}

func TestFlowsByNamespace(t *testing.T) {
	c, err := fairness.New(fairness.Config{
		Schemas: []fairness.Schema{{Name: "tenants", Level: "l", Match: func(fairness.Request) bool { return true }, Distinguisher: fairness.ByUserNamespace}},
		Levels:  []fairness.Level{{Name: "l", Seats: 1, QueueLength: 1, Flows: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, done, err := c.Admit(context.Background(), fairness.Request{User: "alice", Namespace: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Flow != "tenants/alice/a" {
		t.Errorf("flow %q, want tenants/alice/a", d.Flow)
	}
	w := &dispatcher{dones: map[string]func(){}}
	w.enqueue(t, c, "alice", "cluster-scoped", true) // namespace "": a flow of its own
	w2 := make(chan error, 1)
	go func() {
		_, done, err := c.Admit(context.Background(), fairness.Request{User: "alice", Namespace: "b"})
		if err == nil {
			done()
		}
		w2 <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); c.Waiting() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("alice's request in namespace b does not wait in a queue of its own")
		}
	}
	if _, _, err := c.Admit(context.Background(), fairness.Request{User: "alice", Namespace: "c"}); !errors.Is(err, fairness.ErrRejected) {
		t.Errorf("a third flow over Flows 2: %v, want ErrRejected", err)
	}
	done()
	w.waitFor(t, 1)
	w.finish(w.order[0])
	if err := <-w2; err != nil {
		t.Error(err)
	}
}
