package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"reflect"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonread"
)

// Sentinel errors of negotiation.
var (
	ErrNotAcceptable        = errors.New("codec: no acceptable media type")
	ErrUnsupportedMediaType = errors.New("codec: unsupported media type")
)

// Media types of the table.
const (
	MediaTypeJSON     = "application/json"
	MediaTypeYAML     = "application/yaml"
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
	MediaTypeCBOR     = "application/cbor"
)

// Format is one row of the media-type table: how objects, lists and watch
// events are written in one media type, and how request bodies in it are
// read.
//
// An object is encoded once per format as an element ([Format.Marshal]),
// which the caller may cache; a single-object response, a list and a watch
// event are then assembled around elements without encoding them again.
type Format struct {
	mediaType, streamMediaType string
	kind                       formatKind
}

// MediaType is what Content-Type says of a body in this format.
func (f *Format) MediaType() string { return f.mediaType }

// StreamMediaType is the Content-Type of a watch stream in this format;
// empty if the format cannot carry one.
func (f *Format) StreamMediaType() string { return f.streamMediaType }

type formatKind int

const (
	kindJSON formatKind = iota
	kindYAML
	kindProtobuf
	kindCBOR
)

// table is every format kapi serves, in order of preference when a client
// accepts several equally.
var table = []*Format{
	{mediaType: MediaTypeJSON, streamMediaType: MediaTypeJSON, kind: kindJSON},
	{mediaType: MediaTypeYAML, kind: kindYAML},
	{mediaType: MediaTypeProtobuf, streamMediaType: MediaTypeProtobuf + ";stream=watch", kind: kindProtobuf},
	{mediaType: MediaTypeCBOR, streamMediaType: "application/cbor-seq", kind: kindCBOR},
}

// JSON is the JSON format: the default, and what kapi stores.
func JSON() *Format { return table[0] }

// ByMediaType returns the row of a bare media type, or nil.
func ByMediaType(mediaType string) *Format {
	for _, f := range table {
		if f.mediaType == mediaType {
			return f
		}
	}
	return nil
}

// FromJSON says that the format's elements are made from the object's JSON
// encoding (with [Format.Transcode]) rather than from the object itself.
// Every format but protobuf is; their elements can come from a cached JSON
// element.
func (f *Format) FromJSON() bool { return f.kind != kindProtobuf }

// ElementType names the encoding of the format's elements, the key under
// which a caller caches them: YAML's elements are JSON (a YAML document is
// made from the whole JSON response), the others' their own.
func (f *Format) ElementType() string {
	if f.kind == kindYAML {
		return MediaTypeJSON
	}
	return f.mediaType
}

// Marshal encodes obj, a pointer to a struct, as an element.
func (f *Format) Marshal(obj any) ([]byte, error) {
	if f.kind == kindProtobuf {
		return marshalProto(nil, obj)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return f.Transcode(data)
}

// Transcode turns the JSON element of an object into this format's element.
// It is an error for a format that is not [Format.FromJSON].
func (f *Format) Transcode(jsonElement []byte) ([]byte, error) {
	switch f.kind {
	case kindJSON, kindYAML:
		return jsonElement, nil
	case kindCBOR:
		return appendCBOR(nil, jsonElement)
	}
	return nil, fmt.Errorf("codec: %s is not made from JSON", f.mediaType)
}

// AppendBody appends a whole response body holding one element; tm is the
// type of the element's object, which protobuf carries in its envelope. A
// JSON body is the element itself: with an empty dst it is returned as is,
// not copied, and the caller must not modify it.
func (f *Format) AppendBody(dst []byte, tm kapi.TypeMeta, element []byte) ([]byte, error) {
	switch f.kind {
	case kindYAML:
		return appendYAML(dst, element)
	case kindProtobuf:
		return appendEnvelope(dst, tm, element), nil
	case kindCBOR:
		return append(append(dst, cborSelfDescribed...), element...), nil
	}
	if len(dst) == 0 {
		return element, nil // a GET writes the cached bytes: no copy
	}
	return append(dst, element...), nil
}

// AppendList appends a whole list body: tm is the list's type (WidgetList
// in example.com/v1), meta its metadata, elements its items in order.
func (f *Format) AppendList(dst []byte, tm kapi.TypeMeta, meta kapi.ListMeta, elements [][]byte) ([]byte, error) {
	if f.kind != kindYAML {
		b, err := f.ListBody(tm, meta, elements)
		if err != nil {
			return nil, err
		}
		return b.AppendTo(dst), nil
	}
	b, err := JSON().ListBody(tm, meta, elements)
	if err != nil {
		return nil, err
	}
	return appendYAML(dst, b.AppendTo(nil))
}

// AppendEvent appends one framed watch event: its type (ADDED, MODIFIED,
// DELETED, BOOKMARK, ERROR) and its object's element, of type tm, given as
// one or more pieces written one after another (see ListBodyOfPieces).
func (f *Format) AppendEvent(dst []byte, eventType string, tm kapi.TypeMeta, element ...[]byte) ([]byte, error) {
	if f.kind == kindJSON {
		dst = AppendJSONEventOpen(dst, eventType)
		for _, p := range element {
			dst = append(dst, p...)
		}
		return append(dst, JSONEventClose...), nil
	}
	if len(element) == 1 {
		return f.appendEvent(dst, eventType, tm, element[0])
	}
	return f.appendEvent(dst, eventType, tm, bytes.Join(element, nil)) // never so for a stream kapi writes
}

// AppendJSONEventOpen appends what a JSON watch event has before its
// object; JSONEventClose is what it has after. A writer that frames many
// events at once (see AppendEvent) puts them around each object.
func AppendJSONEventOpen(dst []byte, eventType string) []byte {
	dst = append(dst, `{"type":`...)
	if plainWord(eventType) { // the event types are: quoting needs no escapes
		dst = append(append(append(dst, '"'), eventType...), '"')
	} else {
		dst = strconv.AppendQuote(dst, eventType)
	}
	return append(dst, `,"object":`...)
}

// JSONEventClose ends a JSON watch event (see AppendJSONEventOpen).
const JSONEventClose = "}\n"

// plainWord says s is upper-case ASCII letters, as a watch event's type is.
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func (f *Format) appendEvent(dst []byte, eventType string, tm kapi.TypeMeta, element []byte) ([]byte, error) {
	switch f.kind {
	case kindProtobuf:
		return appendProtoEvent(dst, eventType, tm, element), nil
	case kindCBOR:
		return appendCBOREvent(dst, eventType, element), nil
	}
	return nil, fmt.Errorf("codec: %s cannot carry a watch stream", f.mediaType)
}

// ToJSON turns a request body in a textual format (JSON, YAML, CBOR) into
// JSON, for the one path that decodes and validates objects. ok is false
// for protobuf, whose bodies [Format.Unmarshal] decodes.
func (f *Format) ToJSON(data []byte) (out []byte, ok bool, err error) {
	switch f.kind {
	case kindJSON:
		return data, true, nil
	case kindYAML:
		out, err = YAMLToJSON(data)
		return out, true, err
	case kindCBOR:
		out, err = cborToJSON(data)
		return out, true, err
	}
	return nil, false, nil
}

// Unmarshal decodes a protobuf body (an object or a list) into v, a pointer
// to a struct, setting its TypeMeta, if it embeds one, from the envelope.
func (f *Format) Unmarshal(data []byte, v any) error {
	if f.kind != kindProtobuf {
		return fmt.Errorf("codec: %s bodies are read with ToJSON", f.mediaType)
	}
	tm, raw, err := readEnvelope(data)
	if err != nil {
		return err
	}
	if err := unmarshalProto(raw, v); err != nil {
		return err
	}
	if typed, ok := v.(interface{ GetTypeMeta() *kapi.TypeMeta }); ok {
		*typed.GetTypeMeta() = tm
	}
	return nil
}

// View is what a response shows of each object.
type View int

// The views a client can ask for with the as, g and v parameters of Accept.
const (
	ViewObject       View = iota // the object itself
	ViewTable                    // as=Table;g=meta.k8s.io;v=v1 (or v1beta1)
	ViewMetadata                 // as=PartialObjectMetadata;g=meta.k8s.io;v=v1 (or v1beta1)
	ViewMetadataList             // as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 (or v1beta1)
)

var viewNames = [...]string{ViewTable: "Table", ViewMetadata: "PartialObjectMetadata", ViewMetadataList: "PartialObjectMetadataList"}

func (v View) String() string {
	if v == ViewObject {
		return "Object"
	}
	return viewNames[v]
}

// Target is what negotiation chose: a format, and a view in it.
type Target struct {
	*Format
	View View
	// Version of the view's meta.k8s.io kind, v1 or v1beta1; empty for
	// ViewObject.
	Version string
}

// ContentType is the Content-Type of a response to the target: the bare
// media type, whatever the view, as kube-apiserver sends it. (Its
// WriteObjectNegotiated names the kind in the Content-Type only for
// aggregated discovery; a Table or PartialObjectMetadata(List) body names
// its kind in its apiVersion and kind, which is what clients decode by.)
func (t Target) ContentType() string { return t.mediaType }

// StreamContentType is the Content-Type of a watch stream to the target:
// the format's stream media type, whatever the view, as kube-apiserver
// sends it (the events' objects name their kind).
func (t Target) StreamContentType() string { return t.streamMediaType }

// APIVersion is the apiVersion of the view's kind (meta.k8s.io/v1).
func (t Target) APIVersion() string { return "meta.k8s.io/" + t.Version }

// Offer says which targets a response can take: views is what the request
// can be shown as (a get: the object, a Table or its metadata; a list: the
// list, a Table or a metadata list), protobuf whether the resource's type
// travels in protobuf.
type Offer struct {
	Views    []View
	Protobuf bool
	// Watch offers only the formats that can carry a watch stream.
	Watch bool
	// JSONOnly offers JSON alone, for documents that exist in no other
	// format (discovery, OpenAPI).
	JSONOnly bool
}

func (o Offer) has(f *Format, v View) bool {
	switch {
	case o.JSONOnly && f.kind != kindJSON, o.Watch && f.streamMediaType == "":
		return false
	case v == ViewTable && f.kind == kindProtobuf:
		return false // a Table's cells are arbitrary JSON: Kubernetes gives it no protobuf
	case v == ViewObject && f.kind == kindProtobuf && !o.Protobuf:
		return false
	}
	for _, w := range o.Views {
		if w == v {
			return true
		}
	}
	return false
}

// Negotiate picks the target of a response from an Accept header: the
// highest q first, then the most specific media range, then the first
// listed. An empty header accepts anything. Wildcards match the table's rows
// in order (JSON first); the as, g and v parameters must name a view the
// offer has; other parameters are ignored, as kube-apiserver ignores them.
func Negotiate(accept string, offer Offer) (Target, error) {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	var best Target
	bestQ, bestSpecific := 0.0, -1
	for _, r := range strings.Split(accept, ",") {
		r = strings.TrimSpace(r)
		if r == "*" || strings.HasPrefix(r, "*;") {
			r = "*/*" + strings.TrimPrefix(r, "*") // what some clients send for */*
		}
		mediaType, params, err := mime.ParseMediaType(r)
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || !(q >= 0 && q <= 1) { // NaN too
				continue
			}
		}
		specific := strings.Count(mediaType, "*")
		specific = 2 - specific // */* 0, type/* 1, type/subtype 2
		if q == 0 || q < bestQ || q == bestQ && specific <= bestSpecific {
			continue
		}
		view, version, ok := parseView(params)
		if !ok {
			continue
		}
		for _, f := range table {
			if matches(mediaType, f.mediaType) && offer.has(f, view) {
				best, bestQ, bestSpecific = Target{Format: f, View: view, Version: version}, q, specific
				break
			}
		}
	}
	if best.Format == nil {
		return best, fmt.Errorf("%w: only the following media types are accepted: %s", ErrNotAcceptable, supported(offer))
	}
	return best, nil
}

// parseView reads the view a media range asks for; ok is false when it asks
// for a view kapi does not serve.
func parseView(params map[string]string) (View, string, bool) {
	as, g, v := params["as"], params["g"], params["v"]
	if as == "" {
		return ViewObject, "", g == "" && v == ""
	}
	if g != "meta.k8s.io" || v != "v1" && v != "v1beta1" {
		return 0, "", false
	}
	for view, name := range viewNames {
		if name != "" && name == as {
			return View(view), v, true
		}
	}
	return 0, "", false
}

// ForContentType picks the decoder for a request body; protobuf says
// whether the resource's type travels in protobuf.
func ForContentType(contentType string, protobuf bool) (*Format, error) {
	offer := Offer{Views: []View{ViewObject}, Protobuf: protobuf}
	// A table's media type as it is, the usual Content-Type, is what
	// parsing it gives; parsing allocates its parameters' map.
	mediaType, err := contentType, error(nil)
	if ByMediaType(contentType) == nil {
		mediaType, _, err = mime.ParseMediaType(contentType)
	}
	if err == nil {
		if f := ByMediaType(mediaType); f != nil && offer.has(f, ViewObject) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: the body of the request was in an unknown format - accepted media types include: %s", ErrUnsupportedMediaType, supported(offer))
}

func matches(mediaRange, mediaType string) bool {
	if mediaRange == "*/*" || mediaRange == mediaType {
		return true
	}
	prefix, ok := strings.CutSuffix(mediaRange, "/*")
	return ok && strings.HasPrefix(mediaType, prefix+"/")
}

func supported(offer Offer) string {
	var names []string
	for _, f := range table {
		if offer.has(f, ViewObject) {
			names = append(names, f.mediaType)
		}
	}
	return strings.Join(names, ", ")
}

// SupportsProtobuf says whether values of struct type t travel in protobuf:
// nil if every field encoding/json sees has a protobuf tag (the inline
// TypeMeta excepted: the envelope carries it) or t is a proto.Message; an
// error naming the first field that has none otherwise. Types without a
// protobuf mapping are served in every other format.
func SupportsProtobuf(t reflect.Type) error { return protoSupported(t) }

// UnmarshalJSON decodes one JSON document into v; data after it is an
// error. It follows encoding/json's rules for Unmarshal (case-
// insensitive field names, the last of duplicate fields, invalid UTF-8
// replaced, the same types for interface values), on the faster decoder
// of github.com/go-json-experiment/json: its v1 package is what
// encoding/json becomes under GOEXPERIMENT=jsonv2, and it decodes a stored
// widget in half the time with less than half the allocations. The text
// of a type error differs (it names the outermost Go type and the path,
// list indexes included), and a struct tag's `format:` option, which
// encoding/json ignores, fails the decoding of its type.
func UnmarshalJSON(data []byte, v any) error { return jsonv1.Unmarshal(data, v) }

// UnmarshalKnownJSON is UnmarshalJSON of a document that CheckJSONFields
// has nothing to say of: it fails on a member v's type does not know by
// that exact name, and on a name an object holds twice. A request body
// decoded so needs no check of its fields, which would read it again; one
// it fails on is checked and decoded into a new value (v may hold part of
// it).
//
// A type holding one that decodes itself with json/v2's UnmarshalJSONFrom,
// which CheckJSONFields looks into as a struct, is refused without reading
// data: decoding it here would hand that method members the check reports.
//
// A value of a type it can is decoded by a jsonread.Decoder, compiled once
// per type: json/v2's result at a fraction of its cost. What that leaves to
// json/v2 is decoded again by it, v set to zero first: v is to hold the zero
// value of its type.
func UnmarshalKnownJSON(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || holdsV2Decoder(t) {
		return errCheckFirst
	}
	if dec := knownDecoder(t); dec != nil {
		if dec.Decode(data, v) {
			return nil
		}
		if rv := reflect.ValueOf(v); !rv.IsNil() {
			rv.Elem().SetZero()
		}
	}
	return jsonv2.Unmarshal(data, v, knownJSON)
}

// knownDecoders caches knownDecoder by type.
var knownDecoders sync.Map // reflect.Type → *jsonread.Decoder

// knownDecoder returns the jsonread.Decoder of pointer type t's target, or
// nil if t is no pointer or the Decoder would leave all to json/v2.
func knownDecoder(t reflect.Type) *jsonread.Decoder {
	if dec, ok := knownDecoders.Load(t); ok {
		return dec.(*jsonread.Decoder)
	}
	var dec *jsonread.Decoder
	if t.Kind() == reflect.Pointer {
		dec = jsonread.New(t.Elem(), unmarshalKnownValue)
	}
	knownDecoders.Store(t, dec)
	return dec
}

// unmarshalKnownValue is what a jsonread.Decoder leaves to json/v2: one
// value of the document, decoded by the same rules.
func unmarshalKnownValue(data []byte, v any) error { return jsonv2.Unmarshal(data, v, knownJSON) }

var errCheckFirst = errors.New("codec: the type's fields are to be checked first")

// v2Decoders caches holdsV2Decoder by type.
var v2Decoders sync.Map // reflect.Type → bool

// holdsV2Decoder says whether a value of t holds one of a type that
// decodes itself by UnmarshalJSONFrom.
func holdsV2Decoder(t reflect.Type) bool {
	if held, ok := v2Decoders.Load(t); ok {
		return held.(bool)
	}
	held := holdsV2DecoderIn(t, map[reflect.Type]bool{})
	v2Decoders.Store(t, held)
	return held
}

func holdsV2DecoderIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if jsonfields.Implements(t, reflect.TypeFor[jsonv2.UnmarshalerFrom]()) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsV2DecoderIn(t.Elem(), seen)
	case reflect.Map:
		return holdsV2DecoderIn(t.Key(), seen) || holdsV2DecoderIn(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsV2DecoderIn(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

var knownJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsonv2.RejectUnknownMembers(true), jsonv2.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false))
