package apiserver_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

func TestCreateSetsServerFields(t *testing.T) {
	_, c := newTestServer(t)
	in := newWidget("default", "x")
	in.UID = "client-uid"
	in.Generation = 7
	in.ResourceVersion = "12345"
	in.Spec.Ports = []widgetapi.WidgetPort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: "UDP"}}
	in.Status = widgetapi.WidgetStatus{Replicas: 5, ObservedGeneration: 3}

	r := c.do(http.MethodPost, widgetsIn("default"), in).mustCode(t, http.StatusCreated)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	w := r.widget(t)
	if w.Kind != "Widget" || w.APIVersion != "example.com/v1" {
		t.Errorf("kind %q apiVersion %q", w.Kind, w.APIVersion)
	}
	if w.Name != "x" || w.Namespace != "default" {
		t.Errorf("name %q namespace %q", w.Name, w.Namespace)
	}
	if w.UID == "" || w.UID == "client-uid" {
		t.Errorf("uid %q, want one the server chose", w.UID)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(w.UID) {
		t.Errorf("uid %q is not a UUID", w.UID)
	}
	rv := mustRevision(t, "resourceVersion", w.ResourceVersion)
	if w.ResourceVersion == "12345" {
		t.Errorf("the client's resourceVersion was kept")
	}
	if w.Generation != 1 {
		t.Errorf("generation %d, want 1", w.Generation)
	}
	var raw struct {
		Metadata struct {
			CreationTimestamp string `json:"creationTimestamp"`
		} `json:"metadata"`
	}
	r.into(t, &raw)
	ts, err := time.Parse(time.RFC3339, raw.Metadata.CreationTimestamp)
	if err != nil || !strings.HasSuffix(raw.Metadata.CreationTimestamp, "Z") {
		t.Errorf("creationTimestamp %q is not RFC 3339 in UTC: %v", raw.Metadata.CreationTimestamp, err)
	}
	if d := time.Since(ts); d < -time.Hour || d > time.Hour {
		t.Errorf("creationTimestamp %v is far from now", ts)
	}
	if w.Spec.Replicas == nil || *w.Spec.Replicas != 1 {
		t.Errorf("spec.replicas %v, want the default 1", w.Spec.Replicas)
	}
	if got := []string{w.Spec.Ports[0].Protocol, w.Spec.Ports[1].Protocol}; !slices.Equal(got, []string{"TCP", "UDP"}) {
		t.Errorf("port protocols %q, want TCP (defaulted) and UDP", got)
	}
	if w.Status.Replicas != 0 || w.Status.ObservedGeneration != 0 {
		t.Errorf("status %+v, want it cleared on create", w.Status)
	}

	g := c.read("default", "x")
	if g.UID != w.UID || g.ResourceVersion != w.ResourceVersion || g.Generation != 1 || g.Status.Replicas != 0 ||
		*g.Spec.Replicas != 1 || g.Spec.Ports[0].Protocol != "TCP" {
		t.Errorf("GET = %+v, want what POST returned %+v", g, w)
	}
	if g.CreationTimestamp.Unix() != w.CreationTimestamp.Unix() {
		t.Errorf("creationTimestamp %v, POST said %v", g.CreationTimestamp, w.CreationTimestamp)
	}

	// Replicas 0 is a value, not a missing one.
	z := newWidget("default", "zero")
	z.Spec.Replicas = ptr(int32(0))
	if got := c.create(z); got.Spec.Replicas == nil || *got.Spec.Replicas != 0 {
		t.Errorf("spec.replicas %v, want 0 kept", got.Spec.Replicas)
	}
	if got := c.read("default", "zero"); mustRevision(t, "rv", got.ResourceVersion) <= rv {
		t.Errorf("a later create has resourceVersion %s, not above %d", got.ResourceVersion, rv)
	}
}

func TestCreateGenerateName(t *testing.T) {
	_, c := newTestServer(t)
	in := newWidget("default", "")
	in.GenerateName = "gen-"
	seen := map[string]bool{}
	for range 5 {
		w := c.create(in)
		if !regexp.MustCompile(`^gen-[a-z0-9]{5}$`).MatchString(w.Name) {
			t.Errorf("name %q, want gen- and five characters", w.Name)
		}
		if w.GenerateName != "gen-" {
			t.Errorf("generateName %q, want gen-", w.GenerateName)
		}
		if seen[w.Name] {
			t.Errorf("name %q generated twice", w.Name)
		}
		seen[w.Name] = true
		c.read("default", w.Name)
	}
	// Neither name nor generateName.
	st := c.do(http.MethodPost, widgetsIn("default"), newWidget("default", "")).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if !hasCause(st, "metadata.name", kapi.CauseTypeFieldValueRequired) {
		t.Errorf("causes %+v, want metadata.name Required", st.Details)
	}
}

func hasCause(st kapi.Status, field string, typ kapi.CauseType) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Field == field && c.Type == typ {
			return true
		}
	}
	return false
}

func TestCreateAlreadyExists(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "x"))
	st := c.do(http.MethodPost, widgetsIn("default"), newWidget("default", "x")).failure(t, http.StatusConflict, kapi.StatusReasonAlreadyExists)
	if want := `widgets.example.com "x" already exists`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	if d := st.Details; d == nil || d.Name != "x" || d.Group != "example.com" || d.Kind != "widgets" {
		t.Errorf("details %+v, want name x, group example.com, kind widgets", d)
	}
	// The same name in another namespace is another object.
	c.create(newWidget("other", "x"))
}

func TestList(t *testing.T) {
	_, c := newTestServer(t)
	for _, n := range []string{"c", "a", "b"} {
		c.create(newWidget("ns1", n))
	}
	for _, n := range []string{"b", "z"} {
		c.create(newWidget("ns2", n))
	}

	l := c.list(widgetsIn("ns1"))
	if got := l.names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("ns1 items %q, want a b c", got)
	}
	for _, w := range l.Items {
		if w.Namespace != "ns1" || w.Kind != "Widget" || w.APIVersion != "example.com/v1" || w.UID == "" {
			t.Errorf("item %s/%s kind %q apiVersion %q uid %q", w.Namespace, w.Name, w.Kind, w.APIVersion, w.UID)
		}
	}
	if l.Metadata.Continue != "" || l.Metadata.RemainingItemCount != nil {
		t.Errorf("an unlimited list has continue %q remainingItemCount %v", l.Metadata.Continue, l.Metadata.RemainingItemCount)
	}
	listRV := mustRevision(t, "list rv", l.Metadata.ResourceVersion)
	for _, w := range l.Items {
		if mustRevision(t, "item rv", w.ResourceVersion) > listRV {
			t.Errorf("item %s has resourceVersion %s above the list's %d", w.Name, w.ResourceVersion, listRV)
		}
	}

	all := c.list(allWidgets)
	var got []string
	for _, w := range all.Items {
		got = append(got, w.Namespace+"/"+w.Name)
	}
	if want := []string{"ns1/a", "ns1/b", "ns1/c", "ns2/b", "ns2/z"}; !slices.Equal(got, want) {
		t.Errorf("all items %q, want %q", got, want)
	}

	empty := c.list(widgetsIn("nothing-here"))
	if empty.Items == nil || len(empty.Items) != 0 {
		t.Errorf("empty namespace: items %v, want []", empty.Items)
	}

	sel := c.list(widgetsIn("ns1") + "?fieldSelector=metadata.name%3Db")
	if got := sel.names(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("fieldSelector metadata.name=b: %q", got)
	}
}

func TestUpdate(t *testing.T) {
	_, c := newTestServer(t)
	w := c.create(newWidget("default", "x"))
	rv1 := mustRevision(t, "rv", w.ResourceVersion)

	w.Spec.Color = "Blue"
	u := c.update(w)
	rv2 := mustRevision(t, "rv", u.ResourceVersion)
	if rv2 <= rv1 || u.Spec.Color != "Blue" || u.UID != w.UID {
		t.Errorf("update: rv %d -> %d, color %q, uid %q (was %q)", rv1, rv2, u.Spec.Color, u.UID, w.UID)
	}
	if g := c.read("default", "x"); g.ResourceVersion != u.ResourceVersion || g.Spec.Color != "Blue" {
		t.Errorf("GET after update: rv %s color %s", g.ResourceVersion, g.Spec.Color)
	}

	t.Run("stale resourceVersion", func(t *testing.T) {
		stale := *w // carries rv1
		stale.Spec.Color = "Green"
		st := c.do(http.MethodPut, widgetPath("default", "x"), &stale).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		want := `Operation cannot be fulfilled on widgets.example.com "x": the object has been modified; please apply your changes to the latest version and try again`
		if st.Message != want {
			t.Errorf("message %q,\nwant %q", st.Message, want)
		}
		if d := st.Details; d == nil || d.Name != "x" || d.Group != "example.com" || d.Kind != "widgets" {
			t.Errorf("details %+v", d)
		}
		if g := c.read("default", "x"); g.Spec.Color != "Blue" {
			t.Errorf("a refused update changed the object: color %q", g.Spec.Color)
		}
	})

	t.Run("without resourceVersion", func(t *testing.T) {
		cur := c.read("default", "x")
		cur.ResourceVersion = ""
		cur.Spec.Color = "Green"
		u := c.update(cur)
		if u.Spec.Color != "Green" || mustRevision(t, "rv", u.ResourceVersion) <= rv2 {
			t.Errorf("unconditional update: %+v", u)
		}
	})

	t.Run("server-set fields stay", func(t *testing.T) {
		cur := c.read("default", "x")
		changed := *cur
		changed.UID = ""
		changed.CreationTimestamp = kapi.Time{}
		changed.Spec.Size = 3
		u := c.update(&changed)
		if u.UID != cur.UID || u.CreationTimestamp.Unix() != cur.CreationTimestamp.Unix() {
			t.Errorf("uid %q creationTimestamp %v, want %q %v kept", u.UID, u.CreationTimestamp, cur.UID, cur.CreationTimestamp)
		}
	})

	t.Run("missing object", func(t *testing.T) {
		st := c.do(http.MethodPut, widgetPath("default", "nope"), newWidget("default", "nope")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
		if st.Message != `widgets.example.com "nope" not found` {
			t.Errorf("message %q", st.Message)
		}
	})
}

func TestDelete(t *testing.T) {
	_, c := newTestServer(t)
	w := c.create(newWidget("default", "x"))

	r := c.do(http.MethodDelete, widgetPath("default", "x"), nil).mustCode(t, http.StatusOK)
	var st kapi.Status
	r.into(t, &st)
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != kapi.StatusSuccess {
		t.Errorf("DELETE answered %s, want a Status of Success", r.Body)
	}
	if d := st.Details; d == nil || d.Name != "x" || d.Group != "example.com" || d.Kind != "widgets" || d.UID != w.UID {
		t.Errorf("details %+v, want name x, group example.com, kind widgets, uid %s", d, w.UID)
	}

	st = c.get(widgetPath("default", "x")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if want := `widgets.example.com "x" not found`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	if d := st.Details; d == nil || d.Name != "x" || d.Group != "example.com" || d.Kind != "widgets" {
		t.Errorf("details %+v, want name x, group example.com, kind widgets", d)
	}
	if l := c.list(widgetsIn("default")); len(l.Items) != 0 {
		t.Errorf("list after delete: %q", l.names())
	}

	// Again: it is gone.
	c.do(http.MethodDelete, widgetPath("default", "x"), nil).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)

	// kubectl's DELETE body.
	c.create(newWidget("default", "y"))
	c.do(http.MethodDelete, widgetPath("default", "y"), `{"propagationPolicy":"Background"}`).mustCode(t, http.StatusOK)
	c.get(widgetPath("default", "y")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)

	// A name can be used again after its object is gone, for a new object.
	again := c.create(newWidget("default", "x"))
	if again.UID == w.UID {
		t.Error("a re-created object kept the old uid")
	}
}

func TestDeleteCollection(t *testing.T) {
	_, c := newTestServer(t)
	for _, n := range []struct{ name, app string }{{"l1", "a"}, {"l2", "a"}, {"l3", "b"}, {"l4", ""}} {
		w := newWidget("dc", n.name)
		if n.app != "" {
			w.Labels = map[string]string{"app": n.app}
		}
		c.create(w)
	}
	c.create(newWidget("keep", "l1"))

	r := c.do(http.MethodDelete, widgetsIn("dc")+"?labelSelector=app%3Da", nil).mustCode(t, http.StatusOK)
	var deleted widgetList
	r.into(t, &deleted)
	if got := deleted.names(); !slices.Equal(got, []string{"l1", "l2"}) {
		t.Errorf("deletecollection app=a answered items %q, want l1 l2", got)
	}
	if got := c.list(widgetsIn("dc")).names(); !slices.Equal(got, []string{"l3", "l4"}) {
		t.Errorf("after deletecollection app=a: %q, want l3 l4", got)
	}

	c.do(http.MethodDelete, widgetsIn("dc"), nil).mustCode(t, http.StatusOK)
	if got := c.list(widgetsIn("dc")).names(); len(got) != 0 {
		t.Errorf("after deletecollection of all: %q", got)
	}
	if got := c.list(widgetsIn("keep")).names(); !slices.Equal(got, []string{"l1"}) {
		t.Errorf("another namespace lost its widgets: %q", got)
	}
}

func TestWidgetClassCRUD(t *testing.T) {
	_, c := newTestServer(t)
	type widgetClass = widgetapi.WidgetClass
	in := widgetClass{TypeMeta: kapi.TypeMeta{Kind: "WidgetClass", APIVersion: "example.com/v1"}, ObjectMeta: kapi.ObjectMeta{Name: "gold"}}
	in.Spec.MaxReplicas = 3

	var created widgetClass
	c.do(http.MethodPost, widgetClasses, &in).mustCode(t, http.StatusCreated).into(t, &created)
	if created.Namespace != "" || created.UID == "" || created.Generation != 1 || created.Kind != "WidgetClass" {
		t.Errorf("created %+v", created)
	}
	mustRevision(t, "rv", created.ResourceVersion)

	var got widgetClass
	c.get(widgetClasses+"/gold").mustCode(t, http.StatusOK).into(t, &got)
	if got.UID != created.UID || got.Spec.MaxReplicas != 3 {
		t.Errorf("GET %+v", got)
	}

	c.do(http.MethodPost, widgetClasses, widgetClass{ObjectMeta: kapi.ObjectMeta{Name: "silver"}}).mustCode(t, http.StatusCreated)
	var l struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   kapi.ListMeta
		Items      []widgetClass `json:"items"`
	}
	c.get(widgetClasses).mustCode(t, http.StatusOK).into(t, &l)
	if l.Kind != "WidgetClassList" || l.APIVersion != "example.com/v1" || len(l.Items) != 2 || l.Items[0].Name != "gold" || l.Items[1].Name != "silver" {
		t.Errorf("list %+v", l)
	}

	got.Spec.Description = "the best"
	var updated widgetClass
	c.do(http.MethodPut, widgetClasses+"/gold", &got).mustCode(t, http.StatusOK).into(t, &updated)
	if updated.Spec.Description != "the best" || updated.Generation != 2 || updated.ResourceVersion == got.ResourceVersion {
		t.Errorf("updated %+v", updated)
	}

	bad := updated
	bad.Spec.MaxReplicas = -1
	st := c.do(http.MethodPut, widgetClasses+"/gold", &bad).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if !strings.HasPrefix(st.Message, `WidgetClass.example.com "gold" is invalid: `) || !hasCause(st, "spec.maxReplicas", kapi.CauseTypeFieldValueInvalid) {
		t.Errorf("invalid class: %+v", st)
	}

	// Cluster-scoped: no namespaced path, and a namespace in the body is dropped.
	c.get(groupVersionPath+"/namespaces/default/widgetclasses/gold").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	var bronze widgetClass
	c.do(http.MethodPost, widgetClasses, widgetClass{ObjectMeta: kapi.ObjectMeta{Name: "bronze", Namespace: "default"}}).mustCode(t, http.StatusCreated).into(t, &bronze)
	if bronze.Namespace != "" {
		t.Errorf("a cluster-scoped object kept namespace %q", bronze.Namespace)
	}

	r := c.do(http.MethodDelete, widgetClasses+"/gold", nil).mustCode(t, http.StatusOK)
	var ds kapi.Status
	r.into(t, &ds)
	if ds.Status != kapi.StatusSuccess || ds.Details == nil || ds.Details.Kind != "widgetclasses" || ds.Details.Name != "gold" || ds.Details.UID != created.UID {
		t.Errorf("delete: %s", r.Body)
	}
	st = c.get(widgetClasses+"/gold").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if st.Message != `widgetclasses.example.com "gold" not found` || st.Details == nil || st.Details.Kind != "widgetclasses" {
		t.Errorf("404: %+v", st)
	}
}

func TestGeneration(t *testing.T) {
	_, c := newTestServer(t)
	w := c.create(newWidget("default", "g"))
	if w.Generation != 1 {
		t.Fatalf("generation %d after create", w.Generation)
	}

	w.Labels = map[string]string{"tier": "front"}
	w.Annotations = map[string]string{"note": "labels only"}
	u := c.update(w)
	if u.Generation != 1 {
		t.Errorf("a metadata-only update moved generation to %d", u.Generation)
	}
	if u.ResourceVersion == w.ResourceVersion || u.Labels["tier"] != "front" {
		t.Errorf("the label update was not written: rv %s labels %v", u.ResourceVersion, u.Labels)
	}

	u.Spec.Size = 4
	u2 := c.update(u)
	if u2.Generation != 2 {
		t.Errorf("a spec change: generation %d, want 2", u2.Generation)
	}
	u2.Spec.Size = 5
	u2.Spec.Color = "Green"
	u3 := c.update(u2)
	if u3.Generation != 3 {
		t.Errorf("a second spec change (two fields): generation %d, want 3", u3.Generation)
	}
	// The client cannot set generation.
	u3.Generation = 100
	u4 := c.update(u3)
	if u4.Generation != 3 {
		t.Errorf("the client's generation 100 was taken: %d", u4.Generation)
	}
	// Defaulting is not a spec change: replicas omitted is replicas 1, as stored.
	u4.Spec.Replicas = nil
	if u5 := c.update(u4); u5.Generation != 3 || u5.ResourceVersion != u4.ResourceVersion {
		t.Errorf("an update that only omits a defaulted field: generation %d rv %s, want 3 and rv %s", u5.Generation, u5.ResourceVersion, u4.ResourceVersion)
	}
}

func TestStatusSubresource(t *testing.T) {
	_, c := newTestServer(t)
	w := c.create(newWidget("default", "s"))

	// PUT on the resource ignores status.
	w.Status.Replicas = 9
	u := c.update(w)
	if u.Status.Replicas != 0 {
		t.Errorf("PUT on the resource set status.replicas to %d", u.Status.Replicas)
	}
	if u.ResourceVersion != w.ResourceVersion {
		t.Errorf("a PUT that only changes status wrote something: rv %s -> %s", w.ResourceVersion, u.ResourceVersion)
	}
	if g := c.read("default", "s"); g.Status.Replicas != 0 {
		t.Errorf("stored status.replicas %d", g.Status.Replicas)
	}

	// PUT on /status changes status only.
	cur := c.read("default", "s")
	cur.Status = widgetapi.WidgetStatus{Replicas: 3, ObservedGeneration: 1, Selector: "app=s",
		Conditions: []kapi.Condition{{Type: "Ready", Status: kapi.ConditionTrue, Reason: "Up", Message: "ok", LastTransitionTime: kapi.Now()}}}
	cur.Spec.Color = "Blue"
	cur.Labels = map[string]string{"ignored": "yes"}
	r := c.do(http.MethodPut, widgetPath("default", "s")+"/status", cur).mustCode(t, http.StatusOK)
	s := r.widget(t)
	if s.Status.Replicas != 3 || s.Status.Selector != "app=s" || len(s.Status.Conditions) != 1 {
		t.Errorf("status after PUT /status: %+v", s.Status)
	}
	if s.Spec.Color != "Red" {
		t.Errorf("PUT /status changed spec.color to %q", s.Spec.Color)
	}
	if s.Generation != 1 {
		t.Errorf("PUT /status moved generation to %d", s.Generation)
	}
	if mustRevision(t, "rv", s.ResourceVersion) <= mustRevision(t, "rv", cur.ResourceVersion) {
		t.Errorf("PUT /status did not write: rv %s", s.ResourceVersion)
	}
	g := c.read("default", "s")
	if g.Status.Replicas != 3 || g.Spec.Color != "Red" || g.Generation != 1 || g.ResourceVersion != s.ResourceVersion {
		t.Errorf("GET after PUT /status: %+v", g)
	}
	if _, ok := g.Labels["ignored"]; ok {
		t.Errorf("PUT /status changed metadata.labels: %v", g.Labels)
	}

	// GET /status is the whole object.
	if gs := c.get(widgetPath("default", "s")+"/status").mustCode(t, http.StatusOK).widget(t); gs.Name != "s" || gs.Status.Replicas != 3 {
		t.Errorf("GET /status: %+v", gs)
	}

	// A stale resourceVersion on /status conflicts too.
	cur.Status.Replicas = 4
	c.do(http.MethodPut, widgetPath("default", "s")+"/status", cur).failure(t, http.StatusConflict, kapi.StatusReasonConflict)

	// Widget classes have no status subresource; widgets have no other.
	c.get(widgetClasses+"/any/status").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	c.get(widgetPath("default", "s")+"/bogus").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
}

func TestNoOpUpdate(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "same"))
	raw := c.get(widgetPath("default", "same")).mustCode(t, http.StatusOK)
	before := raw.widget(t)

	r := c.do(http.MethodPut, widgetPath("default", "same"), raw.Body).mustCode(t, http.StatusOK)
	after := r.widget(t)
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a PUT of the same object moved resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}
	// Without the resourceVersion, too.
	before.ResourceVersion = ""
	if again := c.update(before); again.ResourceVersion != after.ResourceVersion {
		t.Errorf("an unconditional PUT of the same object moved resourceVersion to %s", again.ResourceVersion)
	}

	// No event: the watch from that revision sees nothing before it times out.
	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + after.ResourceVersion + "&timeoutSeconds=1")
	if evs := ws.untilEnd(); len(evs) != 0 {
		t.Errorf("events after a no-op update: %v", evs)
	}
}

func TestPatch(t *testing.T) {
	_, c := newTestServer(t)
	base := newWidget("default", "p")
	base.Spec.Ports = []widgetapi.WidgetPort{{Name: "http", Port: 80}}
	created := c.create(base)
	path := widgetPath("default", "p")

	t.Run("merge patch", func(t *testing.T) {
		r := c.do(http.MethodPatch, path, `{"spec":{"size":5},"metadata":{"labels":{"k":"v"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
		w := r.widget(t)
		if w.Spec.Size != 5 || w.Labels["k"] != "v" || w.Spec.Color != "Red" || len(w.Spec.Ports) != 1 {
			t.Errorf("after merge patch: %+v", w)
		}
		if w.Generation != 2 || mustRevision(t, "rv", w.ResourceVersion) <= mustRevision(t, "rv", created.ResourceVersion) {
			t.Errorf("generation %d rv %s", w.Generation, w.ResourceVersion)
		}
	})

	t.Run("json patch", func(t *testing.T) {
		doc := `[{"op":"test","path":"/spec/color","value":"Red"},{"op":"replace","path":"/spec/color","value":"Green"},{"op":"add","path":"/spec/ports/-","value":{"name":"dns","port":53}}]`
		w := c.do(http.MethodPatch, path, doc, "Content-Type", "application/json-patch+json").mustCode(t, http.StatusOK).widget(t)
		if w.Spec.Color != "Green" || len(w.Spec.Ports) != 2 || w.Spec.Ports[1].Protocol != "TCP" {
			t.Errorf("after json patch: %+v", w.Spec)
		}
	})

	t.Run("json patch failing test", func(t *testing.T) {
		before := c.get(path).mustCode(t, http.StatusOK)
		doc := `[{"op":"test","path":"/spec/color","value":"Blue"},{"op":"replace","path":"/spec/size","value":9}]`
		st := c.do(http.MethodPatch, path, doc, "Content-Type", "application/json-patch+json").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if want := "the server rejected our request due to an error in our request"; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
		after := c.get(path).mustCode(t, http.StatusOK)
		if string(after.Body) != string(before.Body) {
			t.Errorf("a failed patch changed the object:\nbefore %s\nafter  %s", before.Body, after.Body)
		}
	})

	t.Run("patch makes it invalid", func(t *testing.T) {
		st := c.do(http.MethodPatch, path, `{"spec":{"color":"purple"}}`, "Content-Type", "application/merge-patch+json").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if !hasCause(st, "spec.color", kapi.CauseTypeFieldValueNotSupported) {
			t.Errorf("causes %+v", st.Details)
		}
	})

	t.Run("missing object", func(t *testing.T) {
		st := c.do(http.MethodPatch, widgetPath("default", "nope"), `{"spec":{"size":1}}`, "Content-Type", "application/merge-patch+json").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
		if st.Message != `widgets.example.com "nope" not found` || st.Details == nil || st.Details.Kind != "widgets" {
			t.Errorf("404: %+v", st)
		}
	})

	t.Run("apply without fieldManager", func(t *testing.T) {
		doc := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"p"},"spec":{"color":"Blue"}}`
		// kube-apiserver's ValidatePatchOptions: 422, one Required cause.
		st := c.do(http.MethodPatch, path, doc, "Content-Type", "application/apply-patch+yaml").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
		if st.Details == nil || st.Details.Kind != "PatchOptions" || st.Details.Group != "meta.k8s.io" || len(st.Details.Causes) != 1 ||
			st.Details.Causes[0].Type != kapi.CauseTypeFieldValueRequired || st.Details.Causes[0].Field != "fieldManager" {
			t.Errorf("details %+v", st.Details)
		}
	})

	t.Run("apply creates, then changes", func(t *testing.T) {
		ap := widgetPath("default", "applied") + "?fieldManager=test&fieldValidation=Strict&force=false"
		doc := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: applied\nspec:\n  color: Blue\n  size: 2\n"
		r := c.do(http.MethodPatch, ap, doc, "Content-Type", "application/apply-patch+yaml")
		if r.Code != http.StatusCreated && r.Code != http.StatusOK {
			t.Fatalf("apply to create: HTTP %d %s", r.Code, r.Body)
		}
		w := r.widget(t)
		if w.Name != "applied" || w.Namespace != "default" || w.Spec.Color != "Blue" || w.Spec.Size != 2 || w.Generation != 1 || w.UID == "" {
			t.Errorf("applied: %+v", w)
		}
		// kubectl sends JSON with the apply content type.
		doc2 := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"applied"},"spec":{"color":"Green","size":2}}`
		w2 := c.do(http.MethodPatch, ap, doc2, "Content-Type", "application/apply-patch+yaml").mustCode(t, http.StatusOK).widget(t)
		if w2.Spec.Color != "Green" || w2.Generation != 2 || w2.UID != w.UID {
			t.Errorf("re-applied: %+v", w2)
		}
		if g := c.read("default", "applied"); g.Spec.Color != "Green" {
			t.Errorf("GET after apply: %+v", g.Spec)
		}
	})

	t.Run("unknown patch type", func(t *testing.T) {
		c.do(http.MethodPatch, path, `{}`, "Content-Type", "application/bogus-patch+json").failure(t, http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType)
	})

	t.Run("patch of status through /status", func(t *testing.T) {
		w := c.do(http.MethodPatch, path+"/status", `{"status":{"replicas":2},"spec":{"color":"Blue"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK).widget(t)
		if w.Status.Replicas != 2 || w.Spec.Color == "Blue" {
			t.Errorf("patch /status: status %+v, color %q", w.Status, w.Spec.Color)
		}
	})
}

func TestFinalizers(t *testing.T) {
	_, c := newTestServer(t)
	in := newWidget("default", "f")
	in.Finalizers = []string{"example.com/hold"}
	created := c.create(in)
	path := widgetPath("default", "f")

	r := c.do(http.MethodDelete, path, nil).mustCode(t, http.StatusOK)
	d := r.widget(t)
	if d.Kind != "Widget" || d.Name != "f" || d.DeletionTimestamp == nil || d.DeletionTimestamp.IsZero() {
		t.Fatalf("DELETE of an object with a finalizer answered %s, want the object with deletionTimestamp", r.Body)
	}
	if mustRevision(t, "rv", d.ResourceVersion) <= mustRevision(t, "rv", created.ResourceVersion) {
		t.Errorf("marking for deletion did not write: rv %s", d.ResourceVersion)
	}
	if d.Generation != created.Generation+1 {
		t.Errorf("generation %d after deletion started, want %d (kube-apiserver moves it)", d.Generation, created.Generation+1)
	}

	g := c.read("default", "f")
	if g.DeletionTimestamp == nil || !slices.Equal(g.Finalizers, []string{"example.com/hold"}) {
		t.Errorf("GET while deleting: deletionTimestamp %v finalizers %q", g.DeletionTimestamp, g.Finalizers)
	}

	// A second DELETE changes nothing.
	c.do(http.MethodDelete, path, nil).mustCode(t, http.StatusOK)
	if again := c.read("default", "f"); again.ResourceVersion != g.ResourceVersion {
		t.Errorf("a second DELETE wrote: rv %s -> %s", g.ResourceVersion, again.ResourceVersion)
	}

	// No new finalizers while deleting.
	more := *g
	more.Finalizers = []string{"example.com/hold", "example.com/more"}
	st := c.do(http.MethodPut, path, &more).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if !hasCause(st, "metadata.finalizers", kapi.CauseTypeFieldValueForbidden) {
		t.Errorf("causes %+v, want metadata.finalizers Forbidden", st.Details)
	}

	// The client cannot clear deletionTimestamp.
	undelete := *g
	undelete.DeletionTimestamp = nil
	undelete.Labels = map[string]string{"try": "undelete"}
	u := c.update(&undelete)
	if u.DeletionTimestamp == nil {
		t.Error("a PUT cleared deletionTimestamp")
	}

	// Removing the last finalizer ends it.
	u.Finalizers = nil
	c.do(http.MethodPut, path, u).mustCode(t, http.StatusOK)
	c.get(path).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if l := c.list(widgetsIn("default")); len(l.Items) != 0 {
		t.Errorf("list after the last finalizer went: %q", l.names())
	}
}

func TestValidation(t *testing.T) {
	_, c := newTestServer(t)
	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"color":"purple","replicas":-1,"ports":[{"name":"a","port":80},{"name":"b","port":70000}]}}`
	st := c.do(http.MethodPost, widgetsIn("default"), body).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if prefix := `Widget.example.com "x" is invalid: `; !strings.HasPrefix(st.Message, prefix) {
		t.Errorf("message %q, want it to start %q", st.Message, prefix)
	}
	if !strings.Contains(st.Message, `spec.color: Unsupported value: "purple": supported values: "Red", "Green", "Blue"`) {
		t.Errorf("message %q lacks kube's wording for spec.color", st.Message)
	}
	if d := st.Details; d == nil || d.Name != "x" || d.Group != "example.com" || d.Kind != "Widget" {
		t.Fatalf("details %+v, want name x, group example.com, kind Widget", st.Details)
	}
	type cause struct {
		Field string
		Type  kapi.CauseType
	}
	var got []cause
	for _, c := range st.Details.Causes {
		got = append(got, cause{c.Field, c.Type})
		if c.Message == "" {
			t.Errorf("cause %s has no message", c.Field)
		}
	}
	want := []cause{
		{"spec.color", kapi.CauseTypeFieldValueNotSupported},
		{"spec.replicas", kapi.CauseTypeFieldValueInvalid},
		{"spec.ports[1].port", kapi.CauseTypeFieldValueInvalid},
	}
	if !slices.Equal(got, want) {
		t.Errorf("causes %+v, want %+v", got, want)
	}
	c.get(widgetPath("default", "x")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)

	// An update is validated too, and changes nothing when refused.
	w := c.create(newWidget("default", "ok"))
	w.Spec.Replicas = ptr(int32(-3))
	st = c.do(http.MethodPut, widgetPath("default", "ok"), w).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if !strings.HasPrefix(st.Message, `Widget.example.com "ok" is invalid: `) || !hasCause(st, "spec.replicas", kapi.CauseTypeFieldValueInvalid) {
		t.Errorf("update: %+v", st)
	}
	if g := c.read("default", "ok"); *g.Spec.Replicas != 1 {
		t.Errorf("a refused update changed replicas to %d", *g.Spec.Replicas)
	}
}

func TestPagination(t *testing.T) {
	_, c := newTestServer(t)
	var names []string
	for i := range 10 {
		n := "p" + string(rune('0'+i))
		names = append(names, n)
		c.create(newWidget("pages", n))
	}
	c.create(newWidget("elsewhere", "p0")) // not in the namespace's pages

	page := func(query string) *widgetList { t.Helper(); return c.list(widgetsIn("pages") + "?limit=3" + query) }

	first := page("")
	rv := first.Metadata.ResourceVersion
	var got []string
	got = append(got, first.names()...)
	remaining := []int64{}
	pages := []*widgetList{first}

	// Writes between pages must not show in later pages.
	w := c.read("pages", "p7")
	w.Spec.Color = "Blue"
	c.update(w)
	c.do(http.MethodDelete, widgetPath("pages", "p4"), nil).mustCode(t, http.StatusOK)
	c.create(newWidget("pages", "p35"))

	for l := first; l.Metadata.Continue != ""; {
		if l.Metadata.RemainingItemCount == nil {
			t.Fatalf("page %d has continue but no remainingItemCount", len(pages))
		}
		remaining = append(remaining, *l.Metadata.RemainingItemCount)
		if len(pages) > 10 {
			t.Fatal("too many pages")
		}
		l = page("&continue=" + l.Metadata.Continue)
		pages = append(pages, l)
		got = append(got, l.names()...)
	}
	if !slices.Equal(got, names) {
		t.Errorf("paged names %q, want %q (the snapshot of the first page)", got, names)
	}
	var sizes []int
	for i, p := range pages {
		sizes = append(sizes, len(p.Items))
		if p.Metadata.ResourceVersion != rv {
			t.Errorf("page %d resourceVersion %s, want the first page's %s", i, p.Metadata.ResourceVersion, rv)
		}
	}
	if !slices.Equal(sizes, []int{3, 3, 3, 1}) {
		t.Errorf("page sizes %v, want 3 3 3 1", sizes)
	}
	if !slices.Equal(remaining, []int64{7, 4, 1}) {
		t.Errorf("remainingItemCount %v, want 7 4 1", remaining)
	}
	last := pages[len(pages)-1]
	if last.Metadata.RemainingItemCount != nil {
		t.Errorf("the last page has remainingItemCount %d", *last.Metadata.RemainingItemCount)
	}
	for _, p := range pages {
		for _, it := range p.Items {
			if it.Name == "p7" && it.Spec.Color != "Red" {
				t.Errorf("p7 in a later page has color %q, a write made after the first page", it.Spec.Color)
			}
		}
	}

	// A fresh list sees the writes.
	if got := c.list(widgetsIn("pages")).names(); !slices.Equal(got, []string{"p0", "p1", "p2", "p3", "p35", "p5", "p6", "p7", "p8", "p9"}) {
		t.Errorf("fresh list %q", got)
	}

	// limit larger than the collection: one page, no continue.
	all := c.list(widgetsIn("pages") + "?limit=500")
	if len(all.Items) != 10 || all.Metadata.Continue != "" || all.Metadata.RemainingItemCount != nil {
		t.Errorf("limit=500: %d items, continue %q, remaining %v", len(all.Items), all.Metadata.Continue, all.Metadata.RemainingItemCount)
	}

	// Paging with a label selector still returns every match once.
	for i := range 5 {
		w := newWidget("sel", "s"+string(rune('0'+i)))
		if i%2 == 0 {
			w.Labels = map[string]string{"even": "true"}
		}
		c.create(w)
	}
	var sel []string
	for q, n := "", 0; n < 10; n++ {
		l := c.list(widgetsIn("sel") + "?limit=2&labelSelector=even%3Dtrue" + q)
		sel = append(sel, l.names()...)
		if l.Metadata.Continue == "" {
			break
		}
		q = "&continue=" + l.Metadata.Continue
	}
	if !slices.Equal(sel, []string{"s0", "s2", "s4"}) {
		t.Errorf("paged selected names %q, want s0 s2 s4", sel)
	}
}

// TestRoundTripJSON checks that what GET returns can be sent back as is.
func TestRoundTripJSON(t *testing.T) {
	_, c := newTestServer(t)
	in := newWidget("default", "rt")
	in.Labels = map[string]string{"a": "b"}
	in.Spec.Selector = map[string]string{"app": "rt"}
	c.create(in)
	r := c.get(widgetPath("default", "rt")).mustCode(t, http.StatusOK)
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "labels", "managedFields"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("metadata lacks %s: %s", k, r.Body)
		}
	}
	for _, k := range []string{"deletionTimestamp", "finalizers"} {
		if _, ok := meta[k]; ok {
			t.Errorf("metadata has %s, which is unset: %s", k, r.Body)
		}
	}
}

// TestEmptyListResourceVersion checks the resourceVersion of a list on a
// server that has stored nothing yet. To a client "0" is not a revision but
// "any": a watch from it starts with the current state instead of the
// changes after the list. etcd starts at revision 1, so kube-apiserver never
// returns "0".
func TestEmptyListResourceVersion(t *testing.T) {
	_, c := newTestServer(t)
	r := c.get(widgetsIn("default")).mustCode(t, http.StatusOK)
	var l widgetList
	r.into(t, &l)
	if l.Metadata.ResourceVersion == "" || l.Metadata.ResourceVersion == "0" {
		t.Errorf("an empty list has resourceVersion %q, want a revision (>= 1)", l.Metadata.ResourceVersion)
	}
}

// TestListResourceVersionMatch checks resourceVersionMatch on a list:
// without a resourceVersion it is 422 (kube-apiserver's wording), and Exact
// serves the list as it was at that revision.
func TestListResourceVersionMatch(t *testing.T) {
	_, c := newTestServer(t)
	w := c.create(newWidget("default", "a"))
	old := c.list(widgetsIn("default")).Metadata.ResourceVersion
	w.Spec.Color = "Blue"
	c.update(w)
	latest := c.create(newWidget("default", "b")).ResourceVersion

	t.Run("without resourceVersion", func(t *testing.T) {
		st := c.get(widgetsIn("default")+"?resourceVersionMatch=NotOlderThan").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		want := `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`
		if st.Message != want {
			t.Errorf("message %q,\nwant    %q", st.Message, want)
		}
		if d := st.Details; d == nil || d.Group != "meta.k8s.io" || d.Kind != "ListOptions" || len(d.Causes) != 1 || d.Causes[0].Type != kapi.CauseTypeFieldValueForbidden {
			t.Errorf("details %+v", st.Details)
		}
	})
	t.Run("Exact", func(t *testing.T) {
		l := c.list(widgetsIn("default") + "?resourceVersionMatch=Exact&resourceVersion=" + old)
		if l.Metadata.ResourceVersion != old {
			t.Errorf("list resourceVersion %s, want %s", l.Metadata.ResourceVersion, old)
		}
		if got := l.names(); !slices.Equal(got, []string{"a"}) || l.Items[0].Spec.Color != "Red" {
			t.Errorf("list at %s: %q, want a as it was (Red)", old, got)
		}
	})
	t.Run("NotOlderThan", func(t *testing.T) {
		// Any state at or after the revision may be served: from the
		// latest write's, it must hold every write.
		l := c.list(widgetsIn("default") + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + latest)
		if got := l.names(); !slices.Equal(got, []string{"a", "b"}) || l.Items[0].Spec.Color != "Blue" {
			t.Errorf("list not older than %s: %q, want a (Blue) and b", latest, got)
		}
		if mustRevision(t, "list", l.Metadata.ResourceVersion) < mustRevision(t, "latest", latest) {
			t.Errorf("list resourceVersion %s is older than %s", l.Metadata.ResourceVersion, latest)
		}
		// From an older one, a state no older than it: a is there.
		l = c.list(widgetsIn("default") + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + old)
		if got := l.names(); !slices.Contains(got, "a") || mustRevision(t, "list", l.Metadata.ResourceVersion) < mustRevision(t, "old", old) {
			t.Errorf("list not older than %s: %q at %s", old, got, l.Metadata.ResourceVersion)
		}
	})
}

// TestConcurrentCreateSameName races creates of one name: exactly one wins.
func TestConcurrentCreateSameName(t *testing.T) {
	_, c := newTestServer(t)
	const n = 8
	codes := make(chan int, n)
	body, _ := json.Marshal(newWidget("default", "race"))
	for range n {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, c.base+widgetsIn("default"), strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.hc.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	count := map[int]int{}
	for range n {
		count[<-codes]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
		t.Errorf("codes %v, want one 201 and %d 409", count, n-1)
	}
}
