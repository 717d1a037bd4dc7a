package crd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/storage"
)

// fakeKinds records what a controller serves, and fails serving a kind
// with the error failing has for it.
type fakeKinds struct {
	served  map[string]kinds.Definition // by kind
	failing map[string]error
}

func newTestController(defs *definitions) (*controller, *fakeKinds) {
	k := &fakeKinds{served: map[string]kinds.Definition{}, failing: map[string]error{}}
	c := &controller{
		serve: func(d kinds.Definition) error {
			if err := k.failing[d.Kind]; err != nil {
				return err
			}
			k.served[d.Kind] = d
			return nil
		},
		remove: func(_, kind string) error { delete(k.served, kind); return nil },
		logger: slog.Default(), objects: defs, pending: map[string]bool{}, wake: make(chan struct{}, 1),
		served: map[string]servedKind{}, terminating: map[string]bool{},
	}
	return c, k
}

func addDefinition(defs *definitions, plural, kind string, short ...string) *CustomResourceDefinition {
	c := &CustomResourceDefinition{}
	c.Name, c.ResourceVersion = plural+".example.com", "1"
	c.Spec.Group = "example.com"
	c.Spec.Names = Names{Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List", ShortNames: short}
	c.Spec.Versions = []SpecVersion{{Name: "v1", Served: true, Storage: true}}
	defs.byName[c.Name] = c
	return c
}

func mustSync(t *testing.T, c *controller, name string) {
	t.Helper()
	if _, err := c.sync(context.Background(), name); err != nil {
		t.Fatalf("sync %s: %v", name, err)
	}
}

// A short name released by a change of another definition, not its
// deletion, goes to the definition that waits for it: the change's sync
// has the group looked at again, as kube-apiserver's naming controller
// requeues the group's definitions after each sync.
func TestNamingRequeuesGroupOnChange(t *testing.T) {
	defs := &definitions{byName: map[string]*CustomResourceDefinition{}}
	addDefinition(defs, "awidgets", "Widget", "wd")
	addDefinition(defs, "gadgets", "Gadget", "wd")
	c, _ := newTestController(defs)
	mustSync(t, c, "awidgets.example.com")
	mustSync(t, c, "gadgets.example.com")
	if cond := condition(defs.byName["gadgets.example.com"], NamesAccepted); cond == nil || cond.Status != kapi.ConditionFalse {
		t.Fatalf("gadgets: %+v", cond)
	}
	clear(c.pending)
	defs.byName["awidgets.example.com"].Spec.Names.ShortNames = []string{"wdg"}
	mustSync(t, c, "awidgets.example.com")
	if !c.pending["gadgets.example.com"] {
		t.Fatal("a definition of the group of one whose names changed is not looked at again")
	}
	mustSync(t, c, "gadgets.example.com")
	if cond := condition(defs.byName["gadgets.example.com"], NamesAccepted); cond == nil || cond.Status != kapi.ConditionTrue {
		t.Errorf("gadgets once widgets gave up wd: %+v", cond)
	}
	// A sync that changes no names has nothing looked at again.
	clear(c.pending)
	mustSync(t, c, "awidgets.example.com")
	if len(c.pending) > 0 {
		t.Errorf("looked at again after a sync that changed nothing: %v", c.pending)
	}
}

// A failure to serve a kind that is not the definition's fault is
// retried, with backoff, and not reported as NonStructuralSchema; a
// definition its kind cannot be served from is reported so, and not
// retried.
func TestServeFailures(t *testing.T) {
	defs := &definitions{byName: map[string]*CustomResourceDefinition{}}
	addDefinition(defs, "widgets", "Widget")
	c, k := newTestController(defs)
	k.failing["Widget"] = errors.New("the store is down")
	if _, err := c.sync(context.Background(), "widgets.example.com"); err == nil {
		t.Fatal("a failure to serve is not returned to be retried")
	}
	if cond := condition(defs.byName["widgets.example.com"], NonStructuralSchema); cond != nil {
		t.Errorf("a failure to serve is reported as %+v", cond)
	}
	var delays []time.Duration
	for range 3 {
		delays = append(delays, c.retryDelay("widgets.example.com", errors.New("down")))
	}
	if delays[0] != retryAfter || delays[1] != 2*retryAfter || delays[2] != 4*retryAfter {
		t.Errorf("retries after %v, want doubling from %v", delays, retryAfter)
	}
	for range 20 {
		delays[0] = c.retryDelay("widgets.example.com", errors.New("down"))
	}
	if delays[0] != maxRetryAfter {
		t.Errorf("retry after %v, want at most %v", delays[0], maxRetryAfter)
	}
	if d := c.retryDelay("widgets.example.com", fmt.Errorf("write: %w", storage.ErrConflict)); d != retryAfter {
		t.Errorf("retry after a conflict after %v, want %v", d, retryAfter)
	}

	k.failing["Widget"] = fmt.Errorf("%w: Widget v1: broken", kinds.ErrDefinition)
	mustSync(t, c, "widgets.example.com")
	if cond := condition(defs.byName["widgets.example.com"], NonStructuralSchema); cond == nil || cond.Status != kapi.ConditionTrue || cond.Reason != "Violations" {
		t.Errorf("a definition that cannot be served: %+v", cond)
	}
}

// A change of a definition's kind that cannot be served leaves the kind
// served before served, so that Established (true) is.
func TestKindChangeFailureKeepsOldKind(t *testing.T) {
	defs := &definitions{byName: map[string]*CustomResourceDefinition{}}
	addDefinition(defs, "widgets", "Widget")
	c, k := newTestController(defs)
	mustSync(t, c, "widgets.example.com")
	if _, ok := k.served["Widget"]; !ok || !conditionTrue(defs.byName["widgets.example.com"], Established) {
		t.Fatalf("Widget is not served: %v", k.served)
	}
	defs.byName["widgets.example.com"].Spec.Names.Kind = "Gizmo"
	defs.byName["widgets.example.com"].Spec.Names.ListKind = "GizmoList"
	k.failing["Gizmo"] = errors.New("the store is down")
	if _, err := c.sync(context.Background(), "widgets.example.com"); err == nil {
		t.Fatal("a failure to serve the new kind is not returned to be retried")
	}
	if _, ok := k.served["Widget"]; !ok || len(k.served) != 1 {
		t.Errorf("served after the new kind failed: %v", k.served)
	}
	delete(k.failing, "Gizmo")
	mustSync(t, c, "widgets.example.com")
	if _, ok := k.served["Gizmo"]; !ok || len(k.served) != 1 {
		t.Errorf("served once the new kind can be: %v", k.served)
	}
}
