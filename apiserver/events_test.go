package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

const (
	coreEvents = "/api/v1/namespaces/default/events"
	newEvents  = "/apis/events.k8s.io/v1/namespaces/default/events"
)

func newEventsServer(t *testing.T, opts ...apiserver.Option) *apiClient {
	t.Helper()
	srv := apiservertest.New(t, widgetapi.Register, append([]apiserver.Option{apiserver.WithNamespaces(), apiserver.WithEvents()}, opts...)...)
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

func coreEvent(name, about, source, typ string) *builtin.Event {
	return &builtin.Event{
		TypeMeta:       kapi.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     kapi.ObjectMeta{Name: name},
		InvolvedObject: builtin.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "default", Name: about, UID: "uid-" + about},
		Reason:         "Reconciled", Message: "done", Type: typ, Source: builtin.EventSource{Component: source},
		FirstTimestamp: kapi.Now(), LastTimestamp: kapi.Now(), Count: 1,
	}
}

func names(t *testing.T, r *response) []string {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata kapi.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	r.mustCode(t, http.StatusOK).into(t, &list)
	var out []string
	for _, it := range list.Items {
		out = append(out, it.Metadata.Name)
	}
	slices.Sort(out)
	return out
}

// TestEventFieldSelectors: the field selectors kubectl describe, kubectl
// events and controllers send select the events they name, in both APIs.
func TestEventFieldSelectors(t *testing.T) {
	c := newEventsServer(t)
	c.do(http.MethodPost, coreEvents, coreEvent("e1", "a", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, coreEvents, coreEvent("e2", "a", "other", "Warning")).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, coreEvents, coreEvent("e3", "b", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	reported := coreEvent("e4", "b", "", "Normal")
	reported.ReportingController, reported.ReportingInstance = "ctrl", "ctrl-1"
	c.do(http.MethodPost, coreEvents, reported).mustCode(t, http.StatusCreated)
	for _, tc := range []struct {
		selector string
		want     []string
	}{
		// What kubectl describe wd a sends.
		{"involvedObject.name=a,involvedObject.namespace=default,involvedObject.kind=Widget,involvedObject.uid=uid-a", []string{"e1", "e2"}},
		{"involvedObject.apiVersion=example.com/v1,involvedObject.name=b", []string{"e3", "e4"}},
		{"type=Warning", []string{"e2"}},
		{"source=ctrl", []string{"e1", "e3", "e4"}}, // the source's component, else the reporting controller
		{"reportingComponent=ctrl", []string{"e4"}},
		{"reason!=Reconciled", nil},
	} {
		if got := names(t, c.get(coreEvents+"?fieldSelector="+tc.selector)); !slices.Equal(got, tc.want) {
			t.Errorf("core events with %s: %v, want %v", tc.selector, got, tc.want)
		}
	}

	for i, about := range []string{"a", "a", "b"} {
		c.do(http.MethodPost, newEvents, &builtin.EventsEvent{
			TypeMeta:   kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
			ObjectMeta: kapi.ObjectMeta{Name: string(rune('p' + i))},
			EventTime:  kapi.NowMicro(), ReportingController: "ctrl", ReportingInstance: "ctrl-1", Action: "Reconcile", Reason: "Observed", Type: "Normal",
			Regarding: builtin.ObjectReference{Kind: "Widget", Namespace: "default", Name: about},
		}).mustCode(t, http.StatusCreated)
	}
	if got := names(t, c.get(newEvents+"?fieldSelector=regarding.name=a,regarding.kind=Widget,reportingController=ctrl")); !slices.Equal(got, []string{"p", "q"}) {
		t.Errorf("events.k8s.io events regarding a: %v", got)
	}
}

// TestEventTable: kubectl get events shows kube's columns, the name only
// with -o wide.
func TestEventTable(t *testing.T) {
	c := newEventsServer(t)
	c.do(http.MethodPost, coreEvents, coreEvent("e1", "a", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	var table kapi.Table
	c.do(http.MethodGet, coreEvents, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").mustCode(t, http.StatusOK).into(t, &table)
	var shown []string
	for _, col := range table.ColumnDefinitions {
		if col.Priority == 0 {
			shown = append(shown, col.Name)
		}
	}
	if !slices.Equal(shown, []string{"Last Seen", "Type", "Reason", "Object", "Message"}) || len(table.Rows) != 1 {
		t.Fatalf("the table of events: columns %v, %d rows", shown, len(table.Rows))
	}
	if cells := table.Rows[0].Cells; cells[2] != "Normal" || cells[3] != "Reconciled" || cells[4] != "widget/a" || cells[5] != "done" {
		t.Errorf("the row of an event: %v", cells)
	}
	// kubectl get events.events.k8s.io: the same row, from the same event
	// (Last Seen is an age: it may have moved on between the two reads).
	var other kapi.Table
	c.do(http.MethodGet, newEvents, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").mustCode(t, http.StatusOK).into(t, &other)
	if len(other.Rows) != 1 || fmt.Sprint(other.Rows[0].Cells[2:]) != fmt.Sprint(table.Rows[0].Cells[2:]) || other.Rows[0].Cells[1] == "" {
		t.Errorf("the table of events.k8s.io/v1 events: %v, want the row %v", other.Rows, table.Rows[0].Cells)
	}
}

// TestEventTTL: events go once their time to live has passed since their
// last write, in both APIs.
func TestEventTTL(t *testing.T) {
	c := newEventsServer(t, apiserver.WithEventTTL(time.Second))
	c.do(http.MethodPost, coreEvents, coreEvent("e1", "a", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, newEvents, &builtin.EventsEvent{TypeMeta: kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: kapi.ObjectMeta{Name: "p"}, EventTime: kapi.NowMicro(), ReportingController: "c", ReportingInstance: "i", Action: "A", Reason: "R"}).mustCode(t, http.StatusCreated)
	for _, path := range []string{coreEvents + "/e1", newEvents + "/p"} {
		for end := time.Now().Add(deadline); c.get(path).Code != http.StatusNotFound; {
			if time.Now().After(end) {
				t.Fatalf("%s is still there after %v", path, deadline)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if _, err := apiserver.New(apiserver.WithEventTTL(0)); err == nil {
		t.Error("WithEventTTL(0): no error")
	}
}

// TestEventsOneStorage: an event written through either API is read through
// both, its fields mapped as kube-apiserver maps them (regarding is
// involvedObject, note is message, deprecatedCount is count...), and
// updated or deleted through one, it changes or goes in the other.
func TestEventsOneStorage(t *testing.T) {
	c := newEventsServer(t)
	first, last, at := kapi.NewTime(time.Unix(1000, 0)), kapi.NewTime(time.Unix(2000, 0)), kapi.NewMicroTime(time.Unix(3000, 5000))
	related := &builtin.ObjectReference{Kind: "WidgetClass", Name: "big"}
	series := &builtin.EventSeries{Count: 4, LastObservedTime: at}
	core := coreEvent("e1", "a", "ctrl", "Warning")
	core.FirstTimestamp, core.LastTimestamp, core.Count = first, last, 7
	core.EventTime, core.Series, core.Action, core.Related = at, series, "Scale", related
	core.ReportingController, core.ReportingInstance, core.Source.Host = "ctrl", "ctrl-1", "node-1"
	var created builtin.Event
	c.do(http.MethodPost, coreEvents, core).mustCode(t, http.StatusCreated).into(t, &created)

	var seen builtin.EventsEvent
	c.get(newEvents+"/e1").mustCode(t, http.StatusOK).into(t, &seen)
	if seen.APIVersion != "events.k8s.io/v1" || seen.Kind != "Event" || seen.UID != created.UID || seen.ResourceVersion != created.ResourceVersion {
		t.Errorf("events.k8s.io/v1 reads the core event as %s %s uid %s rv %s, want uid %s rv %s", seen.APIVersion, seen.Kind, seen.UID, seen.ResourceVersion, created.UID, created.ResourceVersion)
	}
	if seen.Regarding != core.InvolvedObject || seen.Note != "done" || seen.Reason != "Reconciled" || seen.Type != "Warning" ||
		seen.DeprecatedSource != (builtin.EventSource{Component: "ctrl", Host: "node-1"}) || seen.DeprecatedCount != 7 ||
		!seen.DeprecatedFirstTimestamp.Equal(first.Time) || !seen.DeprecatedLastTimestamp.Equal(last.Time) ||
		!seen.EventTime.Equal(at.Time) || seen.Series == nil || seen.Series.Count != 4 || !seen.Series.LastObservedTime.Equal(at.Time) ||
		seen.Action != "Scale" || seen.Related == nil || *seen.Related != *related ||
		seen.ReportingController != "ctrl" || seen.ReportingInstance != "ctrl-1" {
		t.Errorf("the core event as events.k8s.io/v1: %+v", seen)
	}

	// Written through events.k8s.io/v1, read through core/v1.
	c.do(http.MethodPost, newEvents, &builtin.EventsEvent{
		TypeMeta: kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}, ObjectMeta: kapi.ObjectMeta{Name: "p"},
		EventTime: at, Series: series, ReportingController: "new-ctrl", ReportingInstance: "new-ctrl-1", Action: "Reconcile", Reason: "Observed",
		Regarding: builtin.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "default", Name: "b"}, Related: related,
		Note: "generation 1", Type: "Normal", DeprecatedCount: 2, DeprecatedFirstTimestamp: first, DeprecatedLastTimestamp: last,
	}).mustCode(t, http.StatusCreated)
	var back builtin.Event
	c.get(coreEvents+"/p").mustCode(t, http.StatusOK).into(t, &back)
	if back.APIVersion != "v1" || back.InvolvedObject.Name != "b" || back.InvolvedObject.Kind != "Widget" || back.Message != "generation 1" ||
		back.Reason != "Observed" || back.Type != "Normal" || back.Action != "Reconcile" || back.Count != 2 ||
		!back.FirstTimestamp.Equal(first.Time) || !back.LastTimestamp.Equal(last.Time) || !back.EventTime.Equal(at.Time) ||
		back.Series == nil || back.Series.Count != 4 || back.Related == nil || *back.Related != *related ||
		back.ReportingController != "new-ctrl" || back.ReportingInstance != "new-ctrl-1" || back.Source != (builtin.EventSource{}) {
		t.Errorf("the events.k8s.io event as core/v1: %+v", back)
	}
	for _, path := range []string{coreEvents, newEvents} {
		if got := names(t, c.get(path)); !slices.Equal(got, []string{"e1", "p"}) {
			t.Errorf("%s lists %v, want both events", path, got)
		}
	}

	// An update through one API is what the other reads; a delete through
	// one removes the event from both.
	seen.Note = "changed"
	var updated builtin.EventsEvent
	c.do(http.MethodPut, newEvents+"/e1", &seen).mustCode(t, http.StatusOK).into(t, &updated)
	c.get(coreEvents+"/e1").mustCode(t, http.StatusOK).into(t, &back)
	if back.Message != "changed" || back.Count != 7 || back.Source.Host != "node-1" || back.ResourceVersion != updated.ResourceVersion {
		t.Errorf("after an update through events.k8s.io/v1, core/v1 reads message %q count %d source %+v rv %s (want rv %s)",
			back.Message, back.Count, back.Source, back.ResourceVersion, updated.ResourceVersion)
	}
	// Server-side apply through one API, of a field the other API's manager
	// owns under another name: a conflict, found across the two.
	apply := []byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"note":"applied"}`)
	c.do(http.MethodPatch, newEvents+"/e1?fieldManager=applier", apply, "Content-Type", "application/apply-patch+yaml").failure(t, http.StatusConflict, kapi.StatusReasonConflict)
	c.do(http.MethodPatch, newEvents+"/e1?fieldManager=applier&force=true", apply, "Content-Type", "application/apply-patch+yaml").mustCode(t, http.StatusOK)
	c.get(coreEvents+"/e1").mustCode(t, http.StatusOK).into(t, &back)
	if back.Message != "applied" {
		t.Errorf("after an apply through events.k8s.io/v1, core/v1 reads message %q", back.Message)
	}
	c.do(http.MethodDelete, coreEvents+"/p", nil).mustCode(t, http.StatusOK)
	c.get(newEvents+"/p").mustCode(t, http.StatusNotFound)
	c.do(http.MethodPost, newEvents, &builtin.EventsEvent{TypeMeta: kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: kapi.ObjectMeta{Name: "e1"}, EventTime: at, ReportingController: "c", ReportingInstance: "i", Action: "A", Reason: "R"}).mustCode(t, http.StatusConflict)
}

// TestEventsFieldSelectorsAcross: each API selects with its own field names
// the events written through the other, and refuses the other's names.
func TestEventsFieldSelectorsAcross(t *testing.T) {
	c := newEventsServer(t)
	c.do(http.MethodPost, coreEvents, coreEvent("e1", "a", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, newEvents, &builtin.EventsEvent{TypeMeta: kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: kapi.ObjectMeta{Name: "p"}, EventTime: kapi.NowMicro(), ReportingController: "new-ctrl", ReportingInstance: "i", Action: "A", Reason: "R", Type: "Warning",
		Regarding: builtin.ObjectReference{Kind: "Widget", Namespace: "default", Name: "a"}}).mustCode(t, http.StatusCreated)
	for _, tc := range []struct {
		path, selector string
		want           []string
	}{
		{newEvents, "regarding.name=a,regarding.kind=Widget", []string{"e1", "p"}},
		{newEvents, "reportingController=new-ctrl", []string{"p"}},
		{newEvents, "regarding.uid=uid-a", []string{"e1"}},
		{coreEvents, "involvedObject.name=a,involvedObject.kind=Widget", []string{"e1", "p"}},
		{coreEvents, "reportingComponent=new-ctrl", []string{"p"}},
		{coreEvents, "source=new-ctrl", []string{"p"}},
		{coreEvents, "type=Warning", []string{"p"}},
	} {
		if got := names(t, c.get(tc.path+"?fieldSelector="+tc.selector)); !slices.Equal(got, tc.want) {
			t.Errorf("%s with %s: %v, want %v", tc.path, tc.selector, got, tc.want)
		}
	}
	c.get(newEvents+"?fieldSelector=involvedObject.name=a").failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
	c.get(coreEvents+"?fieldSelector=regarding.name=a").failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
}

// TestEventsWatchAcross: a watch of either API, with its own field
// selector, sees the events written through the other, in its own form.
func TestEventsWatchAcross(t *testing.T) {
	c := newEventsServer(t)
	var list struct {
		Metadata kapi.ListMeta `json:"metadata"`
	}
	c.get(coreEvents).mustCode(t, http.StatusOK).into(t, &list)
	rv := list.Metadata.ResourceVersion
	if rv == "" {
		t.Fatal("a list of events has no resourceVersion")
	}
	// From a resourceVersion: the watches see every write after it, however
	// late their handlers start watching.
	newWatch := c.watch(newEvents + "?watch=true&fieldSelector=regarding.name=a&resourceVersion=" + rv)
	coreWatch := c.watch(coreEvents + "?watch=true&fieldSelector=involvedObject.name=a&resourceVersion=" + rv)
	c.do(http.MethodPost, coreEvents, coreEvent("e0", "b", "ctrl", "Normal")).mustCode(t, http.StatusCreated) // about b: neither sees it
	c.do(http.MethodPost, coreEvents, coreEvent("e1", "a", "ctrl", "Normal")).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, newEvents, &builtin.EventsEvent{TypeMeta: kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: kapi.ObjectMeta{Name: "p"}, EventTime: kapi.NowMicro(), ReportingController: "c", ReportingInstance: "i", Action: "A", Reason: "R",
		Note: "new", Regarding: builtin.ObjectReference{Kind: "Widget", Namespace: "default", Name: "a"}}).mustCode(t, http.StatusCreated)
	c.do(http.MethodDelete, newEvents+"/e1", nil).mustCode(t, http.StatusOK)

	for _, want := range []struct{ typ, name, note string }{{"ADDED", "e1", "done"}, {"ADDED", "p", "new"}, {"DELETED", "e1", "done"}} {
		var e builtin.EventsEvent
		if ev := newWatch.next(); ev.Type != want.typ || json.Unmarshal(ev.Object, &e) != nil || e.Name != want.name || e.Note != want.note || e.APIVersion != "events.k8s.io/v1" {
			t.Errorf("the events.k8s.io/v1 watch: %s %s, want %s of %s with note %q", ev.Type, ev.Object, want.typ, want.name, want.note)
		}
		var o builtin.Event
		if ev := coreWatch.next(); ev.Type != want.typ || json.Unmarshal(ev.Object, &o) != nil || o.Name != want.name || o.Message != want.note || o.APIVersion != "v1" {
			t.Errorf("the core/v1 watch: %s %s, want %s of %s with message %q", ev.Type, ev.Object, want.typ, want.name, want.note)
		}
	}
}

// TestEventsDiscovery: both APIs name the same storage, as kube-apiserver's
// discovery does (the same storageVersionHash, r2yiGXH7wu8=).
func TestEventsDiscovery(t *testing.T) {
	c := newEventsServer(t)
	hashes := map[string]string{}
	for _, path := range []string{"/api/v1", "/apis/events.k8s.io/v1"} {
		var list struct {
			Resources []struct {
				Name               string `json:"name"`
				StorageVersionHash string `json:"storageVersionHash"`
			} `json:"resources"`
		}
		c.get(path).mustCode(t, http.StatusOK).into(t, &list)
		for _, r := range list.Resources {
			if r.Name == "events" {
				hashes[path] = r.StorageVersionHash
			}
		}
	}
	if hashes["/api/v1"] != "r2yiGXH7wu8=" || hashes["/apis/events.k8s.io/v1"] != "r2yiGXH7wu8=" {
		t.Errorf("storageVersionHash of events: %v, want kube's r2yiGXH7wu8= in both", hashes)
	}
}
