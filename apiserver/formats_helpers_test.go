package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"gopkg.in/yaml.v3"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// This file is the client side of the wire-format tests: it writes request
// bodies in every format and reads every response, list and watch stream
// back into JSON, so that a test compares documents and not encodings.
// Protobuf is read with the codec's exported Format.Unmarshal for single
// objects and with protowire for everything around them (envelopes, lists,
// watch frames, Status), using Kubernetes' field numbers: a mistake in
// kapi's numbering shows up as a mismatch here.

// Media types as clients write them.
const (
	mtJSON     = "application/json"
	mtYAML     = "application/yaml"
	mtProtobuf = "application/vnd.kubernetes.protobuf"
	mtCBOR     = "application/cbor"
)

// wireFormat is one media type of the matrix as a client speaks it.
type wireFormat struct {
	name       string // the t.Run name
	mediaType  string
	streamType string // Content-Type of a watch in it; "" when it has none
}

var wireFormats = []wireFormat{
	{"json", mtJSON, mtJSON},
	{"yaml", mtYAML, ""},
	{"protobuf", mtProtobuf, mtProtobuf + ";stream=watch"},
	{"cbor", mtCBOR, "application/cbor-seq"},
}

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

// uncounted is the tally's JSON form without the counting methods, for
// the test's own decoding, which must not count as the server's.
func (x *tally) uncounted() any {
	type proto struct {
		Value string `json:"value,omitempty"`
	}
	out := struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            struct {
			Key string `json:"key"`
		} `json:"spec"`
		Proto *proto `json:"proto,omitempty"`
	}{TypeMeta: x.TypeMeta, ObjectMeta: x.ObjectMeta}
	out.Spec.Key = x.Spec.Key
	if x.Proto != nil {
		out.Proto = &proto{Value: x.Proto.GetValue()}
	}
	return out
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

// bareType is the media type of a Content-Type without its parameters.
func bareType(t testing.TB, contentType string) string {
	t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	return mt
}

// wantContentType checks the Content-Type of a response exactly.
func wantContentType(t testing.TB, h http.Header, want string) {
	t.Helper()
	if got := h.Get("Content-Type"); got != want {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
}

// docJSON turns a whole response body in media type mt (bare) into the JSON
// document it holds.
func docJSON(t testing.TB, mt string, body []byte) []byte {
	t.Helper()
	switch mt {
	case mtJSON:
		if !json.Valid(body) {
			t.Fatalf("the body is not JSON: %.300q", body)
		}
		return body
	case mtYAML, mtCBOR:
		if mt == mtCBOR && !bytes.HasPrefix(body, []byte{0xd9, 0xd9, 0xf7}) {
			t.Errorf("the CBOR body does not start with the self-described tag 55799: % x", body[:min(len(body), 8)])
		}
		out, ok, err := codec.ByMediaType(mt).ToJSON(body)
		if err != nil || !ok {
			t.Fatalf("%s body to JSON: ok %v, %v; body: %.300q", mt, ok, err, body)
		}
		return out
	case mtProtobuf:
		return protoDocJSON(t, body)
	}
	t.Fatalf("no reader for media type %q", mt)
	return nil
}

// respJSON is docJSON of a response, by its Content-Type.
func respJSON(t testing.TB, r *response) []byte {
	t.Helper()
	return docJSON(t, bareType(t, r.Header.Get("Content-Type")), r.Body)
}

// sameDoc fails unless two JSON documents hold the same values.
func sameDoc(t testing.TB, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v in %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s differs from the JSON answer:\ngot  %s\nwant %s", what, got, want)
	}
}

// decodeInto unmarshals a JSON document.
func decodeInto(t testing.TB, doc []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(doc, v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, doc, err)
	}
}

// # Protobuf

// pbField is one field of a protobuf message.
type pbField struct {
	num    protowire.Number
	typ    protowire.Type
	bytes  []byte // length-delimited fields
	varint uint64 // varint fields
}

// pbFields reads every field of a message; fixed-width fields are skipped.
func pbFields(t testing.TB, data []byte) []pbField {
	t.Helper()
	var fields []pbField
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			t.Fatalf("protobuf tag: %v", protowire.ParseError(n))
		}
		data = data[n:]
		f := pbField{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			f.varint, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			t.Fatalf("protobuf field %d: %v", num, protowire.ParseError(n))
		}
		data = data[n:]
		fields = append(fields, f)
	}
	return fields
}

// pbEnvelope reads Kubernetes' envelope: "k8s\x00", then runtime.Unknown
// {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3,
// contentType = 4}.
func pbEnvelope(t testing.TB, body []byte) (kapi.TypeMeta, []byte) {
	t.Helper()
	rest, ok := bytes.CutPrefix(body, []byte("k8s\x00"))
	if !ok {
		t.Fatalf("the protobuf body lacks the k8s\\x00 envelope: % x", body[:min(len(body), 8)])
	}
	var tm kapi.TypeMeta
	var raw []byte
	for _, f := range pbFields(t, rest) {
		switch f.num {
		case 1:
			for _, g := range pbFields(t, f.bytes) {
				switch g.num {
				case 1:
					tm.APIVersion = string(g.bytes)
				case 2:
					tm.Kind = string(g.bytes)
				}
			}
		case 2:
			raw = f.bytes
		case 3, 4:
			if len(f.bytes) > 0 {
				t.Errorf("envelope field %d (contentEncoding/contentType) is %q, want empty for plain protobuf", f.num, f.bytes)
			}
		}
	}
	return tm, raw
}

// pbWrap writes an envelope around a message.
func pbWrap(tm kapi.TypeMeta, raw []byte) []byte {
	var typeMeta []byte
	typeMeta = pbString(typeMeta, 1, tm.APIVersion)
	typeMeta = pbString(typeMeta, 2, tm.Kind)
	b := []byte("k8s\x00")
	b = pbMessage(b, 1, typeMeta)
	return pbMessage(b, 2, raw)
}

func pbString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func pbMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func pbVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// protoObjects are the types a protobuf object is read into, by
// apiVersion/kind for a kind in several versions, else by kind.
var protoObjects = map[string]func() kapi.Object{
	"example.com/v1beta1/Widget": func() kapi.Object { return new(widgetapi.WidgetV1beta1) },
	"Widget":                     func() kapi.Object { return new(widgetapi.Widget) },
	"WidgetClass":                func() kapi.Object { return new(widgetapi.WidgetClass) },
	"PartialObjectMetadata":      func() kapi.Object { return new(kapi.PartialObjectMetadata) },
	"Tally":                      func() kapi.Object { return new(tally) },
}

// protoDocJSON reads a protobuf body (object, list or Status) as the JSON
// document it stands for.
func protoDocJSON(t testing.TB, body []byte) []byte {
	t.Helper()
	tm, raw := pbEnvelope(t, body)
	switch {
	case tm.Kind == "Status":
		st := pbStatus(t, raw)
		st.TypeMeta = tm
		return mustJSON(t, st)
	case strings.HasSuffix(tm.Kind, "List"):
		// Every Kubernetes list message: {metadata = 1: ListMeta, items = 2}.
		// Items travel without their type; it is the list's, less "List".
		itemType := kapi.TypeMeta{Kind: strings.TrimSuffix(tm.Kind, "List"), APIVersion: tm.APIVersion}
		list := struct {
			kapi.TypeMeta `json:",inline"`
			Metadata      kapi.ListMeta     `json:"metadata"`
			Items         []json.RawMessage `json:"items"`
		}{TypeMeta: tm, Items: []json.RawMessage{}}
		for _, f := range pbFields(t, raw) {
			switch f.num {
			case 1:
				list.Metadata = pbListMeta(t, f.bytes)
			case 2:
				list.Items = append(list.Items, protoObjectJSON(t, pbWrap(itemType, f.bytes)))
			default:
				t.Errorf("%s: unexpected field %d", tm.Kind, f.num)
			}
		}
		return mustJSON(t, list)
	}
	return protoObjectJSON(t, body)
}

// protoObjectJSON decodes one object in its envelope with the codec's
// Format.Unmarshal and gives its JSON.
func protoObjectJSON(t testing.TB, body []byte) []byte {
	t.Helper()
	tm, _ := pbEnvelope(t, body)
	newObject, ok := protoObjects[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		newObject, ok = protoObjects[tm.Kind]
	}
	if !ok {
		t.Fatalf("no Go type for protobuf kind %q", tm.Kind)
	}
	obj := newObject()
	if err := codec.ByMediaType(mtProtobuf).Unmarshal(body, obj); err != nil {
		t.Fatalf("unmarshal protobuf %s: %v", tm.Kind, err)
	}
	if x, ok := obj.(*tally); ok {
		return mustJSON(t, x.uncounted())
	}
	return mustJSON(t, obj)
}

// pbListMeta reads ListMeta {selfLink = 1, resourceVersion = 2, continue = 3,
// remainingItemCount = 4 (varint)}.
func pbListMeta(t testing.TB, data []byte) kapi.ListMeta {
	t.Helper()
	var m kapi.ListMeta
	for _, f := range pbFields(t, data) {
		switch f.num {
		case 2:
			m.ResourceVersion = string(f.bytes)
		case 3:
			m.Continue = string(f.bytes)
		case 4:
			if f.typ != protowire.VarintType {
				t.Errorf("ListMeta.remainingItemCount has wire type %d, want varint", f.typ)
			}
			n := int64(f.varint)
			m.RemainingItemCount = &n
		}
	}
	return m
}

// pbObjectMeta reads the metadata (field 1) of an object message with
// Kubernetes' ObjectMeta numbers: name 1, generateName 2, namespace 3,
// uid 5, resourceVersion 6, generation 7, creationTimestamp 8 {seconds 1},
// labels 11, annotations 12 ({key 1, value 2} entries).
func pbObjectMeta(t testing.TB, raw []byte) kapi.ObjectMeta {
	t.Helper()
	var m kapi.ObjectMeta
	entry := func(data []byte) (string, string) {
		var k, v string
		for _, f := range pbFields(t, data) {
			switch f.num {
			case 1:
				k = string(f.bytes)
			case 2:
				v = string(f.bytes)
			}
		}
		return k, v
	}
	for _, f := range pbFields(t, raw) {
		if f.num != 1 {
			continue
		}
		for _, g := range pbFields(t, f.bytes) {
			switch g.num {
			case 1:
				m.Name = string(g.bytes)
			case 2:
				m.GenerateName = string(g.bytes)
			case 3:
				m.Namespace = string(g.bytes)
			case 5:
				m.UID = string(g.bytes)
			case 6:
				m.ResourceVersion = string(g.bytes)
			case 7:
				m.Generation = int64(g.varint)
			case 8:
				for _, h := range pbFields(t, g.bytes) {
					if h.num == 1 {
						m.CreationTimestamp = kapi.NewTime(time.Unix(int64(h.varint), 0))
					}
				}
			case 11, 12:
				k, v := entry(g.bytes)
				target := &m.Labels
				if g.num == 12 {
					target = &m.Annotations
				}
				if *target == nil {
					*target = map[string]string{}
				}
				(*target)[k] = v
			case 17: // managedFields: their JSON is checked elsewhere
			default:
				t.Errorf("ObjectMeta: unexpected field %d", g.num)
			}
		}
	}
	return m
}

// pbStatus reads Status {metadata = 1, status = 2, message = 3, reason = 4,
// details = 5 {name = 1, group = 2, kind = 3, causes = 4 {reason = 1,
// message = 2, field = 3}, retryAfterSeconds = 5, uid = 6}, code = 6}.
func pbStatus(t testing.TB, data []byte) kapi.Status {
	t.Helper()
	var st kapi.Status
	for _, f := range pbFields(t, data) {
		switch f.num {
		case 1:
			st.ListMeta = pbListMeta(t, f.bytes)
		case 2:
			st.Status = string(f.bytes)
		case 3:
			st.Message = string(f.bytes)
		case 4:
			st.Reason = kapi.StatusReason(f.bytes)
		case 5:
			d := &kapi.StatusDetails{}
			for _, g := range pbFields(t, f.bytes) {
				switch g.num {
				case 1:
					d.Name = string(g.bytes)
				case 2:
					d.Group = string(g.bytes)
				case 3:
					d.Kind = string(g.bytes)
				case 4:
					var c kapi.StatusCause
					for _, h := range pbFields(t, g.bytes) {
						switch h.num {
						case 1:
							c.Type = kapi.CauseType(h.bytes)
						case 2:
							c.Message = string(h.bytes)
						case 3:
							c.Field = string(h.bytes)
						}
					}
					d.Causes = append(d.Causes, c)
				case 5:
					d.RetryAfterSeconds = int32(g.varint)
				case 6:
					d.UID = string(g.bytes)
				}
			}
			st.Details = d
		case 6:
			st.Code = int32(f.varint)
		}
	}
	return st
}

// pbWidgetBody writes a Widget request body by hand, with Kubernetes'
// ObjectMeta numbers and the tags of widgetapi's types, not with kapi's
// encoder.
func pbWidgetBody(w *widgetapi.Widget) []byte {
	var meta []byte
	meta = pbString(meta, 1, w.Name)
	meta = pbString(meta, 2, w.GenerateName)
	meta = pbString(meta, 3, w.Namespace)
	meta = pbString(meta, 5, w.UID)
	meta = pbString(meta, 6, w.ResourceVersion)
	if w.Generation != 0 {
		meta = pbVarint(meta, 7, uint64(w.Generation))
	}
	if !w.CreationTimestamp.IsZero() {
		meta = pbMessage(meta, 8, pbVarint(nil, 1, uint64(w.CreationTimestamp.Unix())))
	}
	for _, k := range sortedKeys(w.Labels) {
		meta = pbMessage(meta, 11, pbString(pbString(nil, 1, k), 2, w.Labels[k]))
	}
	for _, k := range sortedKeys(w.Annotations) {
		meta = pbMessage(meta, 12, pbString(pbString(nil, 1, k), 2, w.Annotations[k]))
	}
	var spec []byte
	spec = pbString(spec, 1, w.Spec.Color)
	if w.Spec.Replicas != nil {
		spec = pbVarint(spec, 2, uint64(*w.Spec.Replicas))
	}
	if w.Spec.Size != 0 {
		spec = pbVarint(spec, 3, uint64(w.Spec.Size))
	}
	for _, p := range w.Spec.Ports {
		port := pbString(nil, 1, p.Name)
		port = pbVarint(port, 2, uint64(p.Port))
		port = pbString(port, 3, p.Protocol)
		spec = pbMessage(spec, 4, port)
	}
	for _, k := range sortedKeys(w.Spec.Selector) {
		spec = pbMessage(spec, 5, pbString(pbString(nil, 1, k), 2, w.Spec.Selector[k]))
	}
	var status []byte
	if w.Status.Replicas != 0 {
		status = pbVarint(status, 1, uint64(w.Status.Replicas))
	}
	status = pbString(status, 2, w.Status.Selector)
	if w.Status.ObservedGeneration != 0 {
		status = pbVarint(status, 3, uint64(w.Status.ObservedGeneration))
	}
	raw := pbMessage(nil, 1, meta)
	raw = pbMessage(raw, 2, spec)
	if len(status) > 0 {
		raw = pbMessage(raw, 3, status)
	}
	return pbWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, raw)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// # CBOR

// cborPairs is a CBOR map written in this order, duplicates kept.
type cborPairs []any

// cborRaw is written as it is.
type cborRaw []byte

// cborOptions say how a client writes strings: Kubernetes writes every Go
// string, keys too, as a byte string; other clients write text strings.
type cborOptions struct{ byteStrings bool }

// cborBody is a whole CBOR request body: tag 55799, then v.
func cborBody(v any, o cborOptions) []byte {
	return o.append([]byte{0xd9, 0xd9, 0xf7}, v)
}

func cborHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major<<5|byte(n))
	case n <= math.MaxUint8:
		return append(b, major<<5|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, major<<5|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, major<<5|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, major<<5|27), n)
}

// append writes v: nil, bool, string, int, int64, float64, json.Number,
// []any, map[string]any (keys sorted), cborPairs or cborRaw.
func (o cborOptions) append(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, 0xf6)
	case bool:
		if v {
			return append(b, 0xf5)
		}
		return append(b, 0xf4)
	case string:
		major := byte(3)
		if o.byteStrings {
			major = 2
		}
		return append(cborHead(b, major, uint64(len(v))), v...)
	case int:
		return o.append(b, int64(v))
	case int64:
		if v < 0 {
			return cborHead(b, 1, uint64(-1-v))
		}
		return cborHead(b, 0, uint64(v))
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 0xfb), math.Float64bits(v))
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return o.append(b, n)
		}
		f, _ := v.Float64()
		return o.append(b, f)
	case []any:
		b = cborHead(b, 4, uint64(len(v)))
		for _, e := range v {
			b = o.append(b, e)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = cborHead(b, 5, uint64(len(v)))
		for _, k := range keys {
			b = o.append(o.append(b, k), v[k])
		}
		return b
	case cborPairs:
		b = cborHead(b, 5, uint64(len(v)/2))
		for _, e := range v {
			b = o.append(b, e)
		}
		return b
	case cborRaw:
		return append(b, v...)
	}
	panic(fmt.Sprintf("cbor: cannot write %T", v))
}

// readCBORItem reads one whole data item of a CBOR sequence.
func readCBORItem(r *bufio.Reader) ([]byte, error) {
	var item []byte
	err := cborItem(r, &item, 0)
	return item, err
}

func cborItem(r *bufio.Reader, item *[]byte, depth int) error {
	if depth > 20000 {
		return errors.New("cbor: nested too deeply")
	}
	first, err := r.ReadByte()
	if err != nil {
		return err
	}
	*item = append(*item, first)
	major, info := first>>5, first&0x1f
	var n uint64
	switch {
	case info < 24:
		n = uint64(info)
	case info <= 27:
		size := 1 << (info - 24)
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return io.ErrUnexpectedEOF
		}
		*item = append(*item, buf...)
		for _, c := range buf {
			n = n<<8 | uint64(c)
		}
	case info == 31:
		if major == 7 {
			return errors.New("cbor: unexpected break")
		}
		// Indefinite length: items (chunks) until the break.
		for {
			c, err := r.ReadByte()
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			if c == 0xff {
				*item = append(*item, c)
				return nil
			}
			if err := r.UnreadByte(); err != nil {
				return err
			}
			count := 1
			if major == 5 {
				count = 2
			}
			for range count {
				if err := cborItem(r, item, depth+1); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("cbor: reserved additional information %d", info)
	}
	switch major {
	case 2, 3:
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return io.ErrUnexpectedEOF
		}
		*item = append(*item, buf...)
	case 4, 5:
		if major == 5 {
			n *= 2
		}
		for range n {
			if err := cborItem(r, item, depth+1); err != nil {
				return err
			}
		}
	case 6:
		return cborItem(r, item, depth+1)
	}
	return nil
}

// # Request bodies

// widgetBody writes a widget as a request body in format f: JSON, YAML and
// CBOR from its JSON (CBOR as Kubernetes writes it when byteStrings),
// protobuf by hand.
func widgetBody(t testing.TB, f wireFormat, w *widgetapi.Widget, o cborOptions) []byte {
	t.Helper()
	if f.mediaType == mtProtobuf {
		return pbWidgetBody(w)
	}
	data := mustJSON(t, w)
	if f.mediaType == mtJSON {
		return data
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if f.mediaType == mtCBOR {
		return cborBody(doc, o)
	}
	out, err := yaml.Marshal(yamlNumbers(doc))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// yamlNumbers turns json.Numbers into int64 or float64 for yaml.v3.
func yamlNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = yamlNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = yamlNumbers(v[k])
		}
	}
	return v
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return data
}

// # Watch streams in every format

// streamEvent is one watch event, its object as JSON whatever the format.
type streamEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (e streamEvent) name() string {
	var o struct {
		Metadata kapi.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(e.Object, &o)
	return o.Metadata.Name
}

// formatStream reads a watch in any format.
type formatStream struct {
	t           testing.TB
	contentType string
	events      chan streamEvent
	done        chan struct{}
	err         error // why it ended; valid after done
	cancel      context.CancelFunc
}

// openStream opens a watch with an Accept header, checks that it began
// with the Content-Type want, and reads it by that type.
func openStream(t testing.TB, c *apiClient, path, accept, want string) *formatStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.hc.Do(c.request(ctx, http.MethodGet, path, nil, "Accept", accept))
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("watch %s (Accept %s): HTTP %d: %.500q", path, accept, resp.StatusCode, data)
	}
	ct := resp.Header.Get("Content-Type")
	if ct != want {
		t.Errorf("watch %s (Accept %s): Content-Type %q, want %q", path, accept, ct, want)
	}
	s := &formatStream{t: t, contentType: ct, events: make(chan streamEvent), done: make(chan struct{}), cancel: cancel}
	mt := bareType(t, ct)
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := readStreamEvent(br, mt)
			if err != nil {
				s.err = err
				return
			}
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(s.stop)
	return s
}

// readStreamEvent reads one event of a stream of media type mt. It runs
// outside the test goroutine, so it returns errors instead of failing.
func readStreamEvent(br *bufio.Reader, mt string) (ev streamEvent, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	rt := &recordingT{}
	switch mt {
	case mtJSON:
		line, err := br.ReadBytes('\n')
		if err != nil {
			return ev, err
		}
		err = json.Unmarshal(line, &ev)
		return ev, err
	case mtProtobuf:
		// A 4-byte big-endian length, then WatchEvent {type = 1,
		// object = 2: RawExtension {raw = 1}}, raw an enveloped object.
		var size [4]byte
		if _, err := io.ReadFull(br, size[:]); err != nil {
			return ev, err
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(br, frame); err != nil {
			return ev, err
		}
		for _, f := range pbFields(rt, frame) {
			switch f.num {
			case 1:
				ev.Type = string(f.bytes)
			case 2:
				for _, g := range pbFields(rt, f.bytes) {
					if g.num == 1 {
						ev.Object = protoDocJSON(rt, g.bytes)
					}
				}
			}
		}
		return ev, rt.err()
	case "application/cbor-seq":
		item, err := readCBORItem(br)
		if err != nil {
			return ev, err
		}
		if !bytes.HasPrefix(item, []byte{0xd9, 0xd9, 0xf7}) {
			return ev, fmt.Errorf("a cbor-seq item does not start with tag 55799: % x", item[:min(len(item), 8)])
		}
		doc, _, err := codec.ByMediaType(mtCBOR).ToJSON(item)
		if err != nil {
			return ev, err
		}
		err = json.Unmarshal(doc, &ev)
		return ev, err
	}
	return ev, fmt.Errorf("no reader for stream type %q", mt)
}

// recordingT lets the protobuf readers run off the test goroutine: Fatalf
// panics with the message, which readStreamEvent recovers.
type recordingT struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingT) Helper() {}
func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recordingT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (r *recordingT) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(r.errs, "; "))
}

func (s *formatStream) stop() {
	s.cancel()
	<-s.done
}

// next is the next event; the test fails if none comes before the
// deadline or the stream ends.
func (s *formatStream) next() streamEvent {
	s.t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		s.t.Fatalf("the watch ended (%v), want another event", s.err)
	case <-time.After(deadline):
		s.t.Fatalf("no watch event within %v", deadline)
	}
	panic("unreachable")
}

// nextN reads n events, skipping BOOKMARKs when skipBookmarks.
func (s *formatStream) nextN(n int, skipBookmarks bool) []streamEvent {
	s.t.Helper()
	var evs []streamEvent
	for len(evs) < n {
		ev := s.next()
		if skipBookmarks && ev.Type == "BOOKMARK" {
			continue
		}
		evs = append(evs, ev)
	}
	return evs
}

// summary is "TYPE name" of each event.
func summary(evs []streamEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type+" "+ev.name())
	}
	return out
}

// statusOfResponse decodes the Status a response carries, in its
// Content-Type, and checks the envelope fields every Status has.
func statusOfResponse(t testing.TB, r *response, code int, reason kapi.StatusReason) kapi.Status {
	t.Helper()
	if r.Code != code {
		t.Errorf("HTTP %d, want %d; body: %.500q", r.Code, code, r.Body)
	}
	var st kapi.Status
	decodeInto(t, respJSON(t, r), &st)
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != kapi.StatusFailure || int(st.Code) != r.Code {
		t.Errorf("Status kind %q apiVersion %q status %q code %d, want Status v1 Failure %d", st.Kind, st.APIVersion, st.Status, st.Code, r.Code)
	}
	if st.Reason != reason {
		t.Errorf("reason %q, want %q; message %q", st.Reason, reason, st.Message)
	}
	return st
}

// widgetOf decodes a JSON document as a Widget.
func widgetOf(t testing.TB, doc []byte) *widgetapi.Widget {
	t.Helper()
	var w widgetapi.Widget
	decodeInto(t, doc, &w)
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
