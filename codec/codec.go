package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
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
	// MediaType is what Content-Type says of a body in this format.
	MediaType string
	// StreamMediaType is the Content-Type of a watch stream in this format;
	// empty if the format cannot carry one.
	StreamMediaType string

	kind formatKind
}

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
	{MediaType: MediaTypeJSON, StreamMediaType: MediaTypeJSON, kind: kindJSON},
	{MediaType: MediaTypeYAML, kind: kindYAML},
	{MediaType: MediaTypeProtobuf, StreamMediaType: MediaTypeProtobuf + ";stream=watch", kind: kindProtobuf},
	{MediaType: MediaTypeCBOR, StreamMediaType: "application/cbor-seq", kind: kindCBOR},
}

// JSON is the JSON format: the default, and what kapi stores.
func JSON() *Format { return table[0] }

// ByMediaType returns the row of a bare media type, or nil.
func ByMediaType(mediaType string) *Format {
	for _, f := range table {
		if f.MediaType == mediaType {
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
	return f.MediaType
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
	return nil, fmt.Errorf("codec: %s is not made from JSON", f.MediaType)
}

// AppendBody appends a whole response body holding one element; tm is the
// type of the element's object, which protobuf carries in its envelope.
func (f *Format) AppendBody(dst []byte, tm kapi.TypeMeta, element []byte) ([]byte, error) {
	switch f.kind {
	case kindYAML:
		return appendYAML(dst, element)
	case kindProtobuf:
		return appendEnvelope(dst, tm, element), nil
	case kindCBOR:
		return append(append(dst, cborSelfDescribed...), element...), nil
	}
	return append(dst, element...), nil
}

// AppendList appends a whole list body: tm is the list's type (WidgetList
// in example.com/v1), meta its metadata, elements its items in order.
func (f *Format) AppendList(dst []byte, tm kapi.TypeMeta, meta kapi.ListMeta, elements [][]byte) ([]byte, error) {
	switch f.kind {
	case kindProtobuf:
		return appendProtoList(dst, tm, meta, elements)
	case kindCBOR:
		return appendCBORList(dst, tm, meta, elements)
	}
	list, err := appendJSONList(nil, tm, meta, elements)
	if err != nil || f.kind == kindJSON {
		return append(dst, list...), err
	}
	return appendYAML(dst, list)
}

func appendJSONList(dst []byte, tm kapi.TypeMeta, meta kapi.ListMeta, elements [][]byte) ([]byte, error) {
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	size := len(dst) + len(metaJSON) + len(tm.Kind) + len(tm.APIVersion) + 64
	for _, e := range elements {
		size += len(e) + 1
	}
	b := bytes.NewBuffer(append(make([]byte, 0, size), dst...))
	b.WriteString(`{"kind":`)
	b.WriteString(strconv.Quote(tm.Kind))
	b.WriteString(`,"apiVersion":`)
	b.WriteString(strconv.Quote(tm.APIVersion))
	b.WriteString(`,"metadata":`)
	b.Write(metaJSON)
	b.WriteString(`,"items":[`)
	for i, e := range elements {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// AppendEvent appends one framed watch event: its type (ADDED, MODIFIED,
// DELETED, BOOKMARK, ERROR) and its object's element, of type tm.
func (f *Format) AppendEvent(dst []byte, eventType string, tm kapi.TypeMeta, element []byte) ([]byte, error) {
	switch f.kind {
	case kindJSON:
		dst = append(dst, `{"type":`...)
		dst = strconv.AppendQuote(dst, eventType)
		dst = append(dst, `,"object":`...)
		dst = append(dst, element...)
		return append(dst, "}\n"...), nil
	case kindProtobuf:
		return appendProtoEvent(dst, eventType, tm, element), nil
	case kindCBOR:
		return appendCBOREvent(dst, eventType, element), nil
	}
	return nil, fmt.Errorf("codec: %s cannot carry a watch stream", f.MediaType)
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
		return fmt.Errorf("codec: %s bodies are read with ToJSON", f.MediaType)
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

// Supports says whether objects of struct type t can travel in the format:
// every type can, but in protobuf only those [protoSupported] accepts.
type Supports func(f *Format) bool

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

// ContentType is the Content-Type of a response to the target: the media
// type, with the view's parameters when it is not the object itself.
func (t Target) ContentType() string {
	if t.View == ViewObject {
		return t.MediaType
	}
	return t.MediaType + ";as=" + t.View.String() + ";g=meta.k8s.io;v=" + t.Version
}

// StreamContentType is the Content-Type of a watch stream to the target.
func (t Target) StreamContentType() string {
	if t.View == ViewObject || t.kind == kindProtobuf {
		return t.StreamMediaType
	}
	return t.StreamMediaType + ";as=" + t.View.String() + ";g=meta.k8s.io;v=" + t.Version
}

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
	case o.JSONOnly && f.kind != kindJSON, o.Watch && f.StreamMediaType == "":
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
// highest q first, then the first listed. An empty header accepts anything.
// Wildcards match the table's rows in order (JSON first); parameters other
// than q, charset and stream=watch must name a view the offer has.
func Negotiate(accept string, offer Offer) (Target, error) {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	var best Target
	bestQ := 0.0
	for _, r := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		if q == 0 || q <= bestQ {
			continue
		}
		view, version, ok := parseView(params)
		if !ok {
			continue
		}
		for _, f := range table {
			if matches(mediaType, f.MediaType) && offer.has(f, view) {
				best, bestQ = Target{Format: f, View: view, Version: version}, q
				break
			}
		}
	}
	if best.Format == nil {
		return best, fmt.Errorf("%w: only the following media types are accepted: %s", ErrNotAcceptable, supported(offer))
	}
	return best, nil
}

// parseView reads the view a media range asks for; ok is false when it has
// parameters kapi does not know or a view it does not serve.
func parseView(params map[string]string) (View, string, bool) {
	var as, g, v string
	for k, val := range params {
		switch k {
		case "q", "charset", "pretty":
		case "stream":
			if val != "watch" {
				return 0, "", false
			}
		case "as":
			as = val
		case "g":
			g = val
		case "v":
			v = val
		default:
			return 0, "", false
		}
	}
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
	mediaType, _, err := mime.ParseMediaType(contentType)
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
			names = append(names, f.MediaType)
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

// UnmarshalJSON decodes one JSON document into v; data after it is an error.
func UnmarshalJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON document")
	}
	return nil
}
