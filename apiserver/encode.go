package apiserver

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/httpbody"
	"github.com/kapi-dev/kapi/internal/listcache"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/internal/tables"
	"github.com/kapi-dev/kapi/watch"
)

// Responses are assembled from elements: each object version is encoded at
// most once per format and view, cached on its watch.Item, and shared by
// every GET, LIST and watcher that sends it.

// negotiate picks the response's format and view from the Accept header.
func (rq *request) negotiate(watch bool, views ...codec.View) error {
	t, err := negotiated(rq.r.Header.Get("Accept"), codec.Offer{Views: views, Protobuf: rq.objType.protobuf, Watch: watch})
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

// The Accept headers a server sees are few (kubectl's, client-go's, an
// informer's), and codec.Negotiate's choice depends on the header and the
// offer alone: it is remembered, so that a request does not parse the same
// header again. The memo is bounded, in entries and in the length of the
// headers it keeps, so that clients sending ever new headers cannot grow
// it; theirs are negotiated each time.
type negotiateKey struct {
	accept          string
	views           uint64 // bit v for each offered view v
	protobuf, watch bool
}

const (
	negotiatedMax       = 256
	negotiatedMaxAccept = 256
)

var (
	negotiatedTargets atomic.Pointer[map[negotiateKey]codec.Target] // copied on write: read without a lock
	negotiatedMu      sync.Mutex                                    // serializes the writes
)

// negotiated is codec.Negotiate, remembered.
func negotiated(accept string, offer codec.Offer) (codec.Target, error) {
	key := negotiateKey{accept: accept, protobuf: offer.Protobuf, watch: offer.Watch}
	for _, v := range offer.Views {
		if v < 0 || v >= 64 || offer.JSONOnly { // not a key this memo can tell apart
			return codec.Negotiate(accept, offer)
		}
		key.views |= 1 << uint(v)
	}
	if m := negotiatedTargets.Load(); m != nil {
		if t, ok := (*m)[key]; ok {
			return t, nil
		}
	}
	t, err := codec.Negotiate(accept, offer)
	if err != nil || len(accept) > negotiatedMaxAccept {
		return t, err
	}
	negotiatedMu.Lock()
	defer negotiatedMu.Unlock()
	m := map[negotiateKey]codec.Target{}
	if old := negotiatedTargets.Load(); old != nil {
		if len(*old) >= negotiatedMax {
			return t, nil
		}
		m = maps.Clone(*old)
	}
	m[key] = t
	negotiatedTargets.Store(&m)
	return t, nil
}

// element is the encoding of an item's object in format f: the object
// itself, or with metadata its PartialObjectMetadata in the negotiated
// version. Formats made from JSON are made from the cached JSON element.
func (rq *request) element(it *watch.Item, f *codec.Format, metadata bool) ([]byte, error) {
	key := f.ElementType()
	if metadata {
		key = rq.metadataKey(f)
	}
	if f.ElementType() == codec.MediaTypeJSON && !metadata && it.Value != nil && rq.res.objType.plainMetadata {
		// Made anew each time rather than cached: a copy of the stored
		// value is cheap, and keeping one would double the cache's bytes.
		if data, ok := rq.buf.storedElement(it); ok {
			return data, nil
		}
	}
	if !f.FromJSON() || f.ElementType() == codec.MediaTypeJSON {
		return it.Encoded(key, func() ([]byte, error) {
			obj, err := cachedObject(it)
			if err != nil {
				return nil, err
			}
			if metadata { // built only when not cached yet
				return f.Marshal(rq.partial(obj))
			}
			return f.Marshal(obj)
		})
	}
	jsonElement, err := rq.element(it, codec.JSON(), metadata)
	if err != nil {
		return nil, err
	}
	return it.Encoded(key, func() ([]byte, error) { return f.Transcode(jsonElement) })
}

func (rq *request) metadataKey(f *codec.Format) string {
	key, ok := rq.buf.metadataKeys[f]
	if !ok {
		key = f.ElementType() + ";as=PartialObjectMetadata;v=" + rq.out.Version
		if rq.buf.metadataKeys == nil {
			rq.buf.metadataKeys = make(map[*codec.Format]string, 2)
		}
		rq.buf.metadataKeys[f] = key
	}
	return key
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
	if end := rq.step("encode"); end != nil {
		defer end()
	}
	f := rq.out.Format
	var element []byte
	var err error
	switch rq.out.View {
	case codec.ViewTable:
		var obj kapi.Object
		if obj, err = cachedObject(it); err == nil {
			element, err = rq.table(kapi.ListMeta{ResourceVersion: obj.GetObjectMeta().ResourceVersion}, []*watch.Item{it})
		}
	default:
		element, err = rq.element(it, f, rq.out.View == codec.ViewMetadata)
	}
	if err != nil {
		return nil, err
	}
	return f.AppendBody(nil, rq.typeOf(), element)
}

// encodeList is the body of a list response, assembled in one buffer.
func (rq *request) encodeList(meta kapi.ListMeta, items []*watch.Item) ([]byte, error) {
	f := rq.out.Format
	if rq.out.View == codec.ViewTable {
		element, err := rq.table(meta, items)
		if err != nil {
			return nil, err
		}
		return f.AppendBody(nil, rq.typeOf(), element)
	}
	elements, tm, err := rq.listElements(items, nil)
	if err != nil {
		return nil, err
	}
	return f.AppendList(nil, tm, meta, elements)
}

// listElements appends the items' elements in the negotiated format and
// view to elements, and says the list's type. On error, the elements are
// those appended so far.
func (rq *request) listElements(items []*watch.Item, elements [][]byte) ([][]byte, kapi.TypeMeta, error) {
	metadata := rq.out.View == codec.ViewMetadataList
	for _, it := range items {
		element, err := rq.element(it, rq.out.Format, metadata)
		if err != nil {
			return elements, kapi.TypeMeta{}, err
		}
		elements = append(elements, element)
	}
	if metadata {
		return elements, kapi.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: rq.out.APIVersion()}, nil
	}
	return elements, kapi.TypeMeta{Kind: rq.res.Kind + "List", APIVersion: rq.res.apiVersion()}, nil
}

// storedListPieces appends to pieces three pieces per item: its JSON
// element made from its stored value (storedPieces), or the element and two
// nil pieces when it cannot be made so.
func (rq *request) storedListPieces(items []*watch.Item, pieces [][]byte) ([][]byte, error) {
	members := make([]byte, 0, len(items)*splice.MemberRoom) // never grows: pieces point into it
	for _, it := range items {
		if before, member, after, ok := rq.storedPieces(it, members[len(members):]); ok {
			members = members[:len(members)+len(member)]
			pieces = append(pieces, before, member, after)
			continue
		}
		element, err := rq.element(it, codec.JSON(), false)
		if err != nil {
			return pieces, err
		}
		pieces = append(pieces, element, nil, nil)
	}
	return pieces, nil
}

// writeList writes a list response. A list that is a concatenation of its
// items' cached elements (JSON, protobuf, CBOR) is streamed from them with
// its length known up front: assembling it first cost a copy of the whole
// body and, for large lists, most of the time in the GC. Tables, YAML and
// pretty JSON are documents made from the whole list, and are assembled.
func (rq *request) writeList(meta kapi.ListMeta, items []*watch.Item) error {
	if end := rq.step("encode"); end != nil {
		defer end()
	}
	f := rq.out.Format
	pretty := false
	if f.MediaType() == codec.MediaTypeJSON {
		pretty, _ = rq.boolParam("pretty")
	}
	if rq.out.View == codec.ViewTable && f.MediaType() == codec.MediaTypeJSON && !pretty {
		b, err := rq.tableBody(meta, items)
		if err == nil {
			httpbody.WriteStreamed(rq.w, rq.r, http.StatusOK, rq.out.ContentType(), b)
			b.Release()
		}
		return err
	}
	if rq.out.View == codec.ViewTable || f.MediaType() == codec.MediaTypeYAML || pretty {
		data, err := rq.encodeList(meta, items)
		if err != nil {
			return err
		}
		rq.writeEncoded(http.StatusOK, data)
		return nil
	}
	pooled := splice.Pieces(3 * len(items))
	defer splice.Release(pooled)
	var body *codec.ListBody
	var joined, pieces [][]byte
	var err error
	tm := kapi.TypeMeta{Kind: rq.res.Kind + "List", APIVersion: rq.res.apiVersion()}
	if rq.listPrefix != "" && rq.out.View == codec.ViewObject {
		if joined, err = rq.joinedList(tm, items); err != nil {
			return err
		}
	}
	switch {
	case joined != nil:
		body, err = f.ListBodyOfJoined(tm, meta, joined, len(items))
	case f.ElementType() == codec.MediaTypeJSON && rq.out.View == codec.ViewObject && rq.res.objType.plainMetadata:
		// Written from the stored values themselves, the resourceVersion
		// put between their two halves: no copy of the objects' bytes.
		pieces, err = rq.storedListPieces(items, (*pooled)[:0])
		if *pooled = pieces; err == nil {
			body, err = f.ListBodyOfPieces(tm, meta, pieces, 3)
		}
	default:
		pieces, tm, err = rq.listElements(items, (*pooled)[:0])
		if *pooled = pieces; err == nil {
			body, err = f.ListBody(tm, meta, pieces)
		}
	}
	if err != nil {
		return err
	}
	httpbody.WriteStreamed(rq.w, rq.r, http.StatusOK, rq.out.ContentType(), body)
	return nil
}

// joinedList is the items of a whole collection's list (rq.listPrefix)
// joined in the runs kept for the collection in the response's format
// (listcache.Runs): the runs of its last list that still hold the same
// items written as they are, the others made anew from the items'
// elements. nil: the collection's first list, written item by item and
// keeping nothing.
func (rq *request) joinedList(tm kapi.TypeMeta, items []*watch.Item) ([][]byte, error) {
	f := rq.out.Format
	return rq.res.storageVersion().lists.Join(f.MediaType()+" "+rq.listPrefix, rq.listRev, items, func(dst []byte, it *watch.Item) ([]byte, error) {
		element, err := rq.element(it, f, false)
		if err != nil {
			return nil, err
		}
		return append(f.AppendListItemPrefix(dst, tm, len(element)), element...), nil
	})
}

// table is a Table of items as an element of the negotiated format.
func (rq *request) table(meta kapi.ListMeta, items []*watch.Item) ([]byte, error) {
	b, err := rq.tableBody(meta, items)
	if err != nil {
		return nil, err
	}
	return rq.out.Transcode(b.Bytes())
}

// tableBody is the JSON of a Table of items. The column definitions are
// sent once per request: a watch sends them with its first event only, as
// kube-apiserver. A whole collection's rows are joined in runs kept for
// the next list (listcache.Runs), as its items are for lists of objects.
func (rq *request) tableBody(meta kapi.ListMeta, items []*watch.Item) (*tables.Body, error) {
	t := kapi.Table{TypeMeta: kapi.TypeMeta{Kind: "Table", APIVersion: rq.out.APIVersion()}, ListMeta: meta}
	if !rq.tableHeadersSent {
		t.ColumnDefinitions = rq.res.table.Defs
		rq.tableHeadersSent = true
	}
	b, err := tables.NewBody(t, time.Now())
	if err != nil {
		return nil, err
	}
	cellsKey := "table " + rq.res.apiVersion() + " " + rq.res.Kind // cells differ by resource
	var runs *listcache.Runs[*watch.Item]
	if rq.listPrefix != "" {
		runs = &rq.res.storageVersion().lists
	}
	key := cellsKey + ";v=" + rq.out.Version + ";includeObject=" + rq.includeObject + " " + rq.listPrefix
	return b, tables.AddRows(b, runs, key, rq.listRev, items, func(it *watch.Item) ([]byte, []byte, error) { return rq.tableRow(it, cellsKey) })
}

// tableRow is the cells of the item's row in a Table, made once per
// version of its object (no decoding) and kept under key, and its object as
// includeObject asks.
func (rq *request) tableRow(it *watch.Item, key string) (cells, object []byte, err error) {
	if rq.includeObject != "None" {
		if object, err = rq.element(it, codec.JSON(), rq.includeObject != "Object"); err != nil {
			return nil, nil, err
		}
	}
	cells, err = it.Encoded(key, func() ([]byte, error) {
		obj, err := cachedObject(it)
		if err != nil {
			return nil, err
		}
		return rq.res.table.Cells(obj)
	})
	return cells, object, err
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
	httpbody.Write(rq.w, rq.r, code, rq.out.ContentType(), data)
}

// respond writes obj, which is not in the cache (the result of a write).
func (rq *request) respond(code int, obj kapi.Object) error {
	data, err := rq.encodeOne(watch.NewItem("", 0, obj))
	if err != nil {
		return err
	}
	rq.writeEncoded(code, data)
	return nil
}

// respondStored writes obj, just written to the store as value (its
// marshalStored bytes) and now carrying its resourceVersion. When the JSON
// of obj is value with the resourceVersion put back, the response is made
// from it rather than by encoding the object once more.
func (rq *request) respondStored(code int, obj kapi.Object, value []byte) error {
	if rq.respondSpliced(code, obj, value) {
		return nil
	}
	it := watch.NewItem("", 0, obj)
	if rq.out.FromJSON() && rq.out.View == codec.ViewObject { // the response is made from the object's JSON
		if _, err := it.Encoded(codec.MediaTypeJSON, func() ([]byte, error) { return rq.objectJSON(obj, value) }); err != nil {
			return err
		}
	}
	data, err := rq.encodeOne(it)
	if err != nil {
		return err
	}
	rq.writeEncoded(code, data)
	return nil
}

// respondSpliced is respondStored of a JSON object: the response is value
// with obj's resourceVersion put in (objectJSON), written in three pieces
// rather than put together first. false: nothing was written, the
// response is not that.
func (rq *request) respondSpliced(code int, obj kapi.Object, value []byte) bool {
	if value == nil || !rq.objType.plainMetadata || rq.res.converts() ||
		rq.out.MediaType() != codec.MediaTypeJSON || rq.out.View != codec.ViewObject {
		return false
	}
	if pretty, _ := rq.boolParam("pretty"); pretty {
		return false
	}
	rv := obj.GetObjectMeta().ResourceVersion
	if !splice.IsRevision(rv) {
		return false
	}
	at, sep := splice.ResourceVersionOffset(value)
	if at < 0 {
		return false
	}
	if end := rq.step("encode"); end != nil {
		defer end()
	}
	var buf [64]byte
	member := splice.AppendResourceVersion(buf[:0], rv, sep)
	var w io.Writer = rq.w
	zw := httpbody.Start(rq.w, rq.r, code, rq.out.ContentType(), len(value)+len(member))
	if zw != nil {
		w = zw
		defer httpbody.Finish(zw)
	}
	_, _ = w.Write(value[:at]) // a broken connection fails the next write too
	_, _ = w.Write(member)
	_, _ = w.Write(value[at:])
	return true
}

// objectJSON is json.Marshal(obj), made from stored, obj's marshalStored
// encoding, when the type's JSON is plain enough to tell where the
// resourceVersion goes (splice.Element).
func (rq *request) objectJSON(obj kapi.Object, stored []byte) ([]byte, error) {
	if stored != nil && rq.objType.plainMetadata && !rq.res.converts() { // stored is in the storage version
		rv := obj.GetObjectMeta().ResourceVersion
		if data, ok := splice.Element(make([]byte, 0, len(stored)+len(rv)+len(`,"resourceVersion":""`)), stored, rv); ok {
			return data, nil
		}
	}
	return json.Marshal(obj)
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
	if rec := recordFrom(r.Context()); rec != nil {
		rec.NoteStatus(st)
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusOK
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	httpbody.Write(w, r, code, f.MediaType(), data)
}
