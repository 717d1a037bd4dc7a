package apiserver

import (
	"bufio"
	"strconv"
	"sync"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/watch"
)

// An object's JSON element differs from its stored value (marshalStored)
// only by metadata.resourceVersion, which the store's revision supplies.
// Making the element from the stored bytes costs a copy instead of a
// json.Marshal, and spares the cache a second copy of every object's bytes:
// the store already holds them.

// encodeBuffers are where one request's response is encoded: reused from
// item to item of a list and from event to event of a watch, so that
// neither allocates in proportion to its length.
type encodeBuffers struct {
	frame     []byte        // a watch's event buffer
	burst     *bufio.Writer // a watch's buffer while it writes a burst of events (see streamWatch)
	elements  []byte        // where JSON elements made from stored values are made (see storedElement)
	chunks    [][]byte      // the full chunks elements were made in before
	streaming bool          // a watch: elements are made one at a time
	// metadataKeys are the cache keys of metadata elements, by
	// format: built once per request, not once per item of a list.
	metadataKeys map[*codec.Format]string
}

// storedElement returns the JSON element of the item's object made from its
// stored value (see splice.Element), or false. The elements of one
// request are made one after another in chunks that are never copied (a
// full one is replaced), so that each element stays valid for the
// request's life; the chunks come from a pool and return to it when the
// request ends (release), so that a list costs neither an
// allocation per item nor fresh zeroed memory. A watch, which keeps its
// buffer while it idles, makes its one element at a time in a buffer of
// its own, sized to the largest.
func (b *encodeBuffers) storedElement(it *watch.Item) ([]byte, bool) {
	at, sep, ok := storedOffset(it)
	if !ok {
		return nil, false
	}
	need := len(it.Value) + splice.MemberRoom
	if cap(b.elements)-len(b.elements) < need {
		switch {
		case b.streaming:
			b.release()
			b.elements = make([]byte, 0, need)
		case need > elementChunk: // earlier elements may still be held (a Table's rows)
			if b.elements != nil {
				b.chunks = append(b.chunks, b.elements)
			}
			b.elements = make([]byte, 0, need)
		default:
			if b.elements != nil {
				b.chunks = append(b.chunks, b.elements)
			}
			b.elements = (*elementChunks.Get().(*[]byte))[:0]
		}
	}
	start := len(b.elements)
	var digits [splice.MaxRevisionDigits]byte
	rv := strconv.AppendInt(digits[:0], it.Revision, 10)
	buf := splice.AppendResourceVersion(append(b.elements, it.Value[:at]...), rv, sep)
	buf = append(buf, it.Value[at:]...)
	b.elements = buf
	return buf[start:len(buf):len(buf)], true
}

// storedOffset is where in the item's stored value its resourceVersion
// goes, and the separator it needs there (see splice.ResourceVersionOffset),
// found once and kept in the item's Mark. ok is false if the value is not
// in the shape marshalStored writes, or the item has no value: the
// caller then encodes the object. An item with a value is one the watch
// cache decoded from it, whose resourceVersion is its revision.
func storedOffset(it *watch.Item) (at int, sep byte, ok bool) {
	if it.Value == nil || it.Revision <= 0 {
		return 0, 0, false
	}
	m := it.Mark.Load()
	if m == 0 {
		if at, sep := splice.ResourceVersionOffset(it.Value); at >= 0 {
			m = markFound | uint64(sep)<<32 | uint64(uint32(at))
		} else {
			m = markNone
		}
		it.Mark.Store(m)
	}
	if m&markFound == 0 {
		return 0, 0, false
	}
	return int(uint32(m)), byte(m >> 32), true
}

// The item Mark's bits: the offset in the low 32, the separator in the
// next 8, then whether the offset was found, or there is none.
const (
	markFound = 1 << 40
	markNone  = 1 << 41
)

// elementChunk is the size of the pooled chunks elements are made in.
const elementChunk = 256 << 10

var elementChunks = sync.Pool{New: func() any {
	b := make([]byte, 0, elementChunk)
	return &b
}}

// release returns the request's chunks to the pool: no element
// made in them may be used afterwards.
func (b *encodeBuffers) release() {
	for _, chunk := range append(append(make([][]byte, 0, 4), b.chunks...), b.elements) { // on the stack, mostly
		if cap(chunk) == elementChunk {
			put := chunk[:0] // escapes only when put
			elementChunks.Put(&put)
		}
	}
	b.chunks, b.elements = nil, nil
}

// storedPieces are the JSON element of the item's object made from its
// stored value without copying it: the value up to where the
// resourceVersion goes, the resourceVersion member (written at the start of
// room, which must have splice.MemberRoom bytes: the caller sizes it so that
// it never moves), and the rest of the value. ok is false when the element
// cannot be made so; the caller then uses element.
func (rq *request) storedPieces(it *watch.Item, room []byte) (before, member, after []byte, ok bool) {
	if !rq.res.objType.plainMetadata {
		return nil, nil, nil, false
	}
	at, sep, ok := storedOffset(it)
	if !ok {
		return nil, nil, nil, false
	}
	var digits [splice.MaxRevisionDigits]byte
	m := splice.AppendResourceVersion(room[:0], strconv.AppendInt(digits[:0], it.Revision, 10), sep)
	return it.Value[:at], m[:len(m):len(m)], it.Value[at:], true
}
