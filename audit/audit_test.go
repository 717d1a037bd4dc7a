package audit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/audit"
	"github.com/kapi-dev/kapi/internal/test/observetest"
)

const policyYAML = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/version"]
- level: RequestResponse
  users: ["alice"]
  resources:
  - group: example.com
    resources: ["widgets"]
- level: Metadata
`

// syncBuffer is a sink the test reads after the Log is closed.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func mustPolicy(t *testing.T, text string) *audit.Policy {
	t.Helper()
	p, err := audit.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func events(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestSequenceEvents compares the events of the known sequence with what
// kube-apiserver's audit filter writes (endpoints/filters/audit.go): per
// request RequestReceived then ResponseComplete, with ResponseStarted
// between them for the watch; the response status's bounded fields, the
// request body at Request and above, the response body at RequestResponse
// except for a watch.
func TestSequenceEvents(t *testing.T) {
	sink := &syncBuffer{}
	log, err := audit.New(sink, mustPolicy(t, policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	ids := observetest.Run(t, srv.URL, srv.Client())
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	evs := events(t, sink.b.Bytes())
	byID := map[string][]map[string]any{}
	for _, ev := range evs {
		id := ev["auditID"].(string)
		byID[id] = append(byID[id], ev)
	}
	if len(byID) != len(observetest.Sequence) {
		t.Fatalf("events of %d requests, want %d (the probes and /version are at level None): %s", len(byID), len(observetest.Sequence), sink.b.Bytes())
	}
	for i, step := range observetest.Sequence {
		t.Run(step.Method+" "+step.Path, func(t *testing.T) {
			got := byID[ids[i]]
			var stages []string
			for _, ev := range got {
				stages = append(stages, ev["stage"].(string))
			}
			want := []string{"RequestReceived", "ResponseComplete"}
			if step.Verb == "watch" {
				want = []string{"RequestReceived", "ResponseStarted", "ResponseComplete"}
			}
			if !slices.Equal(stages, want) {
				t.Fatalf("stages %v, want %v", stages, want)
			}
			for _, ev := range got {
				if ev["kind"] != "Event" || ev["apiVersion"] != "audit.k8s.io/v1" || ev["level"] != "RequestResponse" {
					t.Errorf("kind %v apiVersion %v level %v", ev["kind"], ev["apiVersion"], ev["level"])
				}
				if ev["verb"] != step.Verb || ev["requestURI"] != step.Path || ev["userAgent"] != "observetest/1.0" {
					t.Errorf("verb %v requestURI %v userAgent %v", ev["verb"], ev["requestURI"], ev["userAgent"])
				}
				user, _ := json.Marshal(ev["user"])
				if string(user) != `{"groups":["devs","system:authenticated"],"uid":"u-1","username":"alice"}` {
					t.Errorf("user %s", user)
				}
				if ips, _ := json.Marshal(ev["sourceIPs"]); string(ips) != `["127.0.0.1"]` {
					t.Errorf("sourceIPs %s", ips)
				}
				ref := ev["objectRef"].(map[string]any)
				if ref["resource"] != "widgets" || ref["namespace"] != "default" || ref["apiGroup"] != "example.com" || ref["apiVersion"] != "v1" {
					t.Errorf("objectRef %v", ref)
				}
				if strings.HasSuffix(step.Path, "/a") && ref["name"] != "a" {
					t.Errorf("objectRef.name %v", ref["name"])
				}
				if ev["requestReceivedTimestamp"] != got[0]["stageTimestamp"] {
					t.Errorf("requestReceivedTimestamp %v, RequestReceived's stageTimestamp %v", ev["requestReceivedTimestamp"], got[0]["stageTimestamp"])
				}
			}
			if _, ok := got[0]["responseStatus"]; ok {
				t.Errorf("RequestReceived has a responseStatus: %v", got[0])
			}
			last := got[len(got)-1]
			st := last["responseStatus"].(map[string]any)
			if int(st["code"].(float64)) != step.Code {
				t.Errorf("responseStatus.code %v, want %d", st["code"], step.Code)
			}
			switch step.Code {
			case 404:
				if st["reason"] != "NotFound" || st["status"] != "Failure" {
					t.Errorf("responseStatus %v", st)
				}
			case 409:
				if st["reason"] != "AlreadyExists" || st["status"] != "Failure" {
					t.Errorf("responseStatus %v", st)
				}
			}
			if _, ok := last["requestObject"]; ok != (step.Body != "") {
				t.Errorf("requestObject present %v, want %v", ok, step.Body != "")
			}
			if step.Verb == "get" && step.Code == 200 {
				obj := last["responseObject"].(map[string]any)
				if obj["kind"] != "Widget" || obj["metadata"].(map[string]any)["name"] != "a" {
					t.Errorf("responseObject %v", obj)
				}
			}
			if _, ok := last["responseObject"]; ok && step.Verb == "watch" {
				t.Errorf("a watch's response object is recorded: %v", last)
			}
		})
	}
}

// TestLevels: the first matching rule decides; Metadata has no bodies;
// omitStages leaves stages out; an unknown user falls to the last rule.
func TestLevels(t *testing.T) {
	sink := &syncBuffer{}
	log, err := audit.New(sink, mustPolicy(t, `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["*"]
- level: None
  verbs: ["get"]
- level: Metadata
  userGroups: ["devs"]
  namespaces: ["default"]
  omitStages: [ResponseStarted]
`))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	observetest.Run(t, srv.URL, srv.Client())
	log.Close()
	var got []string
	for _, ev := range events(t, sink.b.Bytes()) {
		if ev["level"] != "Metadata" {
			t.Errorf("level %v", ev["level"])
		}
		if _, ok := ev["requestObject"]; ok {
			t.Errorf("a request object at Metadata: %v", ev)
		}
		got = append(got, ev["verb"].(string)+" "+ev["stage"].(string))
	}
	want := []string{"create ResponseComplete", "list ResponseComplete", "watch ResponseComplete",
		"update ResponseComplete", "create ResponseComplete", "delete ResponseComplete"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q,\nwant %q", got, want)
	}
}

// TestPanicStage: a handler that panics is recorded at stage Panic (and not
// ResponseComplete), with kube-apiserver's 500 status.
func TestPanicStage(t *testing.T) {
	sink := &syncBuffer{}
	log, err := audit.New(sink, mustPolicy(t, policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	resp, err := srv.Client().Do(observetest.Request(t, "POST", srv.URL+"/apis/example.com/v1/namespaces/default/widgets",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"p"},"spec":{"size":13}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if resp, err := srv.Client().Get(srv.URL + "/version"); err == nil { // the create's handler has returned
		resp.Body.Close()
	}
	log.Close()
	evs := events(t, sink.b.Bytes())
	if len(evs) != 2 || evs[0]["stage"] != "RequestReceived" || evs[1]["stage"] != "Panic" {
		t.Fatalf("events %v", evs)
	}
	st := evs[1]["responseStatus"].(map[string]any)
	if st["code"] != float64(500) || st["reason"] != "InternalError" || !strings.HasPrefix(st["message"].(string), "APIServer panic'd: ") {
		t.Errorf("responseStatus %v", st)
	}
}

// blockingSink holds every write until released.
type blockingSink struct{ release chan struct{} }

func (b blockingSink) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

// TestSlowSinkDrops: a sink that does not take events never holds up a
// request; what does not fit the buffer is counted as dropped.
func TestSlowSinkDrops(t *testing.T) {
	sink := blockingSink{make(chan struct{})}
	log, err := audit.New(sink, mustPolicy(t, policyYAML), audit.WithBuffer(2))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	observetest.Run(t, srv.URL, srv.Client()) // returns although the sink takes nothing
	// 17 events: one taken by the writer (unless it had not yet taken
	// it when the buffer filled), two buffered, the rest dropped.
	if got := log.Dropped(); got != 14 && got != 15 {
		t.Errorf("dropped %d, want 14 (or 15)", got)
	}
	close(sink.release)
	log.Close()
}

func TestNewRefusesMisconfiguration(t *testing.T) {
	p := mustPolicy(t, policyYAML)
	for name, f := range map[string]func() (*audit.Log, error){
		"no sink":     func() (*audit.Log, error) { return audit.New(nil, p) },
		"no policy":   func() (*audit.Log, error) { return audit.New(&syncBuffer{}, nil) },
		"zero buffer": func() (*audit.Log, error) { return audit.New(&syncBuffer{}, p, audit.WithBuffer(0)) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParsePolicyRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"empty":         ``,
		"wrong version": "apiVersion: audit.k8s.io/v2\nkind: Policy\n",
		"wrong kind":    "apiVersion: audit.k8s.io/v1\nkind: Pollicy\n",
		"unknown field": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrulez: []\n",
		"bad level":     "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]\n",
		"bad stage":     "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\n",
		"both kinds":    "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/x], resources: [{group: \"\"}]}]\n",
		"bad url":       "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [x*y]}]\n",
		"not yaml":      "{[",
	} {
		if _, err := audit.ParsePolicy([]byte(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// JSON is YAML: kube accepts a JSON policy file too.
	if _, err := audit.ParsePolicy([]byte(`{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]}`)); err != nil {
		t.Error(err)
	}
}

func TestRotatingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	f, err := audit.NewRotatingFile(path, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"one 1234\n", "two 1234\n", "three 12\n", "four 123\n"} {
		if _, err := f.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	for name, want := range map[string]string{"audit.log": "four 123\n", "audit.log.1": "three 12\n", "audit.log.2": "two 1234\n"} {
		got, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("more backups than asked for")
	}
	if _, err := audit.NewRotatingFile(path, 0, 1); err == nil {
		t.Error("max bytes 0: no error")
	}
}

// TestFailedAuthentication: a request no authenticator accepts is one
// event at ResponseStarted, as kube-apiserver's failed-authentication audit
// (endpoints/filters/authn_audit.go) writes it.
func TestFailedAuthentication(t *testing.T) {
	sink := &syncBuffer{}
	log, err := audit.New(sink, mustPolicy(t, policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	req := observetest.Request(t, "GET", srv.URL+"/apis/example.com/v1/widgets", "")
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err := srv.Client().Get(srv.URL + "/version"); err == nil {
		resp.Body.Close()
	}
	log.Close()
	evs := events(t, sink.b.Bytes())
	if len(evs) != 1 || evs[0]["stage"] != "ResponseStarted" || evs[0]["level"] != "Metadata" {
		t.Fatalf("events %v", evs)
	}
	st, _ := json.Marshal(evs[0]["responseStatus"])
	if string(st) != `{"code":401,"message":"Authentication failed, attempted: bearer","metadata":{}}` {
		t.Errorf("responseStatus %s", st)
	}
}

// TestImpersonatedUser: as kube-apiserver, whose audit filter runs before
// impersonation, the event's user is who authenticated (and the policy
// matches on it), and impersonatedUser who the request acted as.
func TestImpersonatedUser(t *testing.T) {
	sink := &syncBuffer{}
	log, err := audit.New(sink, mustPolicy(t, policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	srv := observetest.NewServer(t, apiserver.WithObserver(log))
	req := observetest.Request(t, "GET", srv.URL+"/apis/example.com/v1/namespaces/default/widgets", "")
	req.Header.Set("Impersonate-User", "bob")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("list as bob: %d", resp.StatusCode)
	}
	log.Close()
	evs := events(t, sink.b.Bytes())
	if len(evs) != 2 {
		t.Fatalf("events %v", evs)
	}
	for _, ev := range evs {
		user, _ := ev["user"].(map[string]any)
		impersonated, _ := ev["impersonatedUser"].(map[string]any)
		if user["username"] != "alice" || impersonated["username"] != "bob" || ev["level"] != "RequestResponse" {
			t.Errorf("%s: user %v, impersonatedUser %v, level %v; want alice, bob, RequestResponse (alice's rule)", ev["stage"], user, impersonated, ev["level"])
		}
	}
}
