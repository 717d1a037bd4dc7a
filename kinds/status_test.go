package kinds_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// managerEntry is the managedFields entry of manager in out, an object's
// JSON: from the manager's name to the end of its entry.
func managerEntry(t *testing.T, out, manager string) string {
	t.Helper()
	_, entry, ok := strings.Cut(out, `"manager":"`+manager+`"`)
	if !ok {
		t.Fatalf("no entry of %s: %s", manager, out)
	}
	entry, _, _ = strings.Cut(entry, `"manager":`)
	return entry
}

// A status apply whose configuration carries spec (the whole object, as
// controllers often send it) neither changes nor owns spec, as
// kube-apiserver's custom resource status strategy resets spec; and an
// apply to the resource neither changes nor owns status.
func TestStatusApplyDoesNotOwnSpec(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/widgets/a"
	const head = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},`
	c.want("PATCH", path+"?fieldManager=user", "application/apply-patch+yaml", head+`"spec":{"color":"red"}}`, 201)
	out := c.want("PATCH", path+"/status?fieldManager=ctrl", "application/apply-patch+yaml",
		head+`"spec":{"color":"green","replicas":7},"status":{"replicas":1}}`, 200)
	if !strings.Contains(out, `"spec":{"color":"red","replicas":1}`) {
		t.Errorf("the status apply changed spec: %s", out)
	}
	if entry := managerEntry(t, out, "ctrl"); strings.Contains(entry, "f:spec") || !strings.Contains(entry, "f:status") {
		t.Errorf("ctrl's entry: %s", entry)
	}
	out = c.want("PATCH", path+"?fieldManager=user", "application/apply-patch+yaml", head+`"spec":{"color":"blue"}}`, 200)
	if !strings.Contains(out, `"color":"blue"`) {
		t.Errorf("user's apply: %s", out)
	}
	// The symmetric case: the resource's apply leaves status alone.
	out = c.want("PATCH", path+"?fieldManager=user", "application/apply-patch+yaml",
		head+`"spec":{"color":"blue"},"status":{"replicas":9}}`, 200)
	if !strings.Contains(out, `"status":{"replicas":1}`) || strings.Contains(managerEntry(t, out, "user"), "f:status") {
		t.Errorf("the resource's apply took status: %s", out)
	}
	c.want("PATCH", path+"/status?fieldManager=ctrl", "application/apply-patch+yaml", head+`"status":{"replicas":2}}`, 200)
}

// Where the schema keeps unknown members at the root, a status write
// leaves every member but status to the resource's writers too.
func TestStatusApplyUnknownRootMembers(t *testing.T) {
	s, err := schema.Parse([]byte(`{"type":"object","x-kubernetes-preserve-unknown-fields":true}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, c := newServer(t)
	def := kinds.Definition{Group: "example.com", Kind: "Thing", Plural: "things", Namespaced: true,
		Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s, Status: true}}}
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/things/a"
	const head = `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a"},`
	c.want("PATCH", path+"?fieldManager=user", "application/apply-patch+yaml", head+`"data":{"x":"1"}}`, 201)
	out := c.want("PATCH", path+"/status?fieldManager=ctrl", "application/apply-patch+yaml",
		head+`"data":{"x":"1"},"extra":true,"status":{"ok":true}}`, 200)
	if entry := managerEntry(t, out, "ctrl"); strings.Contains(entry, "f:data") || strings.Contains(entry, "f:extra") {
		t.Errorf("ctrl's entry: %s", entry)
	}
	if strings.Contains(out, `"extra"`) {
		t.Errorf("the status apply added a member: %s", out)
	}
	c.want("PATCH", path+"?fieldManager=user", "application/apply-patch+yaml", head+`"data":{"x":"2"}}`, 200)
	// An update (here a merge patch) of /status is recorded the same way.
	out = c.want("PATCH", path+"/status?fieldManager=writer", "application/merge-patch+json",
		head+`"data":{"x":"3"},"other":1,"status":{"ok":false}}`, 200)
	if entry := managerEntry(t, out, "writer"); strings.Contains(entry, "f:data") || strings.Contains(entry, "f:other") || !strings.Contains(entry, "f:status") {
		t.Errorf("writer's entry: %s", entry)
	}
}
