package apiservertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

// Media types as clients write them.
const (
	MediaJSON     = "application/json"
	MediaYAML     = "application/yaml"
	MediaProtobuf = "application/vnd.kubernetes.protobuf"
	MediaCBOR     = "application/cbor"
	// MediaCBORSeq is the media type of a watch in CBOR.
	MediaCBORSeq = "application/cbor-seq"
)

// Format is one media type kapi serves objects in, as a client speaks it.
type Format struct {
	// Name is short, for t.Run: json, yaml, protobuf, cbor.
	Name      string
	MediaType string
	// StreamType is the Content-Type of a watch in the format; "" when it
	// has none (YAML).
	StreamType string
}

// Formats are the media types kapi serves objects in, JSON first: a test
// that loops over them checks a feature in every format a client may ask
// for.
func Formats() []Format {
	return []Format{
		{"json", MediaJSON, MediaJSON},
		{"yaml", MediaYAML, ""},
		{"protobuf", MediaProtobuf, MediaProtobuf + ";stream=watch"},
		{"cbor", MediaCBOR, MediaCBORSeq},
	}
}

// Decoder reads response bodies and watch streams in every format into the
// JSON documents they hold, so that a test compares documents rather than
// encodings. JSON is checked, YAML and CBOR are converted by package
// codec; protobuf is read with protowire around the objects (envelopes,
// lists, watch frames, Status), using Kubernetes' field numbers, so that a
// mistake in kapi's numbering shows up as a mismatch, and with codec's
// Format.Unmarshal for the objects themselves, into the Go types of Types.
// The zero Decoder reads every format but protobuf objects other than
// PartialObjectMetadata.
type Decoder struct {
	// Types make the Go values protobuf objects are read into, by
	// "apiVersion/kind" (for a kind served in several versions) or by
	// kind. The values are given to encoding/json for their JSON.
	Types map[string]func() any
}

// BareType is the media type of a Content-Type, without its parameters.
func BareType(t testing.TB, contentType string) string {
	t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	return mt
}

// WantContentType checks the Content-Type of a response exactly.
func WantContentType(t testing.TB, h http.Header, want string) {
	t.Helper()
	if got := h.Get("Content-Type"); got != want {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
}

// JSON turns a whole response body in media type mt (without parameters)
// into the JSON document it holds. A CBOR body must begin with the
// self-described tag 55799, as kube-apiserver writes it.
func (d *Decoder) JSON(t testing.TB, mt string, body []byte) []byte {
	t.Helper()
	switch mt {
	case MediaJSON:
		if !json.Valid(body) {
			t.Fatalf("the body is not JSON: %.300q", body)
		}
		return body
	case MediaYAML, MediaCBOR:
		if mt == MediaCBOR && !bytes.HasPrefix(body, cborSelfDescribed) {
			t.Errorf("the CBOR body does not start with the self-described tag 55799: % x", body[:min(len(body), 8)])
		}
		out, ok, err := codec.ByMediaType(mt).ToJSON(body)
		if err != nil || !ok {
			t.Fatalf("%s body to JSON: ok %v, %v; body: %.300q", mt, ok, err, body)
		}
		return out
	case MediaProtobuf:
		return d.protoDocJSON(t, body)
	}
	t.Fatalf("no reader for media type %q", mt)
	return nil
}

// ResponseJSON is JSON of a response body, by its Content-Type.
func (d *Decoder) ResponseJSON(t testing.TB, h http.Header, body []byte) []byte {
	t.Helper()
	return d.JSON(t, BareType(t, h.Get("Content-Type")), body)
}

// Failure decodes the Status a failed response carries, in its
// Content-Type, and checks the fields every failure's Status has: kind
// Status, apiVersion v1, status Failure, its code the response's, and the
// reason.
func (d *Decoder) Failure(t testing.TB, code int, h http.Header, body []byte, reason kapi.StatusReason) kapi.Status {
	t.Helper()
	var st kapi.Status
	DecodeJSON(t, d.ResponseJSON(t, h, body), &st)
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != kapi.StatusFailure || int(st.Code) != code {
		t.Errorf("Status kind %q apiVersion %q status %q code %d, want Status v1 Failure %d", st.Kind, st.APIVersion, st.Status, st.Code, code)
	}
	if st.Reason != reason {
		t.Errorf("reason %q, want %q; message %q", st.Reason, reason, st.Message)
	}
	return st
}

// SameJSON fails unless two JSON documents hold the same values, whatever
// the order of their members.
func SameJSON(t testing.TB, what string, got, want []byte) {
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

// DecodeJSON unmarshals a JSON document into v.
func DecodeJSON(t testing.TB, doc []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(doc, v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, doc, err)
	}
}

// MustJSON marshals v.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return data
}

// Body writes the JSON document doc as a request body in media type mt:
// as it is in JSON; in YAML and CBOR from its values (CBOR as o says
// strings are written). Protobuf bodies are written with the Proto*
// functions, field by field.
func Body(t testing.TB, mt string, doc []byte, o CBOROptions) []byte {
	t.Helper()
	switch mt {
	case MediaJSON:
		return doc
	case MediaYAML, MediaCBOR:
	default:
		t.Fatalf("Body: no writer for media type %q", mt)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("Body: %v in %s", err, doc)
	}
	if mt == MediaCBOR {
		return CBORBody(v, o)
	}
	out, err := YAML(v)
	if err != nil {
		t.Fatalf("Body: %v", err)
	}
	return out
}

// Event is one watch event, its object as JSON whatever the format.
type Event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Name is the name of the event's object.
func (e Event) Name() string {
	var o struct {
		Metadata kapi.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(e.Object, &o)
	return o.Metadata.Name
}

// Summary is "TYPE name" of each event, for comparing a stream with what
// a test expects.
func Summary(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type+" "+ev.Name())
	}
	return out
}

func (d *Decoder) newObject(tm kapi.TypeMeta) (any, error) {
	newObject, ok := d.Types[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		newObject, ok = d.Types[tm.Kind]
	}
	if !ok {
		if tm.Kind == "PartialObjectMetadata" {
			return new(kapi.PartialObjectMetadata), nil
		}
		return nil, fmt.Errorf("no Go type for protobuf kind %q (Decoder.Types)", tm.Kind)
	}
	return newObject(), nil
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
