package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/lifecycle"
	"github.com/kapi-dev/kapi/storage"
)

// definitions are lifecycle.Objects holding CustomResourceDefinitions
// only, counting the lists made of them.
type definitions struct {
	byName map[string]*CustomResourceDefinition
	rev    int
	lists  int
}

func (d *definitions) copyOf(c *CustomResourceDefinition) *CustomResourceDefinition {
	data, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	var out CustomResourceDefinition
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return &out
}

func (d *definitions) Resources() []lifecycle.Resource { return nil }
func (d *definitions) Watch(context.Context, lifecycle.Resource, func(lifecycle.Change)) error {
	return nil
}
func (d *definitions) Read(_ context.Context, _ lifecycle.Resource, _, name string) (kapi.Object, error) {
	c := d.byName[name]
	if c == nil {
		return nil, storage.ErrNotFound
	}
	return d.copyOf(c), nil
}
func (d *definitions) List(context.Context, lifecycle.Resource, string) ([]kapi.Object, error) {
	d.lists++
	var out []kapi.Object
	for _, c := range d.byName {
		out = append(out, c)
	}
	return out, nil
}
func (d *definitions) Update(_ context.Context, _ lifecycle.Resource, obj kapi.Object, _ string) (kapi.Object, error) {
	c := obj.(*CustomResourceDefinition)
	if cur := d.byName[c.Name]; cur == nil || cur.ResourceVersion != c.ResourceVersion {
		return nil, storage.ErrConflict
	}
	d.rev++
	c = d.copyOf(c)
	c.ResourceVersion = strconv.Itoa(d.rev)
	d.byName[c.Name] = c
	return c, nil
}
func (d *definitions) Delete(context.Context, lifecycle.Resource, string, string, lifecycle.DeleteOptions) error {
	return nil
}

// The controller names many definitions with one list of them, not one
// per definition, and still finds the conflicts kube-apiserver's naming
// controller finds, and frees the names of a definition gone.
func TestNamingListsOnce(t *testing.T) {
	defs := &definitions{byName: map[string]*CustomResourceDefinition{}}
	add := func(plural, kind string, short ...string) {
		c := &CustomResourceDefinition{}
		c.Name, c.ResourceVersion = plural+".example.com", "1"
		c.Spec.Group = "example.com"
		c.Spec.Names = Names{Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List", ShortNames: short}
		defs.byName[c.Name] = c
	}
	const n = 50
	for i := range n {
		add(fmt.Sprintf("things%ds", i), fmt.Sprintf("Thing%d", i))
	}
	add("awidgets", "Widget", "wd")
	add("gadgets", "Gadget", "wd")
	c := &controller{
		serve: func(kinds.Definition) error { return nil }, remove: func(string, string) error { return nil },
		logger: slog.Default(), objects: defs, pending: map[string]bool{}, wake: make(chan struct{}, 1),
		served: map[string]servedKind{}, terminating: map[string]bool{},
	}
	sync := func(name string) {
		t.Helper()
		if _, err := c.sync(context.Background(), name); err != nil {
			t.Fatalf("sync %s: %v", name, err)
		}
	}
	sync("awidgets.example.com")
	for i := range n {
		sync(fmt.Sprintf("things%ds.example.com", i))
	}
	sync("gadgets.example.com")
	if defs.lists != 1 {
		t.Errorf("%d lists of the definitions to name %d, want 1", defs.lists, n+2)
	}
	if cond := condition(defs.byName["gadgets.example.com"], NamesAccepted); cond == nil || cond.Status != kapi.ConditionFalse ||
		cond.Reason != "ShortNamesConflict" || cond.Message != `"wd" is already in use` {
		t.Errorf("gadgets: %+v", cond)
	}
	if cond := condition(defs.byName["things7s.example.com"], Established); cond == nil || cond.Status != kapi.ConditionTrue {
		t.Errorf("things7s: %+v", cond)
	}
	delete(defs.byName, "awidgets.example.com")
	sync("awidgets.example.com")
	if !c.pending["gadgets.example.com"] {
		t.Fatal("a definition of the group of one gone is not looked at again")
	}
	sync("gadgets.example.com")
	if cond := condition(defs.byName["gadgets.example.com"], NamesAccepted); cond == nil || cond.Status != kapi.ConditionTrue {
		t.Errorf("gadgets once widgets went: %+v", cond)
	}
	if defs.lists != 1 {
		t.Errorf("%d lists", defs.lists)
	}
}
