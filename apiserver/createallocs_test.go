package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// createAllocs is what one CREATE of a realistic widget allocates through
// the handler, with the watch cache's work on it (the cache's image and
// path copy): the request's contexts, the decoded object, its stored
// value, managedFields, the response; the test's recorder is counted too.
// Allocations cost CPU per request and GC; a change that adds one shows
// here. One more is allowed for the wait on the cache (a channel, when the
// cache has yet to see the write).
const createAllocs = 60

func TestCreateAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	srv := newWidgetHandler(t)
	body := creatable("default", "PLACEHOLDER")
	if allocs := allocsPerRequest(t, srv, http.StatusCreated, func(i int) *http.Request {
		r := httptest.NewRequest(http.MethodPost, widgetsIn("default"), bytes.NewReader(bytes.Replace(body, []byte("PLACEHOLDER"), fmt.Appendf(nil, "w-%d", i), 1)))
		r.Header.Set("Content-Type", "application/json")
		return r
	}); allocs > createAllocs {
		t.Errorf("a create allocates %v times, want at most %d", allocs, createAllocs)
	}
}

// patchAllocs is what one merge patch of one field of a realistic widget
// allocates through the handler, counted as createAllocs is (the cache
// has seen each write before the next patch comes). The copy of the
// current object the patch is decoded into shares its managedFields'
// entries and leaves out its status, which the write replaces: 76 when
// they were copied.
const patchAllocs = 71

func TestPatchAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	srv := newWidgetHandler(t)
	create := httptest.NewRequest(http.MethodPost, widgetsIn("default"), bytes.NewReader(creatable("default", "w")))
	create.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	if srv.ServeHTTP(rec, create); rec.Code != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", rec.Code, rec.Body.Bytes())
	}
	if allocs := allocsPerRequest(t, srv, http.StatusOK, func(i int) *http.Request {
		r := httptest.NewRequest(http.MethodPatch, widgetPath("default", "w"), bytes.NewReader(fmt.Appendf(nil, `{"spec":{"size":%d}}`, i%1000+13)))
		r.Header.Set("Content-Type", "application/merge-patch+json")
		return r
	}); allocs > patchAllocs {
		t.Errorf("a merge patch allocates %v times, want at most %d", allocs, patchAllocs)
	}
}

// allocsPerRequest is what each request made by req allocates served by
// srv, answered with code. The cache applies each write on a goroutine of
// its own, several at a time when it is behind: waited for, each
// request's share of its work is counted alike.
func allocsPerRequest(t *testing.T, srv *apiserver.Server, code int, req func(i int) *http.Request) float64 {
	t.Helper()
	const runs, warm = 200, 20
	reqs := make([]*http.Request, warm+runs+1)
	recs := make([]*httptest.ResponseRecorder, len(reqs))
	for i := range reqs {
		reqs[i], recs[i] = req(i), httptest.NewRecorder()
	}
	serveOne := func(i int) {
		srv.ServeHTTP(recs[i], reqs[i])
		_, rv, _ := bytes.Cut(recs[i].Body.Bytes(), []byte(`"resourceVersion":"`))
		rv, _, _ = bytes.Cut(rv, []byte(`"`))
		rev, err := strconv.ParseInt(string(rv), 10, 64)
		if err != nil {
			t.Fatalf("request %d: HTTP %d: %s", i, recs[i].Code, recs[i].Body.Bytes())
		}
		apiserver.WaitForCache(srv, rev)
	}
	for i := range warm { // runners, pools and the cache's first work
		serveOne(i)
	}
	i := warm
	allocs := testing.AllocsPerRun(runs, func() {
		serveOne(i)
		i++
	})
	for j, rec := range recs {
		if rec.Code != code {
			t.Fatalf("request %d: HTTP %d: %s", j, rec.Code, rec.Body.Bytes())
		}
	}
	return allocs
}
