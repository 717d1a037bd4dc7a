package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestTableObjectsAroundALargeOne: a Table LIST with includeObject=Object
// keeps each row's object until the body is written, so an object of more
// than one element chunk (256 KiB) must not hand the chunk holding the
// rows before it back to the pool, where the next rows (or another
// request) would write over them.
func TestTableObjectsAroundALargeOne(t *testing.T) {
	srv := newWidgetHandler(t)
	const ns = "big"
	do := func(method, path, ct, accept, body string) (int, []byte) {
		return exchange(srv, method, path, ct, accept, body)
	}
	names := []string{"a-1", "a-2", "a-3", "m-big", "z-1", "z-2", "z-3"}
	for _, name := range names {
		if code, body := do("POST", widgetsIn(ns), "application/json", "", string(creatable(ns, name))); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"pad":%q}}}`, strings.Repeat("x", 262_000))
	if code, body := do("PATCH", widgetPath(ns, "m-big"), "application/merge-patch+json", "", patch); code != http.StatusOK {
		t.Fatalf("patch: %d %.300s", code, body)
	}
	// The first LIST and one with a selector write rows one by one; the
	// third may come from kept runs.
	for _, q := range []string{"includeObject=Object", "includeObject=Object&labelSelector=", "includeObject=Object"} {
		code, body := do("GET", widgetsIn(ns)+"?"+q, "", "application/json;as=Table;v=v1;g=meta.k8s.io", "")
		if code != http.StatusOK {
			t.Fatalf("LIST: %d %.300s", code, body)
		}
		var table struct {
			Rows []struct {
				Object struct{ Metadata struct{ Name string } }
			}
		}
		if err := json.Unmarshal(body, &table); err != nil {
			t.Fatalf("LIST %s: %v", q, err)
		}
		var got []string
		for _, r := range table.Rows {
			got = append(got, r.Object.Metadata.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(names) {
			t.Errorf("LIST %s: rows' objects are %v, want %v", q, got, names)
		}
	}
}
