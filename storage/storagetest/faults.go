package storagetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
)

// The Faults cases put the backend behind a kapi server, through the
// faulty wrapper, and check from the outside, over HTTP, what a client is
// answered for each fault of the store (the table in the README), that a
// write said to have maybe happened did happen when it did, and that the
// watch cache recovers from a broken storage watch without losing or
// repeating a change.

// thing is the resource the fault cases write.
type thing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            string `json:"spec,omitempty"`
}

const thingsPath = "/apis/faults.kapi.dev/v1/namespaces/default/things"

// faultServer serves the things of s through a faulty wrapper, and
// returns the wrapper and the server's URL once it is ready.
func faultServer(t *testing.T, s storage.Interface) (*faulty.Store, string) {
	t.Helper()
	f := faulty.New(s)
	srv, err := apiserver.New(apiserver.WithStorage(f), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := apiserver.Register(srv, apiserver.Resource[thing]{
		Group: "faults.kapi.dev", Version: "v1", Kind: "Thing", Plural: "things", Namespaced: true,
	}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close() // first: it ends the watches hs.Close would wait for
		hs.Close()
	})
	waitReady(t, hs.URL)
	return f, hs.URL
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		code, body := httpDo(t, http.MethodGet, url+"/readyz", "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server is not ready: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// response is what a fault case looks at in an answer.
type response struct {
	code       int
	retryAfter string
	status     kapi.Status
	body       string
}

func httpRequest(t *testing.T, method, url, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	r := response{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(data)}
	if resp.StatusCode >= 300 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(data, &r.status); err != nil {
			t.Fatalf("%s %s: %d with a body that is not a Status: %v: %s", method, url, resp.StatusCode, err, data)
		}
	}
	return r
}

func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	r := httpRequest(t, method, url, body)
	return r.code, r.body
}

func thingJSON(name, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"faults.kapi.dev/v1","kind":"Thing","metadata":{"name":%q},"spec":%q}`, name, spec)
}

// getThing reads a thing over HTTP: its spec, or "" if it does not exist.
func getThing(t *testing.T, url, name string) (spec string, exists bool) {
	t.Helper()
	r := httpRequest(t, http.MethodGet, url+thingsPath+"/"+name, "")
	switch r.code {
	case http.StatusOK:
		var th thing
		if err := json.Unmarshal([]byte(r.body), &th); err != nil {
			t.Fatal(err)
		}
		return th.Spec, true
	case http.StatusNotFound:
		return "", false
	}
	t.Fatalf("GET %s: %d %s", name, r.code, r.body)
	return "", false
}

// faultRow is one row of the table: a fault of the store and the answer it
// gets.
type faultRow struct {
	name  string
	fault faulty.Fault
	// query is added to the request's URL.
	query string
	// The answer.
	code       int
	reason     kapi.StatusReason
	retryAfter bool // Retry-After: 1 and details.retryAfterSeconds 1
	// unknown: the message says the write may or may not have happened
	// (and, the fault being AfterWrite, it did).
	unknown bool
}

func injected(sentinel error, what string) error {
	return fmt.Errorf("%w: injected: %s", sentinel, what)
}

var faultRows = []faultRow{
	{name: "Unavailable", fault: faulty.Fault{Err: injected(storage.ErrUnavailable, "no leader")},
		code: 503, reason: kapi.StatusReasonServiceUnavailable, retryAfter: true},
	{name: "UnavailableAfterWrite", fault: faulty.Fault{Err: injected(storage.ErrUnavailable, "connection lost"), AfterWrite: true},
		code: 503, reason: kapi.StatusReasonServiceUnavailable, retryAfter: true, unknown: true},
	{name: "Timeout", fault: faulty.Fault{Err: injected(storage.ErrTimeout, "request timed out"), AfterWrite: true},
		code: 503, reason: kapi.StatusReasonServiceUnavailable, retryAfter: true, unknown: true},
	{name: "Closed", fault: faulty.Fault{Err: storage.ErrClosed},
		code: 503, reason: kapi.StatusReasonServiceUnavailable, retryAfter: true},
	{name: "RequestDeadline", fault: faulty.Fault{Hang: true, AfterWrite: true}, query: "?timeout=200ms",
		code: 504, reason: kapi.StatusReasonTimeout, retryAfter: true, unknown: true},
	{name: "TooLarge", fault: faulty.Fault{Err: injected(storage.ErrTooLarge, "request is too large")},
		code: 413, reason: kapi.StatusReasonRequestEntityTooLarge},
	{name: "NoSpace", fault: faulty.Fault{Err: injected(storage.ErrNoSpace, "database space exceeded")},
		code: 507, reason: kapi.StatusReasonInsufficientStorage},
}

// testFaultAnswers checks each row of the table for each kind of write, and
// the faults of reads.
func testFaultAnswers(t *testing.T, s storage.Interface) {
	f, url := faultServer(t, s)
	for _, row := range faultRows {
		t.Run(row.name, func(t *testing.T) {
			for _, verb := range []struct {
				method string
				op     faulty.Op
			}{{http.MethodPost, faulty.Create}, {http.MethodPut, faulty.Update}, {http.MethodDelete, faulty.Delete}} {
				name := strings.ToLower(row.name + "-" + verb.method)
				before := ""
				path, body := thingsPath+"/"+name, thingJSON(name, "after")
				switch verb.method {
				case http.MethodPost:
					path = thingsPath
				default:
					before = "before"
					if r := httpRequest(t, http.MethodPost, url+thingsPath, thingJSON(name, before)); r.code != http.StatusCreated {
						t.Fatalf("creating %s: %d %s", name, r.code, r.body)
					}
					if verb.method == http.MethodDelete {
						body = ""
					}
				}
				fault := row.fault
				fault.Ops, fault.Count = verb.op, 1
				f.Inject(fault)
				r := httpRequest(t, verb.method, url+path+row.query, body)
				checkAnswer(t, verb.method+" "+path+row.query, r, row)

				// The message told the truth: the write happened if
				// and only if the answer said it might have.
				spec, exists := getThing(t, url, name)
				want, wantExists := before, before != ""
				if row.unknown {
					want, wantExists = "after", verb.method != http.MethodDelete
					if !wantExists {
						want = ""
					}
				}
				if spec != want || exists != wantExists {
					t.Errorf("%s %s: afterwards the thing is %q (exists %v), want %q (exists %v)", verb.method, name, spec, exists, want, wantExists)
				}
			}
		})
	}
	t.Run("Read", func(t *testing.T) {
		if r := httpRequest(t, http.MethodPost, url+thingsPath, thingJSON("read", "x")); r.code != http.StatusCreated {
			t.Fatalf("creating: %d %s", r.code, r.body)
		}
		// A consistent read asks the store for its revision; a list
		// with a limit goes to the store.
		for _, path := range []string{thingsPath + "/read", thingsPath, thingsPath + "?limit=1&resourceVersion=0&resourceVersionMatch=NotOlderThan"} {
			clear := f.Inject(faulty.Fault{Ops: faulty.Reads, Err: injected(storage.ErrUnavailable, "no leader")})
			r := httpRequest(t, http.MethodGet, url+path, "")
			clear()
			if r.code == http.StatusOK {
				continue // served from the watch cache, without the store
			}
			checkAnswer(t, "GET "+path, r, faultRows[0])
		}
		clear := f.Inject(faulty.Fault{Ops: faulty.Revision, Err: injected(storage.ErrUnavailable, "no leader")})
		r := httpRequest(t, http.MethodGet, url+thingsPath+"/read", "")
		clear()
		checkAnswer(t, "GET (consistent)", r, faultRows[0])
	})
}

func checkAnswer(t *testing.T, what string, r response, row faultRow) {
	t.Helper()
	if r.code != row.code || r.status.Reason != row.reason || r.status.Code != int32(row.code) {
		t.Errorf("%s: %d %s (Status code %d), want %d %s: %s", what, r.code, r.status.Reason, r.status.Code, row.code, row.reason, r.body)
	}
	if r.code == http.StatusInternalServerError {
		t.Errorf("%s: 500 for a fault of the store", what)
	}
	var seconds int32
	if r.status.Details != nil {
		seconds = r.status.Details.RetryAfterSeconds
	}
	if row.retryAfter && (r.retryAfter != "1" || seconds != 1) {
		t.Errorf("%s: Retry-After %q, retryAfterSeconds %d, want 1 and 1", what, r.retryAfter, seconds)
	}
	if !row.retryAfter && (r.retryAfter != "" || seconds != 0) {
		t.Errorf("%s: Retry-After %q, retryAfterSeconds %d, want none", what, r.retryAfter, seconds)
	}
	if got := strings.Contains(r.status.Message, "may or may not"); got != row.unknown {
		t.Errorf("%s: message %q says the write may or may not have happened: %v, want %v", what, r.status.Message, got, row.unknown)
	}
}

// testFaultReadyz checks that /readyz fails while the store does not
// answer, naming the check as kube-apiserver's do, and recovers after.
func testFaultReadyz(t *testing.T, s storage.Interface) {
	f, url := faultServer(t, s)
	code, body := httpDo(t, http.MethodGet, url+"/readyz?verbose", "")
	if want := "[+]ping ok\n[+]storage ok\n[+]watch-cache ok\nreadyz check passed\n"; code != http.StatusOK || body != want {
		t.Errorf("/readyz?verbose before the fault: %d %q, want 200 %q", code, body, want)
	}
	clear := f.Inject(faulty.Fault{Ops: faulty.Reads, Err: injected(storage.ErrUnavailable, "connection refused")})
	code, body = httpDo(t, http.MethodGet, url+"/readyz", "")
	if want := "[+]ping ok\n[-]storage failed: reason withheld\n[+]watch-cache ok\nreadyz check failed\n"; code != http.StatusServiceUnavailable || body != want {
		t.Errorf("/readyz with the store away: %d %q, want 503 %q", code, body, want)
	}
	code, body = httpDo(t, http.MethodGet, url+"/readyz/storage", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/readyz/storage with the store away: %d %q, want 503 with the reason", code, body)
	}
	if code, body := httpDo(t, http.MethodGet, url+"/livez", ""); code != http.StatusOK || body != "ok" {
		t.Errorf("/livez with the store away: %d %q, want 200 ok: a restart would not bring the store back", code, body)
	}
	// A store that hangs fails the check too, in the check's own time.
	clear()
	clear = f.Inject(faulty.Fault{Ops: faulty.Reads, Hang: true})
	if code, body := httpDo(t, http.MethodGet, url+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the store hanging: %d %q, want 503", code, body)
	}
	clear()
	if code, body := httpDo(t, http.MethodGet, url+"/readyz", ""); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz after the fault: %d %q, want 200 ok", code, body)
	}
}

// testFaultWatchBreak breaks the watch cache's storage watch again and
// again while a client watches and a writer writes: the client must see
// every change after its start once, in order, and a list must show the
// store's state.
func testFaultWatchBreak(t *testing.T, s storage.Interface) {
	f, url := faultServer(t, s)
	dec := createAndWatch(t, url, "counter")

	const writes = 60
	var written []string // the resourceVersions of the writes, in order
	for i := 1; i <= writes; i++ {
		if i%10 == 0 {
			f.BreakWatches(injected(storage.ErrUnavailable, "watch stream broke"))
		}
		r := httpRequest(t, http.MethodPost, url+thingsPath, thingJSON("t"+strconv.Itoa(i), strconv.Itoa(i)))
		if r.code != http.StatusCreated {
			t.Fatalf("write %d: %d %s", i, r.code, r.body)
		}
		var th thing
		if err := json.Unmarshal([]byte(r.body), &th); err != nil {
			t.Fatal(err)
		}
		written = append(written, th.ResourceVersion)
	}

	var seen []string
	for len(seen) < writes {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("after %d events of %d: %v", len(seen), writes, err)
		}
		if ev.Type == "ERROR" {
			t.Fatalf("after %d events of %d the watch ended: %s", len(seen), writes, ev.Object)
		}
		var th thing
		if err := json.Unmarshal(ev.Object, &th); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "BOOKMARK" {
			continue
		}
		seen = append(seen, th.ResourceVersion)
	}
	if fmt.Sprint(seen) != fmt.Sprint(written) {
		t.Errorf("the watcher saw %v, the writes were %v", seen, written)
	}
	r := httpRequest(t, http.MethodGet, url+thingsPath, "")
	var list struct{ Items []thing }
	if err := json.Unmarshal([]byte(r.body), &list); err != nil {
		t.Fatalf("list: %d %s: %v", r.code, r.body, err)
	}
	if len(list.Items) != writes+1 {
		t.Errorf("the list after the breaks has %d things, want %d", len(list.Items), writes+1)
	}
	if !bytes.Contains([]byte(r.body), []byte(`"name":"t`+strconv.Itoa(writes)+`"`)) {
		t.Errorf("the list after the breaks lacks the last write")
	}
}

// createAndWatch creates a thing, then watches the things from its
// resourceVersion, until the test ends or waitTimeout passes.
func createAndWatch(t *testing.T, url, name string) *json.Decoder {
	t.Helper()
	r := httpRequest(t, http.MethodPost, url+thingsPath, thingJSON(name, "0"))
	if r.code != http.StatusCreated {
		t.Fatalf("creating: %d %s", r.code, r.body)
	}
	var start thing
	if err := json.Unmarshal([]byte(r.body), &start); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+thingsPath+"?watch=1&resourceVersion="+start.ResourceVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	return json.NewDecoder(bufio.NewReader(resp.Body))
}

// testFaultWatchRelist breaks the watch cache's storage watch and keeps it
// from watching again while the store writes and compacts past the cache:
// the cache must then relist, hold the store's state, and end a watcher
// it can no longer serve with 410 Expired, which tells its client to
// relist too, rather than leave it with a gap.
func testFaultWatchRelist(t *testing.T, s storage.Interface) {
	compactor := mustCompactor(t, s)
	f, url := faultServer(t, s)
	dec := createAndWatch(t, url, "first")
	// The server is ready once its cache has listed; the cache's watch of
	// the store can start a moment later.
	for deadline := time.Now().Add(waitTimeout); f.Watches() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server never watched the store")
		}
	}

	clear := f.Inject(faulty.Fault{Ops: faulty.Watch, Err: injected(storage.ErrUnavailable, "no leader")})
	if n := f.BreakWatches(injected(storage.ErrUnavailable, "watch stream broke")); n == 0 {
		t.Fatal("no storage watch to break")
	}
	// Behind the cache's back: writes, then a compaction past them. The
	// server keeps a thing under a key that ends with its name.
	kv := mustList(t, s, "/", storage.ListOptions{})
	if len(kv.Items) != 1 || !strings.HasSuffix(kv.Items[0].Key, "/first") {
		t.Fatalf("the store holds %v, want the one thing", kv.Items)
	}
	dir := strings.TrimSuffix(kv.Items[0].Key, "first")
	var last int64
	for i := range 5 {
		name := "behind-" + strconv.Itoa(i)
		rev, err := s.Create(t.Context(), dir+name, []byte(thingJSON(name, "x")))
		if err != nil {
			t.Fatal(err)
		}
		last = rev
	}
	mustCompact(t, compactor, last)
	clear()

	// The cache relists: a consistent list shows the writes it never saw
	// as events.
	deadline := time.Now().Add(waitTimeout)
	for {
		code, body := httpDo(t, http.MethodGet, url+thingsPath, "")
		if code == http.StatusOK && strings.Contains(body, `"name":"behind-4"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache did not relist: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The watcher is told it missed changes: 410, not a gap.
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("the watch ended without an ERROR event: %v", err)
		}
		if ev.Type == "ERROR" {
			if !bytes.Contains(ev.Object, []byte(`"code":410`)) {
				t.Errorf("the watch ended with %s, want 410 Expired", ev.Object)
			}
			return
		}
		if ev.Type != "BOOKMARK" {
			t.Errorf("the watcher got %s %s: the cache never saw these writes as events", ev.Type, ev.Object)
		}
	}
}
