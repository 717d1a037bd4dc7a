package delegation_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// webhookFake is a TLS server of admission webhooks: /label adds the label
// mutated=yes with a JSONPatch, /deny denies objects labelled deny, /allow
// allows; each counts its calls and keeps the last review.
type webhookFake struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string]int
	last  map[string]any
}

func newWebhookFake(t *testing.T) *webhookFake {
	f := &webhookFake{calls: map[string]int{}}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion, Kind string
			Request          map[string]any
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
			http.Error(w, "not a review", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.calls[r.URL.Path]++
		f.last = review.Request
		f.mu.Unlock()
		if _, ok := review.Request["oldObject"]; !ok { // kube sends null
			http.Error(w, "no oldObject", http.StatusBadRequest)
			return
		}
		resp := map[string]any{"uid": review.Request["uid"], "allowed": true}
		obj, _ := review.Request["object"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		switch r.URL.Path {
		case "/label":
			op := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
			if labels != nil {
				op = `[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`
			}
			resp["patch"], resp["patchType"] = base64.StdEncoding.EncodeToString([]byte(op)), "JSONPatch"
		case "/baduid":
			resp["uid"] = "someone-else"
		case "/deny":
			if _, ok := labels["deny"]; ok {
				resp["allowed"] = false
				resp["status"] = map[string]any{"code": 403, "reason": "Forbidden", "message": "no thanks"}
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *webhookFake) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

// hook is a webhook of a configuration calling url.
func hook(name, url string, caBundle []byte, extra map[string]any) map[string]any {
	h := map[string]any{
		"name":                    name,
		"clientConfig":            map[string]any{"url": url, "caBundle": caBundle},
		"rules":                   []any{map[string]any{"operations": []string{"CREATE", "UPDATE"}, "apiGroups": []string{"example.com"}, "apiVersions": []string{"*"}, "resources": []string{"widgets"}}},
		"sideEffects":             "None",
		"admissionReviewVersions": []string{"v1"},
	}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// TestWebhooks writes widgets through a server that calls the cluster's
// admission webhooks: a mutating one labels, a validating one denies with
// kube's message, rules and selectors that do not match call nothing, an
// unreachable webhook fails the write or not by its failurePolicy, and a
// dry run refuses a webhook with side effects.
func TestWebhooks(t *testing.T) {
	hooks := newWebhookFake(t)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hooks.Certificate().Raw})
	var mu sync.Mutex
	var mutating, validating []any
	set := func(m, v []any) { mu.Lock(); mutating, validating = m, v; mu.Unlock() }
	cluster := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var hs []any
		switch r.URL.Path {
		case delegation.MutatingWebhookConfigurationsPath:
			hs = mutating
		case delegation.ValidatingWebhookConfigurationsPath:
			hs = validating
		case "/api/v1/namespaces/team-a":
			_, _ = w.Write([]byte(`{"kind":"Namespace","metadata":{"name":"team-a","labels":{"env":"prod"}}}`))
			return
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "List", "items": []any{map[string]any{"metadata": map[string]any{"name": "config"}, "webhooks": hs}}})
	}))
	t.Cleanup(cluster.Close)
	c := delegation.Cluster{Host: cluster.URL, Client: cluster.Client()}
	mut, err := delegation.MutatingWebhooks(c, delegation.WithWebhookRefresh(0))
	if err != nil {
		t.Fatal(err)
	}
	val, err := delegation.ValidatingWebhooks(c, delegation.WithWebhookRefresh(0))
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiserver.New(apiserver.WithMutatingAdmission(mut), apiserver.WithValidatingAdmission(val))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	create := func(name, labels, query string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/apis/example.com/v1/namespaces/team-a/widgets"+query,
			strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"`+name+`","labels":{`+labels+`}},"spec":{"color":"Red"}}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	labelsOf := func(obj map[string]any) map[string]any {
		meta, _ := obj["metadata"].(map[string]any)
		l, _ := meta["labels"].(map[string]any)
		return l
	}

	set([]any{hook("label.example.com", hooks.URL+"/label", ca, nil)}, []any{hook("deny.example.com", hooks.URL+"/deny", ca, nil)})
	code, obj := create("a", `"team":"a"`, "")
	if code != http.StatusCreated || labelsOf(obj)["mutated"] != "yes" || labelsOf(obj)["team"] != "a" {
		t.Fatalf("mutated: HTTP %d %v", code, obj)
	}
	hooks.mu.Lock()
	last := hooks.last
	hooks.mu.Unlock()
	if last["operation"] != "CREATE" || last["namespace"] != "team-a" || last["name"] != "a" ||
		last["resource"].(map[string]any)["resource"] != "widgets" || last["kind"].(map[string]any)["kind"] != "Widget" ||
		labelsOf(last["object"].(map[string]any))["mutated"] != "yes" || last["dryRun"] != false ||
		last["requestResource"].(map[string]any)["group"] != "example.com" || last["options"].(map[string]any)["kind"] != "CreateOptions" {
		t.Errorf("the validating webhook's review: %v", last)
	}

	code, obj = create("b", `"deny":"1"`, "")
	if code != http.StatusForbidden || obj["message"] != `admission webhook "deny.example.com" denied the request: no thanks` || obj["reason"] != "Forbidden" {
		t.Errorf("denied: HTTP %d %v", code, obj)
	}

	// Rules, scope and selectors that do not match call nothing.
	before := hooks.count("/deny")
	set(nil, []any{
		hook("gadgets", hooks.URL+"/deny", ca, map[string]any{"rules": []any{map[string]any{"operations": []string{"*"}, "apiGroups": []string{"*"}, "apiVersions": []string{"*"}, "resources": []string{"gadgets", "widgets/status"}}}}),
		hook("cluster", hooks.URL+"/deny", ca, map[string]any{"rules": []any{map[string]any{"operations": []string{"*"}, "apiGroups": []string{"*"}, "apiVersions": []string{"*"}, "resources": []string{"*"}, "scope": "Cluster"}}}),
		hook("objects", hooks.URL+"/deny", ca, map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]string{"team": "b"}}}),
		// A create has no old object, which satisfies no selector.
		hook("not-a", hooks.URL+"/deny", ca, map[string]any{"objectSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "NotIn", "values": []string{"a"}}}}}),
		hook("namespaces", hooks.URL+"/deny", ca, map[string]any{"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "env", "operator": "NotIn", "values": []string{"prod"}}}}}),
	})
	if code, obj = create("c", `"deny":"1","team":"a"`, ""); code != http.StatusCreated || hooks.count("/deny") != before {
		t.Errorf("not matching: HTTP %d, %d calls %v", code, hooks.count("/deny")-before, obj)
	}
	set(nil, []any{hook("objects", hooks.URL+"/deny", ca, map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]string{"team": "b"}},
		"namespaceSelector": map[string]any{"matchLabels": map[string]string{"env": "prod"}}})})
	if code, _ = create("d", `"deny":"1","team":"b"`, ""); code != http.StatusForbidden {
		t.Errorf("matching selectors: HTTP %d", code)
	}

	// An unreachable webhook: Ignore passes, Fail (the default) is a 500.
	set(nil, []any{hook("ignored.example.com", "https://127.0.0.1:1/x", ca, map[string]any{"failurePolicy": "Ignore"})})
	if code, obj = create("e", "", ""); code != http.StatusCreated {
		t.Errorf("Ignore: HTTP %d %v", code, obj)
	}
	set(nil, []any{hook("down.example.com", "https://127.0.0.1:1/x", ca, nil)})
	code, obj = create("f", "", "")
	if msg, _ := obj["message"].(string); code != http.StatusInternalServerError ||
		!strings.HasPrefix(msg, `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: `) {
		t.Errorf("Fail: HTTP %d %v", code, obj)
	}

	// An answer to another review is a failure to call.
	set(nil, []any{hook("confused.example.com", hooks.URL+"/baduid", ca, nil)})
	code, obj = create("f", "", "")
	if msg, _ := obj["message"].(string); code != http.StatusInternalServerError ||
		!strings.HasPrefix(msg, `Internal error occurred: failed calling webhook "confused.example.com": received invalid webhook response: expected response.uid=`) {
		t.Errorf("wrong uid: HTTP %d %v", code, obj)
	}

	// Dry run: a webhook with side effects refuses it; NoneOnDryRun is asked.
	set([]any{hook("effects.example.com", hooks.URL+"/allow", ca, map[string]any{"sideEffects": "Some"})}, nil)
	code, obj = create("g", "", "?dryRun=All")
	if code != http.StatusBadRequest || obj["message"] != `admission webhook "effects.example.com" does not support dry run` {
		t.Errorf("dry run with side effects: HTTP %d %v", code, obj)
	}
	set([]any{hook("careful.example.com", hooks.URL+"/allow", ca, map[string]any{"sideEffects": "NoneOnDryRun"})}, nil)
	before = hooks.count("/allow")
	code, _ = create("g", "", "?dryRun=All")
	hooks.mu.Lock()
	last = hooks.last
	hooks.mu.Unlock()
	if code != http.StatusCreated || hooks.count("/allow") != before+1 || last["dryRun"] != true {
		t.Errorf("dry run without side effects: HTTP %d, review %v", code, last)
	}
}
