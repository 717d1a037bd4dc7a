package apiserver_test

import (
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
