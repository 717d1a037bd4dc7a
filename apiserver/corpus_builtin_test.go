package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// The built-in kinds the corpus server serves, and the bad input for them.

var corpusBuiltins = []apiserver.Option{apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents(),
	apiserver.WithCORSAllowedOrigins(corpusOrigin)} // a web console's, as kube-apiserver's --cors-allowed-origins (corpus_cors_test.go)

const (
	corpusNamespaces = "/api/v1/namespaces"
	corpusLeases     = "/apis/coordination.k8s.io/v1/namespaces/" + corpusNS + "/leases"
	corpusEvents     = "/api/v1/namespaces/" + corpusNS + "/events"
	corpusEventsV1   = "/apis/events.k8s.io/v1/namespaces/" + corpusNS + "/events"
)

// corpusSeedBuiltins makes what corpusSeed's objects need: the namespace
// other (default exists), and a lease.
func corpusSeedBuiltins(c *apiClient) {
	c.do(http.MethodPost, corpusNamespaces, doc{"apiVersion": "v1", "kind": "Namespace", "metadata": doc{"name": "other"}}).mustCode(c.t, http.StatusCreated)
	c.do(http.MethodPost, corpusLeases, leaseDoc("leader")).mustCode(c.t, http.StatusCreated)
}

func namespaceDoc(name string) doc {
	return doc{"apiVersion": "v1", "kind": "Namespace", "metadata": doc{"name": name}, "spec": doc{"finalizers": []any{"kubernetes"}}, "status": doc{"phase": "Active"}}
}

func leaseDoc(name string) doc {
	return doc{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": doc{"name": name},
		"spec": doc{"holderIdentity": "a", "leaseDurationSeconds": 15, "renewTime": "2026-11-25T11:00:00.000001Z"}}
}

func eventDoc(name string) doc {
	return doc{"apiVersion": "v1", "kind": "Event", "metadata": doc{"name": name},
		"involvedObject": doc{"kind": "Widget", "name": "a", "namespace": corpusNS}, "reason": "R", "message": "m",
		"eventTime": "2026-11-25T11:00:00.000001Z", "reportingComponent": "c", "reportingInstance": "i"}
}

func eventsV1Doc(name string) doc {
	return doc{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": doc{"name": name},
		"regarding": doc{"kind": "Widget", "name": "a"}, "eventTime": "2026-11-25T11:00:00.000001Z",
		"reportingController": "c", "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal",
		"series": doc{"count": 2, "lastObservedTime": "2026-11-25T11:00:01.000001Z"}}
}

// builtinCorpus is the bad input for namespaces (and their status and
// finalize subresources), leases and both kinds of event: broken bodies in
// every format, values of the wrong type, names and methods that are not
// served, and what their lifecycle refuses.
func builtinCorpus() []corpusCase {
	var cases []corpusCase
	add := func(name, method, path string, body []byte, code int, header ...string) {
		cases = append(cases, corpusCase{name: "builtin/" + name, method: method, path: path, body: body, code: code, header: header})
	}
	ct := func(contentType string) []string { return []string{"Content-Type", contentType} }
	targets := []struct {
		name, method, path string
		doc                doc
		tm                 kapi.TypeMeta
	}{
		{"namespace-create", http.MethodPost, corpusNamespaces, namespaceDoc("new"), kapi.TypeMeta{APIVersion: "v1", Kind: "Namespace"}},
		{"namespace-update", http.MethodPut, corpusNamespaces + "/other", namespaceDoc("other"), kapi.TypeMeta{APIVersion: "v1", Kind: "Namespace"}},
		{"namespace-status", http.MethodPut, corpusNamespaces + "/other/status", namespaceDoc("other"), kapi.TypeMeta{APIVersion: "v1", Kind: "Namespace"}},
		{"namespace-finalize", http.MethodPut, corpusNamespaces + "/other/finalize", namespaceDoc("other"), kapi.TypeMeta{APIVersion: "v1", Kind: "Namespace"}},
		{"lease-create", http.MethodPost, corpusLeases, leaseDoc("new"), kapi.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}},
		{"lease-update", http.MethodPut, corpusLeases + "/leader", leaseDoc("leader"), kapi.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}},
		{"lease-createonupdate", http.MethodPut, corpusLeases + "/absent", leaseDoc("absent"), kapi.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}},
		{"event-create", http.MethodPost, corpusEvents, eventDoc("new"), kapi.TypeMeta{APIVersion: "v1", Kind: "Event"}},
		{"event-createonupdate", http.MethodPut, corpusEvents + "/absent", eventDoc("absent"), kapi.TypeMeta{APIVersion: "v1", Kind: "Event"}},
		{"eventsv1-createonupdate", http.MethodPut, corpusEventsV1 + "/absent", eventsV1Doc("absent"), kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}},
		{"eventsv1-create", http.MethodPost, corpusEventsV1, eventsV1Doc("new"), kapi.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}},
	}
	type mutation struct {
		name string
		v    any
		path []any
	}
	big := json.Number("18446744073709551616")
	mutations := map[string][]mutation{
		"namespace": {
			{"spec string", "x", []any{"spec"}},
			{"finalizers string", "kubernetes", []any{"spec", "finalizers"}},
			{"finalizer number", 1, []any{"spec", "finalizers", 0}},
			{"status list", []any{}, []any{"status"}},
			{"phase number", 1, []any{"status", "phase"}},
			{"conditions map", doc{}, []any{"status", "conditions"}},
		},
		"lease": {
			{"holder number", 1, []any{"spec", "holderIdentity"}},
			{"duration string", "15s", []any{"spec", "leaseDurationSeconds"}},
			{"duration 2^64", big, []any{"spec", "leaseDurationSeconds"}},
			{"renewTime not a time", "yesterday", []any{"spec", "renewTime"}},
			{"renewTime year 10000", "10000-01-01T00:00:00.000000Z", []any{"spec", "renewTime"}},
			{"acquireTime number", 5, []any{"spec", "acquireTime"}},
			{"transitions 2^31", json.Number("2147483648"), []any{"spec", "leaseTransitions"}},
		},
		"event": {
			{"involvedObject string", "widget/a", []any{"involvedObject"}},
			{"eventTime not a time", "now", []any{"eventTime"}},
			{"count string", "3", []any{"count"}},
			{"series list", []any{}, []any{"series"}},
			{"lastTimestamp number", 0, []any{"lastTimestamp"}},
		},
		"eventsv1": {
			{"regarding list", []any{}, []any{"regarding"}},
			{"eventTime not a time", "2026-13-01T00:00:00.000000Z", []any{"eventTime"}},
			{"series count string", "1", []any{"series", "count"}},
			{"deprecatedCount 2^64", big, []any{"deprecatedCount"}},
		},
	}
	for _, tg := range targets {
		kind, _, _ := strings.Cut(tg.name, "-")
		for _, b := range []struct {
			name, contentType string
			body              []byte
		}{
			{"json truncated", mtJSON, []byte(`{"apiVersion":"v1","metadata":{"name":"x"`)},
			{"json null", mtJSON, []byte(`null`)},
			{"json array", mtJSON, []byte(`[{}]`)},
			{"json other kind", mtJSON, encJSON(with(deepCopy(tg.doc), "Widget", "kind"))},
			{"json other apiVersion", mtJSON, encJSON(with(deepCopy(tg.doc), "example.com/v1", "apiVersion"))},
			{"yaml tab", mtYAML, []byte("apiVersion: v1\n\tkind: x\n")},
			{"cbor garbage", mtCBOR, []byte{0xd9, 0xd9, 0xf7, 0xff, 0x00}},
			{"protobuf garbage", mtProtobuf, []byte("k8s\x00\x0a\xff\xff")},
			{"protobuf metadata of the wrong wire type", mtProtobuf, apiservertest.ProtoWrap(tg.tm, apiservertest.AppendProtoMessage(nil, 1, []byte{0x08, 0x05}))},
		} {
			add(fmt.Sprintf("body/%s/%s", tg.name, b.name), tg.method, tg.path, b.body, 0, ct(b.contentType)...)
		}
		for _, f := range textFormats {
			for _, m := range mutations[kind] {
				if f.name == "yaml" && m.v == any(big) {
					continue
				}
				add(fmt.Sprintf("type/%s/%s/%s", tg.name, f.name, m.name), tg.method, tg.path, f.encode(with(deepCopy(tg.doc), m.v, m.path...)), 400, ct(f.contentType)...)
			}
		}
	}

	// What the lifecycle of namespaces refuses.
	add("namespace/name not a label", http.MethodPost, corpusNamespaces, encJSON(namespaceDoc("a.b")), 422, ct(mtJSON)...)
	add("namespace/finalizer not qualified", http.MethodPost, corpusNamespaces, encJSON(with(namespaceDoc("new"), []any{"mine"}, "spec", "finalizers")), 422, ct(mtJSON)...)
	add("namespace/phase unknown", http.MethodPut, corpusNamespaces+"/other/status", encJSON(with(namespaceDoc("other"), doc{"phase": "Gone"}, "status")), 422, ct(mtJSON)...)
	add("namespace/delete default", http.MethodDelete, corpusNamespaces+"/default", nil, 403)
	add("namespace/delete kube-system", http.MethodDelete, corpusNamespaces+"/kube-system", nil, 403)
	add("namespace/create into a missing one", http.MethodPost, widgetsIn("nowhere"), encJSON(widgetDoc("new")), 404, ct(mtJSON)...)
	add("namespace/lease into a missing one", http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/nowhere/leases", encJSON(leaseDoc("new")), 404, ct(mtJSON)...)
	add("namespace/apply into a missing one", http.MethodPatch, widgetsIn("nowhere")+"/new?fieldManager=m", encJSON(widgetDoc("new")), 404, ct(ctApplyYAML)...)
	add("namespace/finalize a missing one", http.MethodPut, corpusNamespaces+"/nowhere/finalize", encJSON(namespaceDoc("nowhere")), 404, ct(mtJSON)...)
	add("namespace/finalize another name", http.MethodPut, corpusNamespaces+"/other/finalize", encJSON(namespaceDoc("default")), 400, ct(mtJSON)...)
	add("namespace/finalize stale", http.MethodPut, corpusNamespaces+"/other/finalize", encJSON(with(namespaceDoc("other"), "1", "metadata", "resourceVersion")), 409, ct(mtJSON)...)
	for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodPost, http.MethodDelete} {
		add("namespace/finalize "+method, method, corpusNamespaces+"/other/finalize", encJSON(namespaceDoc("other")), 405, ct(ctMergePatch)...)
	}
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		add("namespace/status "+method, method, corpusNamespaces+"/other/status", nil, 405)
	}
	add("namespace/deletecollection", http.MethodDelete, corpusNamespaces, nil, 405)
	add("namespace/unknown subresource", http.MethodGet, corpusNamespaces+"/other/bogus", nil, 404)
	add("namespace/put to a namespaced collection", http.MethodPut, widgetsIn(corpusNS), encJSON(widgetDoc("new")), 405, ct(mtJSON)...)
	add("namespace/patch to a namespaced collection", http.MethodPatch, widgetsIn(corpusNS), []byte(`{}`), 405, ct(ctMergePatch)...)

	// A PUT that would create (create on update) and cannot.
	add("createonupdate/uid precondition", http.MethodPut, corpusLeases+"/absent", encJSON(with(leaseDoc("absent"), "0b7d3a2e-0000-4000-8000-000000000000", "metadata", "uid")), 409, ct(mtJSON)...)
	add("createonupdate/into a missing namespace", http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/nowhere/leases/absent", encJSON(leaseDoc("absent")), 404, ct(mtJSON)...)
	add("createonupdate/another name", http.MethodPut, corpusLeases+"/absent", encJSON(leaseDoc("other")), 400, ct(mtJSON)...)
	add("createonupdate/name not a subdomain", http.MethodPut, corpusLeases+"/Absent", encJSON(leaseDoc("Absent")), 422, ct(mtJSON)...)
	add("createonupdate/status of a missing widget", http.MethodPut, widgetPath(corpusNS, "absent")+"/status", encJSON(widgetDoc("absent")), 404, ct(mtJSON)...)
	add("createonupdate/a missing widget", http.MethodPut, widgetPath(corpusNS, "absent"), encJSON(widgetDoc("absent")), 404, ct(mtJSON)...)

	// Field selectors the kinds do not have, or that do not parse.
	for _, sel := range []string{"involvedObject.bogus=a", "regarding.name=a", "source", "reason in (a)"} {
		add("selector/event "+sel, http.MethodGet, corpusEvents+"?fieldSelector="+url.QueryEscape(sel), nil, 400)
	}
	for _, sel := range []string{"involvedObject.name=a", "reportingComponent=c", "regarding.bogus=x"} {
		add("selector/eventsv1 "+sel, http.MethodGet, corpusEventsV1+"?fieldSelector="+url.QueryEscape(sel), nil, 400)
	}
	add("selector/namespace spec", http.MethodGet, corpusNamespaces+"?fieldSelector=spec.finalizers%3Dkubernetes", nil, 400)
	add("selector/lease holder set", http.MethodGet, corpusLeases+"?fieldSelector=spec.holderIdentity+in+(a)", nil, 400)
	return cases
}
