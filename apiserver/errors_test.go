package apiserver_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// bigWidget is a valid widget whose JSON is a little over n bytes.
func bigWidget(name string, n int) string {
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name +
		`","annotations":{"big":"` + strings.Repeat("x", n) + `"}},"spec":{"color":"Red"}}`
}

// TestErrorMatrix sends bad requests of every kind. Each must get a JSON
// Status with the right code and reason — never a 500 — and none may change
// what is stored.
func TestErrorMatrix(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	b := newWidget("default", "b")
	b.Labels = map[string]string{"app": "b"}
	c.create(b)
	before := c.get(allWidgets).mustCode(t, http.StatusOK)
	classesBefore := c.get(widgetClasses).mustCode(t, http.StatusOK)

	const limit = 3 << 20
	valid := func(name string) string {
		return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"color":"Red"}}`
	}
	a := widgetPath("default", "a")
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		header  []string
		code    int
		reason  kapi.StatusReason
		message string // exact, when set
		check   func(t *testing.T, st kapi.Status)
	}{
		{name: "malformed JSON", method: "POST", path: widgetsIn("default"), body: `{"metadata":{"name":"m"`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "malformed JSON on PUT", method: "PUT", path: a, body: `{"metadata":`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "not an object", method: "POST", path: widgetsIn("default"), body: `[1,2,3]`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "empty body", method: "POST", path: widgetsIn("default"), body: ``,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "wrong field type", method: "POST", path: widgetsIn("default"),
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"t"},"spec":{"color":"Red","replicas":"three"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest,
			check: func(t *testing.T, st kapi.Status) {
				if !strings.HasPrefix(st.Message, `Widget in version "v1" cannot be handled as a Widget: `) {
					t.Errorf("message %q, want kube's prefix", st.Message)
				}
			}},
		{name: "body over 3 MiB", method: "POST", path: widgetsIn("default"), body: bigWidget("big", limit+1024),
			code: 413, reason: kapi.StatusReasonRequestEntityTooLarge, message: "Request entity too large: limit is 3145728"},
		{name: "body over 3 MiB on PUT", method: "PUT", path: a, body: bigWidget("a", limit+1024),
			code: 413, reason: kapi.StatusReasonRequestEntityTooLarge, message: "Request entity too large: limit is 3145728"},
		{name: "body over 3 MiB on PATCH", method: "PATCH", path: a, body: bigWidget("a", limit+1024), header: []string{"Content-Type", "application/merge-patch+json"},
			code: 413, reason: kapi.StatusReasonRequestEntityTooLarge, message: "Request entity too large: limit is 3145728"},
		{name: "invalid name", method: "POST", path: widgetsIn("default"), body: valid("Bad_Name"),
			code: 422, reason: kapi.StatusReasonInvalid,
			check: func(t *testing.T, st kapi.Status) {
				if !strings.HasPrefix(st.Message, `Widget.example.com "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`) {
					t.Errorf("message %q", st.Message)
				}
				if !hasCause(st, "metadata.name", kapi.CauseTypeFieldValueInvalid) {
					t.Errorf("causes %+v", st.Details)
				}
			}},
		{name: "unknown resource", method: "GET", path: groupVersionPath + "/namespaces/default/gizmos",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "unknown resource item", method: "GET", path: groupVersionPath + "/gizmos/x",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "unknown group", method: "GET", path: "/apis/nope.example/v1/things",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "unknown version", method: "GET", path: "/apis/example.com/v2/widgets",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "unknown path", method: "GET", path: "/nothing/here",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "missing object", method: "GET", path: widgetPath("default", "missing"),
			code: 404, reason: kapi.StatusReasonNotFound, message: `widgets.example.com "missing" not found`,
			check: func(t *testing.T, st kapi.Status) {
				if d := st.Details; d == nil || d.Name != "missing" || d.Group != "example.com" || d.Kind != "widgets" {
					t.Errorf("details %+v", d)
				}
			}},
		{name: "delete of a missing object", method: "DELETE", path: widgetPath("default", "missing"),
			code: 404, reason: kapi.StatusReasonNotFound, message: `widgets.example.com "missing" not found`},
		{name: "PATCH on a collection", method: "PATCH", path: widgetsIn("default"), body: `{}`, header: []string{"Content-Type", "application/merge-patch+json"},
			code: 405, reason: kapi.StatusReasonMethodNotAllowed},
		{name: "POST on an item", method: "POST", path: a, body: valid("a"),
			code: 405, reason: kapi.StatusReasonMethodNotAllowed},
		{name: "POST across namespaces", method: "POST", path: allWidgets, body: valid("c"),
			code: 405, reason: kapi.StatusReasonMethodNotAllowed},
		{name: "unknown Content-Type", method: "POST", path: widgetsIn("default"), body: valid("c"), header: []string{"Content-Type", "text/plain"},
			code: 415, reason: kapi.StatusReasonUnsupportedMediaType},
		{name: "unknown Content-Type on PUT", method: "PUT", path: a, body: valid("a"), header: []string{"Content-Type", "application/x-bogus"},
			code: 415, reason: kapi.StatusReasonUnsupportedMediaType},
		{name: "unknown patch Content-Type", method: "PATCH", path: a, body: `{}`, header: []string{"Content-Type", "text/plain"},
			code: 415, reason: kapi.StatusReasonUnsupportedMediaType},
		{name: "Accept nothing servable on get", method: "GET", path: a, header: []string{"Accept", "application/protobuf-nonsense"},
			code: 406, reason: kapi.StatusReasonNotAcceptable},
		{name: "Accept nothing servable on list", method: "GET", path: widgetsIn("default"), header: []string{"Accept", "application/protobuf-nonsense"},
			code: 406, reason: kapi.StatusReasonNotAcceptable},
		{name: "kind mismatch", method: "POST", path: widgetsIn("default"),
			body: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"k"},"spec":{"color":"Red"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "apiVersion mismatch", method: "POST", path: widgetsIn("default"),
			body: `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"k"},"spec":{"color":"Red"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "kind mismatch on PUT", method: "PUT", path: a,
			body: `{"apiVersion":"example.com/v1","kind":"WidgetClass","metadata":{"name":"a"},"spec":{"color":"Red"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "namespace mismatch", method: "POST", path: widgetsIn("default"),
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"n","namespace":"other"},"spec":{"color":"Red"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "namespace mismatch on PUT", method: "PUT", path: a,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"other"},"spec":{"color":"Blue"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "name mismatch on PUT", method: "PUT", path: a, body: valid("b"),
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "strict with an unknown field", method: "POST", path: widgetsIn("default") + "?fieldValidation=Strict",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"color":"Red","bogus":1}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "strict with an unknown field on PUT", method: "PUT", path: a + "?fieldValidation=Strict",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"Blue"},"extra":true}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "unknown fieldValidation", method: "POST", path: widgetsIn("default") + "?fieldValidation=Bogus", body: valid("v"),
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid labelSelector", method: "GET", path: widgetsIn("default") + "?labelSelector=app%20in%20(a",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid labelSelector value", method: "GET", path: widgetsIn("default") + "?labelSelector=app%3D-bad-",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid labelSelector on deletecollection", method: "DELETE", path: widgetsIn("default") + "?labelSelector=app%20in%20(a",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "unsupported fieldSelector field", method: "GET", path: widgetsIn("default") + "?fieldSelector=spec.size%3D1",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "unsupported fieldSelector field on watch", method: "GET", path: widgetsIn("default") + "?watch=true&fieldSelector=spec.size%3D1",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "malformed fieldSelector", method: "GET", path: widgetsIn("default") + "?fieldSelector=metadata.name",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "malformed continue token", method: "GET", path: widgetsIn("default") + "?limit=1&continue=not-a-token",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "continue token of base64 garbage", method: "GET", path: widgetsIn("default") + "?limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTF9",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid resourceVersion on get", method: "GET", path: a + "?resourceVersion=abc",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid resourceVersion on list", method: "GET", path: widgetsIn("default") + "?resourceVersion=abc",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid resourceVersion on watch", method: "GET", path: widgetsIn("default") + "?watch=true&resourceVersion=abc",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid resourceVersion on watch=1", method: "GET", path: allWidgets + "?watch=1&resourceVersion=abc",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid resourceVersion in a PUT body", method: "PUT", path: a,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","resourceVersion":"abc"},"spec":{"color":"Blue"}}`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid limit", method: "GET", path: widgetsIn("default") + "?limit=many",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "invalid timeoutSeconds", method: "GET", path: widgetsIn("default") + "?watch=true&timeoutSeconds=soon",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "dryRun=Bogus", method: "POST", path: widgetsIn("default") + "?dryRun=Bogus", body: valid("d"),
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "dryRun=Bogus on PUT", method: "PUT", path: a + "?dryRun=Bogus", body: valid("a"),
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "dryRun=Bogus on DELETE", method: "DELETE", path: a + "?dryRun=Bogus",
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "undecodable DeleteOptions", method: "DELETE", path: a, body: `{"propagationPolicy":`,
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "unknown propagationPolicy", method: "DELETE", path: a, body: `{"propagationPolicy":"Sideways"}`,
			code: 422, reason: kapi.StatusReasonInvalid},
		{name: "malformed JSON patch", method: "PATCH", path: a, body: `{"op":"replace"}`, header: []string{"Content-Type", "application/json-patch+json"},
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "malformed merge patch", method: "PATCH", path: a, body: `{"spec":`, header: []string{"Content-Type", "application/merge-patch+json"},
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "merge patch with a wrong field type", method: "PATCH", path: a, body: `{"spec":{"replicas":"three"}}`, header: []string{"Content-Type", "application/merge-patch+json"},
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "patch renaming the object", method: "PATCH", path: a, body: `{"metadata":{"name":"z"}}`, header: []string{"Content-Type", "application/merge-patch+json"},
			code: 400, reason: kapi.StatusReasonBadRequest},
		{name: "resourceVersionMatch on watch without sendInitialEvents", method: "GET",
			path: widgetsIn("default") + "?watch=true&resourceVersionMatch=NotOlderThan",
			code: 422, reason: kapi.StatusReasonInvalid,
			check: func(t *testing.T, st kapi.Status) {
				if d := st.Details; d == nil || d.Kind != "ListOptions" || d.Group != "meta.k8s.io" || len(d.Causes) != 1 ||
					d.Causes[0].Type != kapi.CauseTypeFieldValueForbidden || d.Causes[0].Field != "resourceVersionMatch" {
					t.Errorf("details %+v, want kind ListOptions, group meta.k8s.io, one Forbidden cause on resourceVersionMatch", d)
				}
				if !strings.HasPrefix(st.Message, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: `) {
					t.Errorf("message %q", st.Message)
				}
			}},
		{name: "sendInitialEvents without resourceVersionMatch", method: "GET",
			path: widgetsIn("default") + "?watch=true&sendInitialEvents=true",
			code: 422, reason: kapi.StatusReasonInvalid,
			check: func(t *testing.T, st kapi.Status) {
				if d := st.Details; d == nil || d.Kind != "ListOptions" || d.Group != "meta.k8s.io" {
					t.Errorf("details %+v", d)
				}
			}},
		{name: "sendInitialEvents on a list", method: "GET", path: widgetsIn("default") + "?sendInitialEvents=true",
			code: 422, reason: kapi.StatusReasonInvalid},
		{name: "subresource of a cluster-scoped kind", method: "GET", path: widgetClasses + "/x/status",
			code: 404, reason: kapi.StatusReasonNotFound},
		{name: "namespaced path of a cluster-scoped kind", method: "POST", path: groupVersionPath + "/namespaces/default/widgetclasses",
			body: `{"metadata":{"name":"c"}}`, code: 404, reason: kapi.StatusReasonNotFound},
		{name: "stale resourceVersion", method: "PUT", path: widgetPath("default", "b"), // b was written after revision 1
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b","resourceVersion":"1"},"spec":{"color":"Blue"}}`,
			code: 409, reason: kapi.StatusReasonConflict},
		{name: "already exists", method: "POST", path: widgetsIn("default"), body: valid("a"),
			code: 409, reason: kapi.StatusReasonAlreadyExists},
		{name: "invalid spec", method: "PUT", path: a,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"purple"}}`,
			code: 422, reason: kapi.StatusReasonInvalid},
		{name: "JSON patch test fails", method: "PATCH", path: a, header: []string{"Content-Type", "application/json-patch+json"},
			body: `[{"op":"test","path":"/spec/color","value":"Blue"}]`,
			code: 422, reason: kapi.StatusReasonInvalid, message: "the server rejected our request due to an error in our request"},
		{name: "apply without fieldManager", method: "PATCH", path: a, body: valid("a"), header: []string{"Content-Type", "application/apply-patch+yaml"},
			code: 422, reason: kapi.StatusReasonInvalid, message: `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, tc.body, tc.header...)
			st := r.failure(t, tc.code, tc.reason)
			t.Logf("%d %s: %s", st.Code, st.Reason, st.Message)
			if tc.message != "" && st.Message != tc.message {
				t.Errorf("message %q, want %q", st.Message, tc.message)
			}
			if st.Message == "" {
				t.Error("the Status has no message")
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}

	after := c.get(allWidgets).mustCode(t, http.StatusOK)
	if !bytes.Equal(before.Body, after.Body) {
		t.Errorf("the bad requests changed what is stored:\nbefore %s\nafter  %s", before.Body, after.Body)
	}
	if classesAfter := c.get(widgetClasses).mustCode(t, http.StatusOK); !bytes.Equal(classesBefore.Body, classesAfter.Body) {
		t.Errorf("the bad requests changed widget classes:\nbefore %s\nafter  %s", classesBefore.Body, classesAfter.Body)
	}
	// The server still serves.
	c.create(newWidget("default", "still-works"))
}

// TestDecodeErrorMessages checks kube-apiserver's wording of decoding
// errors: strict decoding names every duplicate and unknown field by its full
// path, Warn (the default) sends one Warning header per problem, and no
// message carries kapi's internal error text.
func TestDecodeErrorMessages(t *testing.T) {
	_, c := newTestServer(t)
	const prefix = `Widget in version "v1" cannot be handled as a Widget: `

	t.Run("strict unknown field", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"color":"Red","bogus":1}}`
		st := c.do(http.MethodPost, widgetsIn("default")+"?fieldValidation=Strict", body).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if want := prefix + `strict decoding error: unknown field "spec.bogus"`; st.Message != want {
			t.Errorf("message %q,\nwant    %q", st.Message, want)
		}
	})
	t.Run("strict duplicate and unknown fields", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","extra":1,"metadata":{"name":"s"},"spec":{"color":"Red","color":"Blue","bogus":1}}`
		st := c.do(http.MethodPost, widgetsIn("default")+"?fieldValidation=Strict", body).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if want := prefix + `strict decoding error: duplicate field "spec.color", unknown field "extra", unknown field "spec.bogus"`; st.Message != want {
			t.Errorf("message %q,\nwant    %q", st.Message, want)
		}
		if st.Details != nil && len(st.Details.Causes) > 0 {
			t.Errorf("causes %+v, want none", st.Details.Causes)
		}
	})
	t.Run("warn", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red","color":"Blue","bogus":1}}`
		r := c.do(http.MethodPost, widgetsIn("default"), body).mustCode(t, http.StatusCreated)
		warnings := r.Header.Values("Warning")
		for _, want := range []string{`299 - "unknown field \"spec.bogus\""`, `299 - "duplicate field \"spec.color\""`} {
			if !slices.Contains(warnings, want) {
				t.Errorf("Warning headers %q lack %q", warnings, want)
			}
		}
		if w := r.widget(t); w.Spec.Color != "Blue" {
			t.Errorf("color %q, want the last duplicate (Blue)", w.Spec.Color)
		}
	})
	t.Run("ignore", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"i"},"spec":{"color":"Red","bogus":1}}`
		r := c.do(http.MethodPost, widgetsIn("default")+"?fieldValidation=Ignore", body).mustCode(t, http.StatusCreated)
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("fieldValidation=Ignore sent warnings %q", w)
		}
	})
	// An unknown field and a fatal error: only the fatal error, whatever
	// fieldValidation says, as kube's decoder returns strict errors only
	// once decoding succeeded; no warning of the unknown field either.
	t.Run("fatal error and unknown field", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"f"},"bogus":1,"spec":{"color":"Red","size":"big","extra":true}}`
		for _, fv := range []string{"", "?fieldValidation=Warn", "?fieldValidation=Strict", "?fieldValidation=Ignore"} {
			r := c.do(http.MethodPost, widgetsIn("default")+fv, body)
			st := r.failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
			if !strings.HasPrefix(st.Message, prefix) || strings.Contains(st.Message, "strict decoding error") ||
				strings.Contains(st.Message, "bogus") || !strings.Contains(st.Message, "size") {
				t.Errorf("%q: message %q, want the type error of spec.size only", fv, st.Message)
			}
			if w := r.Header.Values("Warning"); len(w) != 0 {
				t.Errorf("%q: warnings %q, want none", fv, w)
			}
		}
	})
	t.Run("no internal text", func(t *testing.T) {
		for _, body := range []string{`{"metadata":`, ``, `{"spec":{"replicas":"three"}}`} {
			st := c.do(http.MethodPost, widgetsIn("default"), body).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
			if !strings.HasPrefix(st.Message, prefix) || strings.Contains(st.Message, "undecodable body") {
				t.Errorf("body %q: message %q, want kube's prefix and no internal error text", body, st.Message)
			}
		}
	})
}

// TestBodyLimitOption checks that WithMaxRequestBodyBytes sets the limit.
func TestBodyLimitOption(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithMaxRequestBodyBytes(2048))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	st := c.do(http.MethodPost, widgetsIn("default"), bigWidget("big", 4096)).failure(t, http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge)
	if st.Message != "Request entity too large: limit is 2048" {
		t.Errorf("message %q", st.Message)
	}
	c.do(http.MethodPost, widgetsIn("default"), bigWidget("small", 1024)).mustCode(t, http.StatusCreated)
}

// TestDryRun checks that dryRun=All on every kind of write answers as the
// write would but stores nothing, sends no watch event and consumes no
// resourceVersion.
func TestDryRun(t *testing.T) {
	_, c := newTestServer(t)
	real := c.create(newWidget("default", "wet"))
	held := newWidget("default", "held")
	held.Finalizers = []string{"example.com/hold"}
	held = c.create(held)
	rv := held.ResourceVersion
	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + rv)
	defer ws.stop()

	merge, apply := []string{"Content-Type", "application/merge-patch+json"}, []string{"Content-Type", "application/apply-patch+yaml"}
	for _, tc := range []struct {
		name, method, path string
		body               any
		header             []string
		code               int
		check              func(t *testing.T, r *response)
	}{
		{"create", http.MethodPost, widgetsIn("default"), newWidget("default", "dry"), nil, http.StatusCreated, func(t *testing.T, r *response) {
			if w := r.widget(t); w.Name != "dry" || *w.Spec.Replicas != 1 || w.UID == "" || w.ResourceVersion != "" {
				t.Errorf("answered %+v", w)
			}
		}},
		{"update", http.MethodPut, widgetPath("default", "wet"), func() *widgetapi.Widget { w := *real; w.Spec = widgetapi.WidgetSpec{Color: "Blue"}; return &w }(), nil, http.StatusOK, func(t *testing.T, r *response) {
			if w := r.widget(t); w.Spec.Color != "Blue" || w.Generation != real.Generation+1 {
				t.Errorf("answered %+v", w)
			}
		}},
		{"merge patch", http.MethodPatch, widgetPath("default", "wet"), `{"spec":{"color":"Green"}}`, merge, http.StatusOK, func(t *testing.T, r *response) {
			if w := r.widget(t); w.Spec.Color != "Green" {
				t.Errorf("answered %+v", w.Spec)
			}
		}},
		{"json patch", http.MethodPatch, widgetPath("default", "wet"), `[{"op":"replace","path":"/spec/color","value":"Green"}]`, []string{"Content-Type", "application/json-patch+json"}, http.StatusOK, nil},
		{"strategic merge patch", http.MethodPatch, widgetPath("default", "wet"), `{"spec":{"ports":[{"name":"http","port":80}]}}`, []string{"Content-Type", "application/strategic-merge-patch+json"}, http.StatusOK, nil},
		{"apply (update)", http.MethodPatch, widgetPath("default", "wet") + "?fieldManager=m&force=true", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"wet"},"spec":{"color":"Blue"}}`, apply, http.StatusOK, nil},
		{"apply (create)", http.MethodPatch, widgetPath("default", "fresh") + "?fieldManager=m", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"fresh"},"spec":{"color":"Blue"}}`, apply, http.StatusCreated, nil},
		{"status", http.MethodPatch, widgetPath("default", "wet") + "/status", `{"status":{"replicas":5}}`, merge, http.StatusOK, nil},
		{"scale", http.MethodPatch, widgetPath("default", "wet") + "/scale", `{"spec":{"replicas":5}}`, merge, http.StatusOK, nil},
		{"delete", http.MethodDelete, widgetPath("default", "wet"), nil, nil, http.StatusOK, nil},
		{"delete (options body)", http.MethodDelete, widgetPath("default", "wet"), `{"dryRun":["All"]}`, nil, http.StatusOK, nil},
		{"delete with finalizers", http.MethodDelete, widgetPath("default", "held"), nil, nil, http.StatusOK, func(t *testing.T, r *response) {
			if w := r.widget(t); w.DeletionTimestamp == nil {
				t.Errorf("answered without deletionTimestamp: %+v", w.ObjectMeta)
			}
		}},
		{"deletecollection", http.MethodDelete, widgetsIn("default"), nil, nil, http.StatusOK, func(t *testing.T, r *response) {
			var l widgetList
			if r.into(t, &l); len(l.Items) != 2 {
				t.Errorf("answered %d items, want 2", len(l.Items))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.body != `{"dryRun":["All"]}` {
				if strings.Contains(path, "?") {
					path += "&dryRun=All"
				} else {
					path += "?dryRun=All"
				}
			}
			r := c.do(tc.method, path, tc.body, tc.header...)
			r.mustCode(t, tc.code)
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}

	// A dry run fails as the write would.
	c.do(http.MethodPost, widgetsIn("default")+"?dryRun=All", newWidget("default", "wet")).failure(t, http.StatusConflict, kapi.StatusReasonAlreadyExists)
	if g := c.read("default", "wet"); g.ResourceVersion != real.ResourceVersion || g.Spec.Color != "Red" || g.Status.Replicas != 0 {
		t.Errorf("dry runs changed the object: %+v", g)
	}
	c.get(widgetPath("default", "dry")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	c.get(widgetPath("default", "fresh")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if g := c.read("default", "held"); g.DeletionTimestamp != nil {
		t.Errorf("a dry-run delete marked the object for deletion")
	}
	// The next real write is the next revision and the first event.
	next := c.create(newWidget("default", "after"))
	if want := mustRevision(t, "rv", rv) + 1; mustRevision(t, "next", next.ResourceVersion) != want {
		t.Errorf("the next write has revision %s, want %d: a dry run consumed one", next.ResourceVersion, want)
	}
	ws.expect("ADDED after")
}
