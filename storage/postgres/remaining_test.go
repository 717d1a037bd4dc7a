package postgres_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// TestRemainingItemCountOverHTTP: a list page read from the store (a
// continued page) gives remainingItemCount exactly, or not at all when
// more keys remain than the store counts (1,000): kube-apiserver gives
// the exact count or none (k8s.io/apiserver v0.37.2,
// storage.PrepareContinueToken: the count etcd returned, or nil under a
// selector), never a lower bound.
func TestRemainingItemCountOverHTTP(t *testing.T) {
	base := serveWidgets(t, mustStore(t, freshSchema(t))) + widgetsPath
	const n = 1010
	var wg sync.WaitGroup
	names := make(chan string)
	for range 8 {
		wg.Go(func() {
			for name := range names {
				if a := send(t, "POST", base, widgetJSON(name, "Red", "")); a.code != http.StatusCreated {
					t.Errorf("create %s: %d %s", name, a.code, a.body)
				}
			}
		})
	}
	for i := range n {
		names <- fmt.Sprintf("w-%04d", i)
	}
	close(names)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	type page struct {
		Metadata struct {
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	list := func(limit int, token string) page {
		t.Helper()
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if token != "" {
			q.Set("continue", token)
		}
		a := send(t, "GET", base+"?"+q.Encode(), "")
		if a.code != http.StatusOK {
			t.Fatalf("LIST limit=%d: %d %s", limit, a.code, a.body)
		}
		var p page
		if err := json.Unmarshal([]byte(a.body), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != limit {
			t.Fatalf("LIST limit=%d: %d items", limit, len(p.Items))
		}
		return p
	}
	count := func(p page) string {
		if p.Metadata.RemainingItemCount == nil {
			return "unset"
		}
		return fmt.Sprint(*p.Metadata.RemainingItemCount)
	}
	// The first page, from the watch cache, counts exactly.
	first := list(5, "")
	if got := count(first); got != "1005" || first.Metadata.Continue == "" {
		t.Errorf("first page: remainingItemCount %s, continue %q; want 1005 and a token", got, first.Metadata.Continue)
	}
	// Continued pages are read from PostgreSQL: 1,003 remain after the
	// second, more than it counts.
	second := list(2, first.Metadata.Continue)
	if got := count(second); got != "unset" || second.Metadata.Continue == "" {
		t.Errorf("second page (1,003 remain): remainingItemCount %s, continue %q; want unset and a token", got, second.Metadata.Continue)
	}
	third := list(3, second.Metadata.Continue)
	if got := count(third); got != "1000" || third.Metadata.Continue == "" {
		t.Errorf("third page (1,000 remain): remainingItemCount %s, continue %q; want 1000 and a token", got, third.Metadata.Continue)
	}
	last := list(1000, third.Metadata.Continue)
	if got := count(last); got != "unset" || last.Metadata.Continue != "" {
		t.Errorf("last page: remainingItemCount %s, continue %q; want unset and no token", got, last.Metadata.Continue)
	}
}
