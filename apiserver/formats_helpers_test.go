package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// The wire-format tests write request bodies in every format and read
// every response, list and watch stream back into JSON with
// apiservertest's readers (apiservertest.Decoder), so that a test compares
// documents and not encodings. This file holds what is particular to
// apiserver's tests: the kinds served besides the example widgets, the
// Go types protobuf objects are read into, and widget bodies in every
// format.

// Media types as clients write them.
const (
	mtJSON     = apiservertest.MediaJSON
	mtYAML     = apiservertest.MediaYAML
	mtProtobuf = apiservertest.MediaProtobuf
	mtCBOR     = apiservertest.MediaCBOR
)

// formats reads bodies in every format, protobuf objects into the example
// kinds and tally.
var formats = &apiservertest.Decoder{Types: map[string]func() any{
	"example.com/v1beta1/Widget": func() any { return new(widgetapi.WidgetV1beta1) },
	"Widget":                     func() any { return new(widgetapi.Widget) },
	"WidgetClass":                func() any { return new(widgetapi.WidgetClass) },
	"Tally":                      func() any { return new(tallyRead) },
}}

// plainThing is a type without protobuf tags and without columns: it is
// served in every format but protobuf, as a Table with the default columns.
type plainThing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            plainThingSpec `json:"spec"`
}

type plainThingSpec struct {
	Size int `json:"size"`
}

const thingsPath = "/apis/plain.example.com/v1/namespaces/default/things"

// tally counts how often its objects are encoded: MarshalJSON of its spec
// (JSON, and every format made from JSON), and ProtoReflect of its proto
// field (protobuf), each by the key the object carries.
type tally struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            tallySpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Proto           *tallyProto `json:"proto,omitempty" protobuf:"bytes,3,opt,name=proto"`
}

type tallySpec struct {
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
}

var jsonMarshals, protoReflects encodeCounter

func (s tallySpec) MarshalJSON() ([]byte, error) {
	jsonMarshals.add(s.Key)
	type plain tallySpec
	return json.Marshal(plain(s))
}

// tallyProto is a proto.Message (a StringValue holding the key) whose
// ProtoReflect counts: kapi's codec marshals a proto.Message field through
// it.
type tallyProto struct {
	wrapperspb.StringValue
}

func (m *tallyProto) ProtoReflect() protoreflect.Message {
	protoReflects.add(m.GetValue())
	return m.StringValue.ProtoReflect()
}

// tallyRead is a tally as the test reads it back: the same fields and
// numbers without the counting methods, so that the test's own decoding
// does not count as the server's encoding.
type tallyRead struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            struct {
		Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	} `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Proto *wrapperspb.StringValue `json:"proto,omitempty" protobuf:"bytes,3,opt,name=proto"`
}

type encodeCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *encodeCounter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *encodeCounter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

const talliesPath = "/apis/tally.example.com/v1/namespaces/default/tallies"

// newFormatsServer serves the example widgets, plainThing and tally.
func newFormatsServer(t testing.TB) (*apiservertest.Server, *apiClient) {
	t.Helper()
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return errors.Join(
			widgetapi.Register(s),
			apiserver.Register(s, apiserver.Resource[plainThing]{
				Group: "plain.example.com", Version: "v1", Kind: "Thing", Plural: "things", Namespaced: true,
			}),
			apiserver.Register(s, apiserver.Resource[tally]{
				Group: "tally.example.com", Version: "v1", Kind: "Tally", Plural: "tallies", Namespaced: true,
			}),
		)
	})
	return srv, &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// pbWidgetBody writes a Widget request body by hand, with Kubernetes'
// ObjectMeta numbers and the tags of widgetapi's types, not with kapi's
// encoder.
func pbWidgetBody(w *widgetapi.Widget) []byte {
	meta := apiservertest.ProtoObjectMetaBody(&w.ObjectMeta)
	var spec []byte
	spec = apiservertest.AppendProtoString(spec, 1, w.Spec.Color)
	if w.Spec.Replicas != nil {
		spec = apiservertest.AppendProtoVarint(spec, 2, uint64(*w.Spec.Replicas))
	}
	if w.Spec.Size != 0 {
		spec = apiservertest.AppendProtoVarint(spec, 3, uint64(w.Spec.Size))
	}
	for _, p := range w.Spec.Ports {
		port := apiservertest.AppendProtoString(nil, 1, p.Name)
		port = apiservertest.AppendProtoVarint(port, 2, uint64(p.Port))
		port = apiservertest.AppendProtoString(port, 3, p.Protocol)
		spec = apiservertest.AppendProtoMessage(spec, 4, port)
	}
	spec = apiservertest.ProtoMap(spec, 5, w.Spec.Selector)
	var status []byte
	if w.Status.Replicas != 0 {
		status = apiservertest.AppendProtoVarint(status, 1, uint64(w.Status.Replicas))
	}
	status = apiservertest.AppendProtoString(status, 2, w.Status.Selector)
	if w.Status.ObservedGeneration != 0 {
		status = apiservertest.AppendProtoVarint(status, 3, uint64(w.Status.ObservedGeneration))
	}
	raw := apiservertest.AppendProtoMessage(nil, 1, meta)
	raw = apiservertest.AppendProtoMessage(raw, 2, spec)
	if len(status) > 0 {
		raw = apiservertest.AppendProtoMessage(raw, 3, status)
	}
	return apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, raw)
}

// widgetBody writes a widget as a request body in format f: JSON, YAML and
// CBOR from its JSON (CBOR as Kubernetes writes it when ByteStrings),
// protobuf by hand.
func widgetBody(t testing.TB, f apiservertest.Format, w *widgetapi.Widget, o apiservertest.CBOROptions) []byte {
	t.Helper()
	if f.MediaType == mtProtobuf {
		return pbWidgetBody(w)
	}
	return apiservertest.Body(t, f.MediaType, apiservertest.MustJSON(t, w), o)
}

// openStream opens a watch of path with an Accept header, checks that it
// began with the Content-Type want, and reads it by that type.
func openStream(t testing.TB, c *apiClient, path, accept, want string) *apiservertest.Stream {
	t.Helper()
	return formats.Watch(t, c.hc, c.request(context.Background(), http.MethodGet, path, nil, "Accept", accept), want)
}

// respJSON is the JSON document of a response in any format.
func respJSON(t testing.TB, r *response) []byte {
	t.Helper()
	return formats.ResponseJSON(t, r.Header, r.Body)
}

// statusOfResponse decodes the Status a response carries, in its
// Content-Type, and checks the envelope fields every Status has.
func statusOfResponse(t testing.TB, r *response, code int, reason kapi.StatusReason) kapi.Status {
	t.Helper()
	if r.Code != code {
		t.Errorf("HTTP %d, want %d; body: %.500q", r.Code, code, r.Body)
	}
	return formats.Failure(t, r.Code, r.Header, r.Body, reason)
}

// widgetOf decodes a JSON document as a Widget.
func widgetOf(t testing.TB, doc []byte) *widgetapi.Widget {
	t.Helper()
	var w widgetapi.Widget
	apiservertest.DecodeJSON(t, doc, &w)
	return &w
}

// containsAll fails unless every want is in got.
func containsAll(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s %q lack %q", what, got, w)
		}
	}
}
