package apiserver_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A whole collection listed again in one state is written from the items
// kept joined the second time (listcache.Runs): the same bytes as a list made
// item by item, with the list's own resourceVersion, until the collection
// changes; a namespace's list and the cluster's are kept apart.
func TestListOfUnchangedCollection(t *testing.T) {
	srv := newWidgetHandler(t)
	do := func(method, path, body string) string {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			if method == "PATCH" {
				req.Header.Set("Content-Type", "application/merge-patch+json")
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d: %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	const v1 = "/apis/example.com/v1"
	for i, ns := range []string{"a", "a", "b"} {
		do("POST", v1+"/namespaces/"+ns+"/widgets", fmt.Sprintf(`{"metadata":{"name":"w%d"},"spec":{"color":"Red","size":%d}}`, i, i))
	}
	lists := []string{v1 + "/widgets", v1 + "/namespaces/a/widgets", v1 + "/namespaces/b/widgets"}
	check := func(step string, want map[string][]string) {
		t.Helper()
		for _, path := range lists {
			first := do("GET", path, "")
			for range 3 {
				if again := do("GET", path, ""); again != first {
					t.Errorf("%s: GET %s again:\n%s\nfirst:\n%s", step, path, again, first)
				}
			}
			if got := strings.Count(first, `"namespace":`); got != len(want[path]) {
				t.Errorf("%s: GET %s: %d items, want %v: %s", step, path, got, want[path], first)
			}
			for _, item := range want[path] {
				if !strings.Contains(first, item) {
					t.Errorf("%s: GET %s lacks %s: %s", step, path, item, first)
				}
			}
		}
	}
	check("created", map[string][]string{
		lists[0]: {`"name":"w0"`, `"name":"w1"`, `"name":"w2"`},
		lists[1]: {`"name":"w0"`, `"name":"w1"`},
		lists[2]: {`"name":"w2"`},
	})
	do("PATCH", v1+"/namespaces/a/widgets/w1", `{"spec":{"size":42}}`)
	check("patched", map[string][]string{
		lists[0]: {`"name":"w0"`, `"size":42`, `"name":"w2"`},
		lists[1]: {`"name":"w0"`, `"size":42`},
		lists[2]: {`"name":"w2"`},
	})
	// A write elsewhere moves the list's resourceVersion, not its items.
	before := do("GET", lists[2], "")
	do("POST", "/apis/example.com/v1/widgetclasses", `{"metadata":{"name":"c"}}`)
	after := do("GET", lists[2], "")
	if before == after || !strings.Contains(after, `"name":"w2"`) {
		t.Errorf("after a write to another resource the list reads\n%s\nbefore\n%s", after, before)
	}
	do("DELETE", v1+"/namespaces/a/widgets/w0", "")
	check("deleted", map[string][]string{
		lists[0]: {`"name":"w1"`, `"name":"w2"`},
		lists[1]: {`"name":"w1"`},
		lists[2]: {`"name":"w2"`},
	})
}

// The initial events of a streaming list (what client-go's informers
// send) are written as a LIST's items are: from the stored values, then
// from the frames kept by the second watch at one state; each watch reads
// every object once, then the bookmark, then changes.
func TestInitialEventsOfUnchangedCollection(t *testing.T) {
	srv := newWidgetHandler(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	post := func(method, path, contentType, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
	const v1 = "/apis/example.com/v1"
	for i := range 3 {
		post("POST", v1+"/namespaces/a/widgets", "application/json", fmt.Sprintf(`{"metadata":{"name":"w%d"},"spec":{"color":"Red","size":%d}}`, i, i))
	}
	post("POST", v1+"/namespaces/b/widgets", "application/json", `{"metadata":{"name":"other"},"spec":{"color":"Red"}}`)
	// open starts a streaming list, and read reads its events up to its
	// bookmark and returns them and the response, whose body goes on with
	// changes.
	open := func(path string) *http.Response {
		t.Helper()
		resp, err := http.Get(hs.URL + path + "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	read := func(path string, resp *http.Response) ([]string, *bufio.Reader, func()) {
		t.Helper()
		r := bufio.NewReader(resp.Body)
		var events []string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: after %d events: %v", path, len(events), err)
			}
			events = append(events, line)
			if strings.Contains(line, `"k8s.io/initial-events-end":"true"`) {
				return events, r, func() { resp.Body.Close() }
			}
		}
	}
	start := func(path string) ([]string, *bufio.Reader, func()) { return read(path, open(path)) }
	// check starts a streaming list, then three more at once (their
	// headers are in before any reads its events: the server makes
	// their frames side by side, one of them for all), then one more:
	// all read the same.
	check := func(step, path string, want ...string) {
		t.Helper()
		first, _, done := start(path)
		done()
		resps := []*http.Response{open(path), open(path), open(path), nil}
		for i, resp := range resps {
			if resp == nil {
				resp = open(path)
			}
			events, _, done := read(path, resp)
			done()
			if strings.Join(events, "") != strings.Join(first, "") {
				t.Errorf("%s: watch %d of %s read\n%s\nthe first\n%s", step, i+1, path, events, first)
			}
		}
		if len(first) != len(want)+1 {
			t.Fatalf("%s: %s: %d events, want %d and the bookmark: %s", step, path, len(first), len(want), first)
		}
		for i, w := range want {
			if !strings.HasPrefix(first[i], `{"type":"ADDED","object":{"kind":"Widget"`) || !strings.Contains(first[i], w) || !strings.HasSuffix(first[i], "}}\n") {
				t.Errorf("%s: %s: event %d is %s, want one of %s", step, path, i, first[i], w)
			}
		}
	}
	check("created", v1+"/namespaces/a/widgets", `"name":"w0"`, `"name":"w1"`, `"name":"w2"`)
	check("created", v1+"/widgets", `"name":"w0"`, `"name":"w1"`, `"name":"w2"`, `"name":"other"`)
	post("PATCH", v1+"/namespaces/a/widgets/w1", "application/merge-patch+json", `{"spec":{"size":42}}`)
	check("patched", v1+"/namespaces/a/widgets", `"name":"w0"`, `"size":42`, `"name":"w2"`)

	// After the initial events, the changes.
	_, r, done := start(v1 + "/namespaces/a/widgets")
	defer done()
	post("PATCH", v1+"/namespaces/a/widgets/w2", "application/merge-patch+json", `{"spec":{"size":7}}`)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, `{"type":"MODIFIED"`) || !strings.Contains(line, `"size":7`) {
		t.Errorf("after the initial events: %q, %v", line, err)
	}
}
