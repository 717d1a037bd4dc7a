package watch_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/watch"
)

// A whole collection listed again before any change is the slice the
// first List returned; any change to the cache (in the collection or not)
// lists anew, and a List with a start, a limit or a filter is never
// served from a kept one.
func TestCacheListKeepsWholeCollections(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, k := range []string{"ns1/a", "ns1/b", "ns1/c", "ns2/a", "ns3/a", "ns4/a", "ns5/a"} {
		mustCreate(t, e.store, widgets+k, k)
	}
	e.run(t)
	ns1 := widgets + "ns1/"
	values := func(items []*watch.Item) string {
		var vs []string
		for _, it := range items {
			vs = append(vs, objectOf(t, it).Value)
		}
		return strings.Join(vs, ",")
	}
	same := func(a, b []*watch.Item) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

	first, _, _ := e.widgets.List(ns1, "", 0, nil)
	again, rev, remaining := e.widgets.List(ns1, "", 0, nil)
	if !same(first, again) || values(again) != "ns1/a,ns1/b,ns1/c" || remaining != 0 || rev != e.hub.Revision() {
		t.Fatalf("the second List = %q (kept: %v), remaining %d, at %d; want the first's items, at %d",
			values(again), same(first, again), remaining, rev, e.hub.Revision())
	}
	for _, l := range []struct {
		name   string
		start  string
		limit  int
		filter func(*watch.Item) bool
	}{
		{name: "Start", start: ns1 + "b"},
		{name: "Limit", limit: 3},
		{name: "Filter", filter: func(*watch.Item) bool { return true }},
	} {
		items, _, _ := e.widgets.List(ns1, l.start, l.limit, l.filter)
		if same(first, items) {
			t.Errorf("%s: List returned the whole collection's kept slice", l.name)
		}
	}

	// A change elsewhere: the same items, listed anew.
	mustWaitFor(t, e.hub, mustUpdate(t, e.store, widgets+"ns2/a", "ns2/a v2"))
	afterOther, _, _ := e.widgets.List(ns1, "", 0, nil)
	if same(first, afterOther) || !slices.Equal(first, afterOther) {
		t.Errorf("after a change in ns2, List(ns1) = %q, kept: %v; want the same items listed anew", values(afterOther), same(first, afterOther))
	}
	// A change in the collection shows.
	mustWaitFor(t, e.hub, mustUpdate(t, e.store, widgets+"ns1/b", "ns1/b v2"))
	if got, _, _ := e.widgets.List(ns1, "", 0, nil); values(got) != "ns1/a,ns1/b v2,ns1/c" {
		t.Errorf("after an update, List(ns1) = %q", values(got))
	}
	mustWaitFor(t, e.hub, mustDelete(t, e.store, widgets+"ns1/a"))
	if got, _, _ := e.widgets.List(ns1, "", 0, nil); values(got) != "ns1/b v2,ns1/c" {
		t.Errorf("after a delete, List(ns1) = %q", values(got))
	}

	// Each of five collections listed twice, in turn: the last ones kept
	// are found again, and every list is right whether kept or not.
	for range 2 {
		for _, ns := range []string{"ns1", "ns2", "ns3", "ns4", "ns5"} {
			items, _, _ := e.widgets.List(widgets+ns+"/", "", 0, nil)
			want := map[string]string{"ns1": "ns1/b v2,ns1/c", "ns2": "ns2/a v2"}[ns]
			if want == "" {
				want = ns + "/a"
			}
			if values(items) != want {
				t.Errorf("List(%s) = %q, want %q", ns, values(items), want)
			}
		}
	}
	a, _, _ := e.widgets.List(widgets+"ns5/", "", 0, nil)
	b, _, _ := e.widgets.List(widgets+"ns5/", "", 0, nil)
	if !same(a, b) {
		t.Error("the last collection listed was not kept")
	}
}
