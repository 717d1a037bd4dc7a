package apiserver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/watch"
)

// Responses are assembled from elements: each object version is encoded at
// most once per format and view, cached on its watch.Item, and shared by
// every GET, LIST and watcher that sends it.

// negotiate picks the response's format and view from the Accept header.
func (rq *request) negotiate(watch bool, views ...codec.View) error {
	t, err := codec.Negotiate(rq.r.Header.Get("Accept"), codec.Offer{Views: views, Protobuf: rq.objType.protobuf, Watch: watch})
	if err != nil {
		return err
	}
	rq.out = t
	if t.View == codec.ViewTable { // a Table option, ignored otherwise as kube-apiserver ignores it
		switch v := rq.query.Get("includeObject"); v {
		case "", "None", "Metadata", "Object":
			rq.includeObject = v
		default:
			return badRequest("Unable to convert to Table as requested: %s", NotSupported("includeObject", v, "Metadata", "None", "Object").Error())
		}
	}
	return nil
}

// element is the encoding of an item's object in format f: the object
// itself, or with metadata its PartialObjectMetadata in the negotiated
// version. Formats made from JSON are made from the cached JSON element.
func (rq *request) element(it *watch.Item, f *codec.Format, metadata bool) ([]byte, error) {
	key := f.ElementType()
	if metadata {
		key += ";as=PartialObjectMetadata;v=" + rq.out.Version
	}
	if f.ElementType() == codec.MediaTypeJSON && !metadata && it.Value != nil {
		// Made anew each time rather than cached: a copy of the stored
		// value is cheap, and keeping one would double the cache's bytes.
		if data, ok := rq.storedElement(it); ok {
			return data, nil
		}
	}
	if !f.FromJSON() || f.ElementType() == codec.MediaTypeJSON {
		return it.Encoded(key, func(obj any) ([]byte, error) {
			if metadata { // built only when not cached yet
				obj = rq.partial(obj.(kapi.Object))
			}
			return f.Marshal(obj)
		})
	}
	jsonElement, err := rq.element(it, codec.JSON(), metadata)
	if err != nil {
		return nil, err
	}
	return it.Encoded(key, func(any) ([]byte, error) { return f.Transcode(jsonElement) })
}

func (rq *request) partial(obj kapi.Object) *kapi.PartialObjectMetadata {
	return &kapi.PartialObjectMetadata{
		TypeMeta:   kapi.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: rq.out.APIVersion()},
		ObjectMeta: *obj.GetObjectMeta(),
	}
}

// typeOf is the type of the objects the response holds, which protobuf
// names in its envelope.
func (rq *request) typeOf() kapi.TypeMeta {
	switch rq.out.View {
	case codec.ViewTable:
		return kapi.TypeMeta{Kind: "Table", APIVersion: rq.out.APIVersion()}
	case codec.ViewMetadata, codec.ViewMetadataList:
		return kapi.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: rq.out.APIVersion()}
	}
	return kapi.TypeMeta{Kind: rq.objType.kind, APIVersion: rq.objType.apiVersion()}
}

// encodeOne is the body of a response holding one object.
func (rq *request) encodeOne(it *watch.Item) ([]byte, error) {
	f := rq.out.Format
	var element []byte
	var err error
	switch rq.out.View {
	case codec.ViewTable:
		obj := it.Object.(kapi.Object)
		element, err = rq.table(kapi.ListMeta{ResourceVersion: obj.GetObjectMeta().ResourceVersion}, []*watch.Item{it})
	default:
		element, err = rq.element(it, f, rq.out.View == codec.ViewMetadata)
	}
	if err != nil {
		return nil, err
	}
	return f.AppendBody(nil, rq.typeOf(), element)
}

// encodeList is the body of a list response.
func (rq *request) encodeList(meta kapi.ListMeta, items []*watch.Item) ([]byte, error) {
	f := rq.out.Format
	if rq.out.View == codec.ViewTable {
		element, err := rq.table(meta, items)
		if err != nil {
			return nil, err
		}
		return f.AppendBody(nil, rq.typeOf(), element)
	}
	metadata := rq.out.View == codec.ViewMetadataList
	elements := make([][]byte, len(items))
	for i, it := range items {
		var err error
		if elements[i], err = rq.element(it, f, metadata); err != nil {
			return nil, err
		}
	}
	tm := kapi.TypeMeta{Kind: rq.res.Kind + "List", APIVersion: rq.res.apiVersion()}
	if metadata {
		tm = kapi.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: rq.out.APIVersion()}
	}
	return f.AppendList(nil, tm, meta, elements)
}

// table is a Table of items as an element of the negotiated format. The
// column definitions are sent once per request: a watch sends them with its
// first event only, as kube-apiserver.
func (rq *request) table(meta kapi.ListMeta, items []*watch.Item) ([]byte, error) {
	t := kapi.Table{
		TypeMeta: kapi.TypeMeta{Kind: "Table", APIVersion: rq.out.APIVersion()},
		ListMeta: meta,
		Rows:     make([]kapi.TableRow, 0, len(items)),
	}
	if !rq.tableHeadersSent {
		t.ColumnDefinitions = rq.res.columns
		rq.tableHeadersSent = true
	}
	for _, it := range items {
		var object []byte
		var err error
		switch rq.includeObject {
		case "Object":
			object, err = rq.element(it, codec.JSON(), false)
		case "", "Metadata":
			object, err = rq.element(it, codec.JSON(), true)
		}
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, rq.res.tableRow(it.Object.(kapi.Object), object))
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return rq.out.Transcode(data)
}

// writeEncoded writes a response body in the negotiated format.
func (rq *request) writeEncoded(code int, data []byte) {
	if rq.out.MediaType() == codec.MediaTypeJSON {
		if pretty, _ := rq.boolParam("pretty"); pretty {
			var b bytes.Buffer
			if json.Indent(&b, data, "", "  ") == nil {
				data = append(b.Bytes(), '\n')
			}
		}
	}
	writeBody(rq.w, rq.r, code, rq.out.ContentType(), data)
}

// respond writes obj, which is not in the cache (the result of a write).
func (rq *request) respond(code int, obj kapi.Object) error {
	data, err := rq.encodeOne(&watch.Item{Object: obj})
	if err != nil {
		return err
	}
	rq.writeEncoded(code, data)
	return nil
}

// writeStatus writes a Status with its code, in f (JSON if nil).
func writeStatus(w http.ResponseWriter, r *http.Request, f *codec.Format, st kapi.Status) {
	if f == nil {
		f = codec.JSON()
	}
	element, err := f.Marshal(&st)
	var data []byte
	if err == nil {
		data, err = f.AppendBody(nil, st.TypeMeta, element)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusOK
	}
	if code == http.StatusGatewayTimeout && st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	writeBody(w, r, code, f.MediaType(), data)
}

// gzipMinBytes is the size from which a response is compressed for a client
// that accepts gzip, as kube-apiserver's: smaller ones gain too little.
const gzipMinBytes = 128 << 10

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

func writeBody(w http.ResponseWriter, r *http.Request, code int, contentType string, data []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	if len(data) >= gzipMinBytes && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(code)
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(w)
		_, _ = zw.Write(data)
		_ = zw.Close()
		zw.Reset(nil)
		gzipWriters.Put(zw)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// acceptsGzip reads Accept-Encoding: gzip listed, without q=0.
func acceptsGzip(r *http.Request) bool {
	if r == nil {
		return false
	}
	for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(enc, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
		return true
	}
	return false
}
