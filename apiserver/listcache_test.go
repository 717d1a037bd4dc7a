package apiserver_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// A whole collection listed again in one state is written from the items
// kept joined the second time (listBodies): the same bytes as a list made
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
		do("POST", v1+"/namespaces/"+ns+"/widgets", fmt.Sprintf(`{"metadata":{"name":"w%d"},"spec":{"color":"red","size":%d}}`, i, i))
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
