package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// A whole collection's LIST is written from runs of its items kept from
// the list before (listcache.Runs), remade only around what changed. Lists
// of a collection that random writes change, while and between they are
// listed, must be byte for byte the list at the same resourceVersion read
// from the store (resourceVersionMatch=Exact), which encodes every item
// anew: in JSON and in protobuf.
func TestListRunsMatchEncodedList(t *testing.T) {
	srv := newWidgetHandler(t)
	rng := rand.New(rand.NewPCG(29, 1))
	const ns = "runs"
	do := func(method, path, contentType, accept, body string) (int, []byte) {
		return exchange(srv, method, path, contentType, accept, body)
	}
	// The writes a controller makes: new widgets, changed ones of any size
	// (runs end at a size, so one that grows moves where runs end), gone
	// ones.
	var mu sync.Mutex // the names; the server serializes nothing for us
	names := map[int]bool{}
	next := 0
	write := func(rng *rand.Rand) error {
		mu.Lock()
		i := rng.IntN(next + 1)
		exists := names[i]
		if i == next {
			next++
		}
		mu.Unlock()
		name := fmt.Sprintf("w-%05d", i)
		var code int
		var body []byte
		switch {
		case !exists:
			code, body = do("POST", widgetsIn(ns), "application/json", "", string(creatable(ns, name)))
			if code == http.StatusCreated {
				mu.Lock()
				names[i] = true
				mu.Unlock()
			}
		case rng.IntN(4) == 0:
			code, body = do("DELETE", widgetPath(ns, name), "", "", "")
			if code == http.StatusOK {
				mu.Lock()
				delete(names, i)
				mu.Unlock()
			}
		default:
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"pad":%q}},"spec":{"size":%d}}`, strings.Repeat("x", rng.IntN(20_000)), rng.IntN(1000))
			code, body = do("PATCH", widgetPath(ns, name), "application/merge-patch+json", "", patch)
		}
		if code >= 300 && code != http.StatusConflict && code != http.StatusNotFound {
			return fmt.Errorf("write of %s: %d: %s", name, code, body)
		}
		return nil
	}
	for range 400 {
		if err := write(rng); err != nil {
			t.Fatal(err)
		}
	}
	// A Table's rows are kept in runs too, their ages shown anew: ages
	// shown a second apart may differ, the rest may not.
	age := regexp.MustCompile(`"([0-9]+[smhdy])+"`)
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	// listing is told of each list begun while the writer below runs, on
	// which it makes writesPerList writes: writes go on while the list
	// is made, as many per list however slow the build (under the race
	// detector a list of the ~1 MB collection takes 10x longer; a writer
	// writing flat out made ~36,000 writes in 30 rounds and grew the
	// collection, and so each list, round after round: 313 s).
	var listing chan struct{}
	const writesPerList = 8
	check1 := func(accept, query string) {
		t.Helper()
		select {
		case listing <- struct{}{}:
		default:
		}
		code, fast := do("GET", widgetsIn(ns)+"?"+query, "", accept, "")
		if code != http.StatusOK {
			t.Fatalf("LIST %s: %d: %s", accept, code, fast)
		}
		rv := listRV(t, accept, fast)
		code, slow := do("GET", widgetsIn(ns)+"?"+query+"&resourceVersionMatch=Exact&resourceVersion="+rv, "", accept, "")
		if code != http.StatusOK {
			t.Fatalf("LIST %s at %s: %d: %s", accept, rv, code, slow)
		}
		if accept == table {
			fast, slow = age.ReplaceAll(fast, []byte(`"age"`)), age.ReplaceAll(slow, []byte(`"age"`))
		}
		if !bytes.Equal(fast, slow) {
			at := 0
			for at < min(len(fast), len(slow)) && fast[at] == slow[at] {
				at++
			}
			t.Fatalf("LIST %s at %s: %d bytes differ from the list read from the store (%d bytes) at byte %d:\n%.200q\nwant\n%.200q",
				accept, rv, len(fast), len(slow), at, fast[max(at-50, 0):], slow[max(at-50, 0):])
		}
	}
	check := func(accept string) {
		t.Helper()
		check1(accept, "")
		if accept == "application/json" {
			for _, q := range []string{"", "includeObject=None", "includeObject=Object"} {
				check1(table, q)
			}
		}
	}
	// 30 rounds, 10 under the race detector: each round lists the ~1 MB
	// collection 40 times, ~80 ms a list under -race (101 s for 30 rounds
	// alone under the heavy lock). The same seeds make the same first
	// rounds in both builds; a run reused without comparing its items
	// fails in the first round's lists.
	rounds := 30
	if race.Enabled {
		rounds = 10
	}
	for round := range rounds {
		// Writes between lists, then lists with writes going on.
		for range rng.IntN(4) {
			if err := write(rng); err != nil {
				t.Fatal(err)
			}
		}
		check("application/json")
		check("application/vnd.kubernetes.protobuf")
		stop := make(chan struct{})
		errs := make(chan error, 1)
		ch := make(chan struct{}, 1)
		listing = ch
		go func() {
			defer close(errs)
			w := rand.New(rand.NewPCG(uint64(round), 2))
			for {
				select {
				case <-stop:
					return
				case <-ch:
				}
				for range writesPerList {
					if err := write(w); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
		for range 3 {
			check("application/json")
			check("application/vnd.kubernetes.protobuf")
		}
		close(stop)
		listing = nil
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// listRV is the resourceVersion of a list response in JSON or protobuf.
func listRV(t *testing.T, accept string, body []byte) string {
	t.Helper()
	if strings.HasPrefix(accept, "application/json") {
		var l struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		return l.Metadata.ResourceVersion
	}
	var l struct {
		kapi.TypeMeta
		ListMeta kapi.ListMeta `protobuf:"bytes,1,opt,name=metadata"`
	}
	if err := codec.ByMediaType(accept).Unmarshal(body, &l); err != nil {
		t.Fatal(err)
	}
	return l.ListMeta.ResourceVersion
}

// exchange serves one request through h: body with contentType when it is
// not empty, accept when it is not; it returns the status and body.
func exchange(h http.Handler, method, path, contentType, accept, body string) (int, []byte) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}
