package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// tallyStored is the storage version of a tally served in two versions:
// tally (v1beta1, counting its encodings) converts to and from it,
// counting conversions.
type tallyStored struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Key             string `json:"key"`
}

var tallyConversions encodeCounter

var tallyVia = apiserver.ConvertVia(func(from *tally, to *tallyStored) error {
	to.Key = from.Spec.Key
	return nil
}, func(from *tallyStored, to *tally) error {
	tallyConversions.add(from.Key)
	to.Spec.Key = from.Key
	to.Proto = &tallyProto{StringValue: wrapperspb.StringValue{Value: from.Key}}
	return nil
})

// TestVersionEncodeOnce: encode-once holds per version. A read in the
// version that is not stored converts each object version once, and
// encodes that once per media type, shared by every GET, LIST and watcher.
func TestVersionEncodeOnce(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := apiserver.Register(s, apiserver.Resource[tallyStored]{
			Group: "tally2.example.com", Version: "v1", Kind: "Tally", Plural: "tallies", Namespaced: true, Storage: true,
		}); err != nil {
			return err
		}
		return apiserver.Register(s, apiserver.Resource[tally]{
			Group: "tally2.example.com", Version: "v1beta1", Kind: "Tally", Plural: "tallies", Namespaced: true, Conversion: tallyVia,
		})
	})
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const key = "versions-encode-once"
	const beta = "/apis/tally2.example.com/v1beta1/namespaces/default/tallies"
	c.do(http.MethodPost, "/apis/tally2.example.com/v1/namespaces/default/tallies",
		`{"apiVersion":"tally2.example.com/v1","kind":"Tally","metadata":{"name":"t"},"key":"`+key+`"}`).mustCode(t, http.StatusCreated)
	item := beta + "/t"

	counts := func() [3]int { return [3]int{tallyConversions.get(key), jsonMarshals.get(key), protoReflects.get(key)} }
	readAll := func(t *testing.T, mt, stream string) {
		t.Helper()
		for range 3 {
			c.do(http.MethodGet, item, nil, "Accept", mt).mustCode(t, http.StatusOK)
		}
		for _, q := range []string{"", "?resourceVersion=0", "?fieldSelector=metadata.name%3Dt"} {
			c.do(http.MethodGet, beta+q, nil, "Accept", mt).mustCode(t, http.StatusOK)
		}
		if stream == "" {
			return
		}
		for range 2 {
			ws := openStream(t, c, beta+"?watch=true", mt, stream)
			if ev := ws.Next(); ev.Type != "ADDED" || ev.Name() != "t" {
				t.Errorf("event %s %s, want ADDED t", ev.Type, ev.Name())
			}
			ws.Stop()
		}
	}

	before := counts()
	first := c.get(item).mustCode(t, http.StatusOK)
	afterFirst := counts()
	if afterFirst[0]-before[0] != 1 || afterFirst[1]-before[1] > 1 {
		t.Errorf("the first v1beta1 GET converted %d times and marshaled %d times, want 1 and at most 1", afterFirst[0]-before[0], afterFirst[1]-before[1])
	}
	var doc tally
	first.into(t, &doc)
	if doc.Spec.Key != key || doc.APIVersion != "tally2.example.com/v1beta1" {
		t.Fatalf("GET %s", first.Body)
	}
	readAll(t, mtJSON, mtJSON)
	readAll(t, mtCBOR, "application/cbor-seq")
	readAll(t, mtYAML, "")
	afterText := counts()
	if afterText[0] != afterFirst[0] || afterText[1] != afterFirst[1] || afterText[2] != afterFirst[2] {
		t.Errorf("GETs, LISTs and watchers in JSON, CBOR and YAML: %d more conversions, %d more MarshalJSON, %d ProtoReflect; want none",
			afterText[0]-afterFirst[0], afterText[1]-afterFirst[1], afterText[2]-afterFirst[2])
	}
	c.do(http.MethodGet, item, nil, "Accept", mtProtobuf).mustCode(t, http.StatusOK)
	afterProto := counts()
	if afterProto[2] == afterText[2] {
		t.Fatal("the protobuf GET did not reach the proto.Message field (the counter is blind)")
	}
	readAll(t, mtProtobuf, mtProtobuf+";stream=watch")
	if end := counts(); end != afterProto {
		t.Errorf("protobuf reads after the first: %v, then %v; want no conversion or encoding", afterProto, end)
	}
	t.Logf("conversions, MarshalJSON, ProtoReflect: %v before, %v after every read", before, counts())

	// A new version of the object is converted once more, at most once:
	// by the reads, or not at all when the watch cache took the PATCH
	// answer's conversion (offered to it when the write's event had not
	// been applied yet: a matter of timing).
	c.do(http.MethodPatch, item, `{"metadata":{"labels":{"a":"b"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	mark := counts()
	var read tally
	c.get(item).mustCode(t, http.StatusOK).into(t, &read)
	if read.Labels["a"] != "b" {
		t.Fatalf("the GET after the PATCH read %v, want the patched object", read.Labels)
	}
	readAll(t, mtJSON, mtJSON)
	if n := counts()[0] - mark[0]; n > 1 {
		t.Errorf("the new object version was converted %d times by the reads, want at most 1", n)
	}
}

// BenchmarkVersions sets reads in v1beta1, converted from the cached v1
// objects, beside the same reads in v1: a GET, a LIST of 10,000 and a
// watch's 10,000 initial events, after a first read made the conversions
// and encodings. The issue asks the v1beta1 LIST to cost at most 1.25
// times the v1 LIST.
func BenchmarkVersions(b *testing.B) {
	const n = 10000
	srv := newWidgetHandler(b)
	for i := range n {
		serve(b, srv, http.MethodPost, widgetsIn("default"), creatable("default", fmt.Sprintf("w-%05d", i)), http.StatusCreated)
	}
	for _, version := range []string{"v1", "v1beta1"} {
		collection := "/apis/example.com/" + version + "/namespaces/default/widgets"
		b.Run("get/"+version, func(b *testing.B) {
			path := collection + "/w-00042"
			b.SetBytes(int64(discardGet(b, srv, path)))
			b.ReportAllocs()
			for b.Loop() {
				discardGet(b, srv, path)
			}
		})
		b.Run("list10000/"+version, func(b *testing.B) {
			b.SetBytes(int64(discardGet(b, srv, collection)))
			b.ReportAllocs()
			for b.Loop() {
				discardGet(b, srv, collection)
			}
		})
		b.Run("watch10000/"+version, func(b *testing.B) {
			path := collection + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
			b.SetBytes(int64(watchInitial(b, srv, path)))
			b.ReportAllocs()
			for b.Loop() {
				watchInitial(b, srv, path)
			}
		})
	}
}

// discardGet GETs path from h, counting the body's bytes rather than
// keeping them (a recorder's growing buffer would cost more than the
// server), and checks the answer is 200.
func discardGet(b *testing.B, h http.Handler, path string) int {
	w := &untilBookmark{header: http.Header{}, done: func() {}}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	if w.code != http.StatusOK {
		b.Fatalf("GET %s: HTTP %d", path, w.code)
	}
	return w.n
}

// watchInitial reads a watch's initial events up to the bookmark that
// ends them, and returns the bytes read.
func watchInitial(b *testing.B, h http.Handler, path string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &untilBookmark{header: http.Header{}, done: cancel}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx))
	if !w.ended {
		b.Fatalf("the watch ended before its initial events did (%d bytes)", w.n)
	}
	return w.n
}

// untilBookmark is a ResponseWriter that counts what is written and ends
// the request when the initial-events-end bookmark arrives.
type untilBookmark struct {
	header http.Header
	code   int
	n      int
	ended  bool
	done   func()
}

func (w *untilBookmark) Header() http.Header  { return w.header }
func (w *untilBookmark) WriteHeader(code int) { w.code = code }
func (w *untilBookmark) Flush()               {}
func (w *untilBookmark) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.n += len(p)
	if bytes.Contains(p, []byte("k8s.io/initial-events-end")) {
		w.ended = true
		w.done()
	}
	return len(p), nil
}
