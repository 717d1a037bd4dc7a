package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Fuzz targets that drive a whole server over HTTP: the query parser of
// list, watch and get, the DeleteOptions decoder, and any request at all.
// Every write is a dry run, so the store must never change; every answer
// must be a success or a 4xx Status, never a 5xx, never a hang.

// fuzzServer is a server with the corpus's objects, shared by the
// iterations of one fuzz target.
type fuzzServer struct {
	base  string
	hc    *http.Client
	store storage.Interface
	items []storage.KeyValue
	rev   int64
}

func newFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	store := memory.New()
	f.Cleanup(func() { store.Close() })
	srv := apiservertest.New(f, withActions, append(corpusBuiltins, apiserver.WithStorage(store), apiserver.WithMaxRequestBodyBytes(bodyLimit))...)
	corpusSeed(&apiClient{t: f, base: srv.URL, hc: srv.Client()})
	items, rev := storeSnapshot(f, store)
	return &fuzzServer{base: srv.URL, hc: srv.Client(), store: store, items: items, rev: rev}
}

// futureRevision reports whether the query asks for a resourceVersion the
// store has not reached: kube-apiserver's answer to that is to wait, then
// 504 with a cause that makes clients retry; it is not what is fuzzed here.
func (s *fuzzServer) futureRevision(query string) bool {
	q, _ := url.ParseQuery(query)
	for _, rv := range q["resourceVersion"] {
		if n, err := strconv.ParseInt(strings.TrimSpace(rv), 10, 64); err == nil && n > s.rev {
			return true
		}
	}
	return false
}

// check sends tc and fails on a 5xx, a 4xx that is not a Status, no answer,
// or a change to the store. It returns the answer, or nil if no client
// sends tc.
func (s *fuzzServer) check(t *testing.T, tc corpusCase) *response {
	t.Helper()
	tc.path = escapeTarget(tc.path)
	if _, err := http.NewRequest(tc.method, s.base+tc.path, nil); err != nil {
		return nil // no client can send it
	}
	r, err := sendCase(context.Background(), s.hc, s.base, tc)
	if err != nil {
		if strings.Contains(err.Error(), "invalid method") || strings.Contains(err.Error(), "invalid header field") {
			return nil // the client refused to send it
		}
		t.Fatalf("%q %q: no answer: %v", tc.method, tc.path, err)
	}
	if r.Code >= 400 {
		if p := statusProblem(r, 0); p != "" {
			t.Fatalf("%q %q (headers %q, body %.200q): %s", tc.method, tc.path, tc.header, tc.body, p)
		}
	}
	items, rev := storeSnapshot(t, s.store)
	if rev != s.rev || !reflect.DeepEqual(items, s.items) {
		t.Fatalf("%q %q (headers %q, body %.200q) changed the store: revision %d, then %d", tc.method, tc.path, tc.header, tc.body, s.rev, rev)
	}
	return r
}

// escapeTarget percent-encodes the bytes a request line cannot carry (Go's
// HTTP server answers those itself, in plain text, before kapi sees them),
// and '#', which would end the path.
func escapeTarget(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if c := path[i]; c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// withDryRun adds dryRun=All to a path's query: whatever else the query
// says, a write may not persist. (Every dryRun value must be All, so the
// fuzzer cannot undo it.)
func withDryRun(path string) string {
	if strings.Contains(path, "?") {
		return path + "&dryRun=All"
	}
	return path + "?dryRun=All"
}

var fuzzAccepts = []string{
	mtJSON, mtYAML, mtProtobuf, mtCBOR, tableAccept(mtJSON, "v1"),
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "*/*", "",
}

var fuzzListPaths = []string{
	widgetsIn(corpusNS), allWidgets, widgetClasses, corpusItem, corpusStatus, corpusClass, widgetsIn("other"),
}

// FuzzListQuery feeds query strings to get, list and watch.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{
		"", "limit=1", "limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhXHUwMDAwIn0",
		"watch=1&timeoutSeconds=1", "watch=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=1",
		"resourceVersion=0&resourceVersionMatch=NotOlderThan", "resourceVersion=1&resourceVersionMatch=Exact",
		"labelSelector=app%20in%20(b,c),!x&fieldSelector=metadata.name%3Da", "fieldSelector=spec.color!%3Dred,metadata.namespace%3Ddefault",
		"includeObject=Object&pretty=1", "timeoutSeconds=abc&limit=-1", "watch=1&resourceVersion=abc",
	} {
		for i := range fuzzListPaths {
			f.Add(uint8(i), uint8(i), q)
		}
	}
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, path, accept uint8, query string) {
		if s.futureRevision(query) {
			return
		}
		tc := corpusCase{method: http.MethodGet, path: fuzzListPaths[int(path)%len(fuzzListPaths)] + "?" + query,
			header: []string{"Accept", fuzzAccepts[int(accept)%len(fuzzAccepts)]}}
		if tc.header[1] == "" {
			tc.header = nil
		}
		s.check(t, tc)
	})
}

var fuzzContentTypes = []string{mtJSON, mtYAML, mtCBOR, mtProtobuf, ""}

// FuzzDeleteOptions feeds DeleteOptions, in every format and as query
// parameters, to delete and deletecollection.
func FuzzDeleteOptions(f *testing.F) {
	paths := []string{corpusItem, corpusClass, widgetsIn(corpusNS), widgetPath(corpusNS, "missing")}
	for _, b := range []string{
		``, `{}`, `{"propagationPolicy":"Background"}`, `{"gracePeriodSeconds":0,"orphanDependents":true}`,
		`{"preconditions":{"uid":"x","resourceVersion":"1"}}`, `{"dryRun":["All"]}`, `{"kind":"DeleteOptions","apiVersion":"v1"}`,
		`{"propagationPolicy":5}`, "propagationPolicy: Foreground\n",
		`{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`, `{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"preconditions":{}}`,
	} {
		for i := range paths {
			f.Add(uint8(i), uint8(i), []byte(b), "propagationPolicy=Orphan&gracePeriodSeconds=0")
		}
	}
	f.Add(uint8(0), uint8(2), encCBOR(map[string]any{"propagationPolicy": "Background"}), "")
	f.Add(uint8(0), uint8(3), []byte("k8s\x00\x0a\x00\x12\x00"), "orphanDependents=false")
	f.Add(uint8(1), uint8(4), []byte(nil), "ignoreStoreReadErrorWithClusterBreakingPotential=true")
	f.Add(uint8(2), uint8(4), []byte(nil), "ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=All")
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, path, contentType uint8, body []byte, query string) {
		tc := corpusCase{method: http.MethodDelete, path: withDryRun(paths[int(path)%len(paths)] + "?" + query), body: body}
		if ct := fuzzContentTypes[int(contentType)%len(fuzzContentTypes)]; ct != "" {
			tc.header = []string{"Content-Type", ct}
		}
		if s.futureRevision(query) {
			return
		}
		s.check(t, tc)
	})
}

// FuzzRequest sends any request at all: method, path and query, headers,
// body, seeded with the bad-input corpus.
func FuzzRequest(f *testing.F) {
	for _, tc := range badInputCorpus() {
		if tc.raw != nil || len(tc.body) > 64<<10 {
			continue // large seeds slow every mutation down; the corpus test has them
		}
		contentType, accept := "", ""
		for i := 0; i+1 < len(tc.header); i += 2 {
			switch tc.header[i] {
			case "Content-Type":
				contentType = tc.header[i+1]
			case "Accept":
				accept = tc.header[i+1]
			}
		}
		f.Add(tc.method, tc.path, contentType, accept, tc.body)
	}
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, method, path, contentType, accept string, body []byte) {
		if !strings.HasPrefix(path, "/") {
			return
		}
		if _, query, _ := strings.Cut(path, "?"); s.futureRevision(query) {
			return
		}
		tc := corpusCase{method: method, path: withDryRun(path), body: body}
		if contentType != "" {
			tc.header = append(tc.header, "Content-Type", contentType)
		}
		if accept != "" {
			tc.header = append(tc.header, "Accept", accept)
		}
		s.check(t, tc)
	})
}
