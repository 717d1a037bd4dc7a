package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
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
	if raceEnabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	srv := newWidgetHandler(t)
	body := creatable("default", "PLACEHOLDER")
	const runs, warm = 200, 20
	reqs := make([]*http.Request, warm+runs+1)
	recs := make([]*httptest.ResponseRecorder, len(reqs))
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, widgetsIn("default"), bytes.NewReader(bytes.Replace(body, []byte("PLACEHOLDER"), fmt.Appendf(nil, "w-%d", i), 1)))
		reqs[i].Header.Set("Content-Type", "application/json")
		recs[i] = httptest.NewRecorder()
	}
	create := func(i int) {
		srv.ServeHTTP(recs[i], reqs[i])
		// The cache applies the write on a goroutine of its own, several
		// at a time when it is behind: waited for, each create's share
		// of its work is counted alike.
		_, rv, _ := bytes.Cut(recs[i].Body.Bytes(), []byte(`"resourceVersion":"`))
		rv, _, _ = bytes.Cut(rv, []byte(`"`))
		rev, err := strconv.ParseInt(string(rv), 10, 64)
		if err != nil {
			t.Fatalf("create %d: HTTP %d: %s", i, recs[i].Code, recs[i].Body.Bytes())
		}
		apiserver.WaitForCache(srv, rev)
	}
	for i := range warm { // runners, pools and the cache's first work
		create(i)
	}
	i := warm
	allocs := testing.AllocsPerRun(runs, func() {
		create(i)
		i++
	})
	for j, rec := range recs {
		if rec.Code != http.StatusCreated {
			t.Fatalf("create %d: HTTP %d: %s", j, rec.Code, rec.Body.Bytes())
		}
	}
	if allocs > createAllocs {
		t.Errorf("a create allocates %v times, want at most %d", allocs, createAllocs)
	}
}
