package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"
)

// Media types as clients send them.
const (
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	mediaCBOR     = "application/cbor"
	mediaCBORSeq  = "application/cbor-seq"
)

// wireLog records, for every round trip a client made, what it asked for
// and what the server said it sent: the proof of which format travelled.
type wireLog struct {
	mu      sync.Mutex
	entries []wireEntry
}

type wireEntry struct {
	Method, URL        string // URL is path and query
	Accept             string // request Accept
	RequestContentType string // request Content-Type
	Status             int
	ContentType        string // response Content-Type
	ContentEncoding    string // response Content-Encoding (empty if the transport decompressed it)
	Uncompressed       bool   // the transport received gzip and decompressed it transparently
}

func (e wireEntry) String() string {
	return fmt.Sprintf("%s %s [Accept %q, Content-Type %q] -> %d %q (gzip transparently: %v)",
		e.Method, e.URL, e.Accept, e.RequestContentType, e.Status, e.ContentType, e.Uncompressed)
}

func (l *wireLog) all() []wireEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wireEntry(nil), l.entries...)
}

func (l *wireLog) String() string {
	var b strings.Builder
	for _, e := range l.all() {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// reset forgets what was recorded so far.
func (l *wireLog) reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// config returns a copy of cfg whose transport records into l.
func (l *wireLog) config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		if prev != nil {
			next = prev(next)
		}
		return wireTransport{log: l, next: next}
	}
	return cfg
}

type wireTransport struct {
	log  *wireLog
	next http.RoundTripper
}

func (rt wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	e := wireEntry{
		Method:             req.Method,
		URL:                req.URL.RequestURI(),
		Accept:             req.Header.Get("Accept"),
		RequestContentType: req.Header.Get("Content-Type"),
	}
	if resp != nil {
		e.Status = resp.StatusCode
		e.ContentType = resp.Header.Get("Content-Type")
		e.ContentEncoding = resp.Header.Get("Content-Encoding")
		e.Uncompressed = resp.Uncompressed
	}
	rt.log.mu.Lock()
	rt.log.entries = append(rt.log.entries, e)
	rt.log.mu.Unlock()
	return resp, err
}

// mediaTypeOf parses a Content-Type; a malformed one is returned whole.
func mediaTypeOf(contentType string) (string, map[string]string) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType, nil
	}
	return mt, params
}

// rawResponse is one plain HTTP exchange.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

func (r rawResponse) contentType() string { return r.header.Get("Content-Type") }

func (r rawResponse) String() string {
	body := r.body
	if len(body) > 2000 {
		body = body[:2000]
	}
	return fmt.Sprintf("%d [Content-Type %q Content-Encoding %q] %q", r.code, r.contentType(), r.header.Get("Content-Encoding"), body)
}

// rawHTTP is a client that leaves compression to the test: it never adds
// Accept-Encoding itself, so a gzip body arrives as the server sent it.
var rawHTTP = &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}}

// rawDo sends one request with the given headers (name, value pairs).
func rawDo(t *testing.T, method, url string, body []byte, headers ...string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := rawHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: b}
}

// metaScheme knows what apimachinery's protobuf serializer can decode from
// a kapi server without the server's own types: Status (v1) and the
// meta.k8s.io/v1 views.
var metaScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	if err := metav1.AddMetaToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// protobufSerializer is apimachinery's own Kubernetes protobuf serializer,
// the one client-go's typed clients and the metadata client use.
var protobufSerializer = protobuf.NewSerializer(metaScheme, metaScheme)

// decodeProtobuf decodes a protobuf body into a registered meta type.
func decodeProtobuf(t *testing.T, body []byte) (runtime.Object, *schema.GroupVersionKind) {
	t.Helper()
	obj, gvk, err := protobufSerializer.Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("apimachinery's protobuf serializer cannot decode the body: %v\nbody: %q", err, body)
	}
	return obj, gvk
}

// decodeEnvelope decodes only the envelope, as the serializer does for a
// type its scheme does not know.
func decodeEnvelope(t *testing.T, body []byte) *runtime.Unknown {
	t.Helper()
	var unk runtime.Unknown
	if _, _, err := protobufSerializer.Decode(body, nil, &unk); err != nil {
		t.Fatalf("apimachinery's protobuf serializer cannot decode the envelope: %v\nbody: %q", err, body)
	}
	return &unk
}

// envelope wraps raw protobuf in Kubernetes' envelope, written by
// apimachinery's own runtime.Unknown.
func envelope(t *testing.T, apiVersion, kind string, raw []byte) []byte {
	t.Helper()
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	data, err := unk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), data...)
}

// The example's Widget as a client that knows only its documented field
// numbers sees it. JSON decodes into the same structs, so a decoded
// protobuf Widget can be compared with a decoded JSON one.
type pbWidget struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            pbWidgetSpec      `json:"spec"`
	Status          pbWidgetStatus    `json:"status"`
}

type pbWidgetSpec struct {
	Color    string            `json:"color"`              // 1
	Replicas *int32            `json:"replicas,omitempty"` // 2
	Size     int32             `json:"size,omitempty"`     // 3
	Ports    []pbWidgetPort    `json:"ports,omitempty"`    // 4
	Selector map[string]string `json:"selector,omitempty"` // 5
}

type pbWidgetPort struct {
	Name     string `json:"name"`               // 1
	Port     int32  `json:"port"`               // 2
	Protocol string `json:"protocol,omitempty"` // 3
}

type pbWidgetStatus struct {
	Replicas           int32              `json:"replicas,omitempty"`           // 1
	Selector           string             `json:"selector,omitempty"`           // 2
	ObservedGeneration int64              `json:"observedGeneration,omitempty"` // 3
	Conditions         []metav1.Condition `json:"conditions,omitempty"`         // 4
}

// protoFields walks a message and calls fn for every field; value is the
// payload of length-delimited fields, v the value of varints.
func protoFields(data []byte, fn func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("tag: %w", protowire.ParseError(n))
		}
		data = data[n:]
		var value []byte
		var v uint64
		switch typ {
		case protowire.BytesType:
			value, n = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		data = data[n:]
		if err := fn(num, typ, value, v); err != nil {
			return err
		}
	}
	return nil
}

// wantType fails a field whose wire type is not the documented one.
func wantType(what string, num protowire.Number, got, want protowire.Type) error {
	if got != want {
		return fmt.Errorf("%s field %d has wire type %d, want %d", what, num, got, want)
	}
	return nil
}

// decodeWidgetProto decodes the raw protobuf of a Widget: metadata = 1
// (metav1.ObjectMeta), spec = 2, status = 3. Unknown fields are errors: the
// test knows every field the type has.
func decodeWidgetProto(raw []byte) (pbWidget, error) {
	var w pbWidget
	err := protoFields(raw, func(num protowire.Number, typ protowire.Type, value []byte, _ uint64) error {
		if err := wantType("Widget", num, typ, protowire.BytesType); err != nil {
			return err
		}
		switch num {
		case 1:
			if err := w.Metadata.Unmarshal(value); err != nil {
				return fmt.Errorf("metadata: metav1.ObjectMeta.Unmarshal: %w", err)
			}
			return nil
		case 2:
			return decodeWidgetSpec(value, &w.Spec)
		case 3:
			return decodeWidgetStatus(value, &w.Status)
		}
		return fmt.Errorf("Widget has an unknown field %d", num)
	})
	return w, err
}

func decodeWidgetSpec(data []byte, s *pbWidgetSpec) error {
	return protoFields(data, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
		switch num {
		case 1:
			if err := wantType("spec", num, typ, protowire.BytesType); err != nil {
				return err
			}
			s.Color = string(value)
		case 2:
			if err := wantType("spec", num, typ, protowire.VarintType); err != nil {
				return err
			}
			r := int32(v)
			s.Replicas = &r
		case 3:
			if err := wantType("spec", num, typ, protowire.VarintType); err != nil {
				return err
			}
			s.Size = int32(v)
		case 4:
			if err := wantType("spec", num, typ, protowire.BytesType); err != nil {
				return err
			}
			var p pbWidgetPort
			err := protoFields(value, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
				switch num {
				case 1:
					p.Name = string(value)
				case 2:
					p.Port = int32(v)
				case 3:
					p.Protocol = string(value)
				default:
					return fmt.Errorf("spec.ports[] has an unknown field %d", num)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.Ports = append(s.Ports, p)
		case 5:
			if err := wantType("spec", num, typ, protowire.BytesType); err != nil {
				return err
			}
			// A map entry is a message {key = 1, value = 2}.
			var k, val string
			err := protoFields(value, func(num protowire.Number, _ protowire.Type, value []byte, _ uint64) error {
				switch num {
				case 1:
					k = string(value)
				case 2:
					val = string(value)
				default:
					return fmt.Errorf("spec.selector entry has an unknown field %d", num)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if s.Selector == nil {
				s.Selector = map[string]string{}
			}
			s.Selector[k] = val
		default:
			return fmt.Errorf("spec has an unknown field %d", num)
		}
		return nil
	})
}

func decodeWidgetStatus(data []byte, s *pbWidgetStatus) error {
	return protoFields(data, func(num protowire.Number, typ protowire.Type, value []byte, v uint64) error {
		switch num {
		case 1:
			s.Replicas = int32(v)
		case 2:
			s.Selector = string(value)
		case 3:
			s.ObservedGeneration = int64(v)
		case 4:
			var c metav1.Condition
			if err := c.Unmarshal(value); err != nil {
				return fmt.Errorf("status.conditions[]: metav1.Condition.Unmarshal: %w", err)
			}
			s.Conditions = append(s.Conditions, c)
		default:
			return fmt.Errorf("status has an unknown field %d", num)
		}
		return nil
	})
}

// encodeWidgetProto writes a Widget's raw protobuf by hand: the metadata
// with apimachinery's own ObjectMeta.Marshal, the spec field by field.
func encodeWidgetProto(t *testing.T, meta metav1.ObjectMeta, spec pbWidgetSpec) []byte {
	t.Helper()
	metaBytes, err := meta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var sb []byte
	sb = protowire.AppendTag(sb, 1, protowire.BytesType)
	sb = protowire.AppendString(sb, spec.Color)
	if spec.Replicas != nil {
		sb = protowire.AppendTag(sb, 2, protowire.VarintType)
		sb = protowire.AppendVarint(sb, uint64(int64(*spec.Replicas)))
	}
	if spec.Size != 0 {
		sb = protowire.AppendTag(sb, 3, protowire.VarintType)
		sb = protowire.AppendVarint(sb, uint64(int64(spec.Size)))
	}
	for _, p := range spec.Ports {
		var pb []byte
		pb = protowire.AppendTag(pb, 1, protowire.BytesType)
		pb = protowire.AppendString(pb, p.Name)
		pb = protowire.AppendTag(pb, 2, protowire.VarintType)
		pb = protowire.AppendVarint(pb, uint64(int64(p.Port)))
		if p.Protocol != "" {
			pb = protowire.AppendTag(pb, 3, protowire.BytesType)
			pb = protowire.AppendString(pb, p.Protocol)
		}
		sb = protowire.AppendTag(sb, 4, protowire.BytesType)
		sb = protowire.AppendBytes(sb, pb)
	}
	keys := make([]string, 0, len(spec.Selector))
	for k := range spec.Selector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var eb []byte
		eb = protowire.AppendTag(eb, 1, protowire.BytesType)
		eb = protowire.AppendString(eb, k)
		eb = protowire.AppendTag(eb, 2, protowire.BytesType)
		eb = protowire.AppendString(eb, spec.Selector[k])
		sb = protowire.AppendTag(sb, 5, protowire.BytesType)
		sb = protowire.AppendBytes(sb, eb)
	}
	var raw []byte
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, metaBytes)
	raw = protowire.AppendTag(raw, 2, protowire.BytesType)
	raw = protowire.AppendBytes(raw, sb)
	return raw
}

// decodeListProto decodes the raw protobuf of a list, {metadata = 1:
// ListMeta, items = 2: repeated item}, leaving the items raw.
func decodeListProto(raw []byte) (metav1.ListMeta, [][]byte, error) {
	var meta metav1.ListMeta
	var items [][]byte
	err := protoFields(raw, func(num protowire.Number, typ protowire.Type, value []byte, _ uint64) error {
		if err := wantType("list", num, typ, protowire.BytesType); err != nil {
			return err
		}
		switch num {
		case 1:
			return meta.Unmarshal(value)
		case 2:
			items = append(items, value)
			return nil
		}
		return fmt.Errorf("list has an unknown field %d", num)
	})
	return meta, items, err
}

// readWatchFrame reads one frame of a protobuf watch stream: a 4-byte
// big-endian length, then a metav1.WatchEvent.
func readWatchFrame(r io.Reader) (metav1.WatchEvent, error) {
	var ev metav1.WatchEvent
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return ev, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 16<<20 {
		return ev, fmt.Errorf("frame of %d bytes", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return ev, err
	}
	if err := ev.Unmarshal(frame); err != nil {
		return ev, fmt.Errorf("metav1.WatchEvent.Unmarshal: %w", err)
	}
	return ev, nil
}
