package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi"
)

// ListBody is a list response laid out around its items' elements: a head,
// a short prefix before each element and a tail. It lets a server write a
// list of any length from cached elements without assembling it in one
// buffer, and know its length before writing it. Its bytes are those
// [Format.AppendList] appends.
type ListBody struct {
	kind     formatKind
	head     []byte
	elements [][]byte // per pieces to an element; or, joined, the items joined
	per      int
	joined   bool             // elements are items with their prefixes (ListBodyOfJoined)
	itemsTag protowire.Number // protobuf: the items' field number
	size     int
}

var _ io.WriterTo = (*ListBody)(nil)

// ListBody lays out a list body (see [Format.AppendList]); it is an error
// for YAML, whose list is a document made from the whole JSON list, not a
// concatenation. elements are kept, not copied.
func (f *Format) ListBody(tm kapi.TypeMeta, meta kapi.ListMeta, elements [][]byte) (*ListBody, error) {
	return f.ListBodyOfPieces(tm, meta, elements, 1)
}

// ListBodyOfPieces is ListBody with each element given as per consecutive
// pieces of pieces (nil pieces allowed), written one after another: an
// element made of a stored value with a field put into it is then written
// from the value itself, never copied into one slice.
func (f *Format) ListBodyOfPieces(tm kapi.TypeMeta, meta kapi.ListMeta, pieces [][]byte, per int) (*ListBody, error) {
	if per < 1 || len(pieces)%per != 0 {
		return nil, fmt.Errorf("codec: %d pieces do not make elements of %d", len(pieces), per)
	}
	n := len(pieces) / per
	b := &ListBody{kind: f.kind, elements: pieces, per: per}
	_, itemsTag := protoListFields(tm)
	itemsSize := 0
	for i := range n {
		size := b.elementLen(i)
		if f.kind == kindProtobuf {
			size += protowire.SizeTag(itemsTag) + protowire.SizeVarint(uint64(size))
		}
		itemsSize += size
	}
	if f.kind == kindJSON {
		itemsSize += max(n-1, 0) // the commas
	}
	if err := b.start(f, tm, meta, n, itemsSize); err != nil {
		return nil, err
	}
	return b, nil
}

// start sets the body's head and size, for n items of itemsSize bytes with
// their prefixes.
func (b *ListBody) start(f *Format, tm kapi.TypeMeta, meta kapi.ListMeta, n, itemsSize int) error {
	var err error
	switch f.kind {
	case kindJSON:
		b.head, err = jsonListHead(tm, meta)
	case kindProtobuf:
		b.head, b.itemsTag, err = protoListHead(tm, meta, itemsSize)
	case kindCBOR:
		b.head, err = cborListHead(tm, meta, n)
	default:
		return fmt.Errorf("codec: a %s list is not a concatenation of elements", f.mediaType)
	}
	if err != nil {
		return err
	}
	b.size = len(b.head) + itemsSize + len(b.tail())
	return nil
}

// AppendListItemPrefix appends what comes before an item of size bytes in
// a list body made by [Format.ListBodyOfJoined] for lists of type tm: a
// comma in JSON, the items field's tag and the item's length in protobuf,
// nothing in CBOR.
func (f *Format) AppendListItemPrefix(dst []byte, tm kapi.TypeMeta, size int) []byte {
	switch f.kind {
	case kindJSON:
		return append(dst, ',')
	case kindProtobuf:
		_, itemsTag := protoListFields(tm)
		dst = protowire.AppendTag(dst, itemsTag, protowire.BytesType)
		return protowire.AppendVarint(dst, uint64(size))
	}
	return dst
}

// ListBodyOfJoined lays out a list body of n items given joined: each item
// its prefix ([Format.AppendListItemPrefix]) and its element, one after
// another, in any number of slices. The JSON list leaves out the first
// item's comma. Its bytes are those [Format.AppendList] appends for the
// elements. joined is kept, not copied, and written in slices as large as
// its own: a server writes a list it keeps so without copying it.
func (f *Format) ListBodyOfJoined(tm kapi.TypeMeta, meta kapi.ListMeta, joined [][]byte, n int) (*ListBody, error) {
	itemsSize := 0
	for _, p := range joined {
		itemsSize += len(p)
	}
	if f.kind == kindJSON && n > 0 {
		// The first item's comma goes: the first slice becomes one of
		// the body's own.
		joined = slices.Clone(joined)
		for i, p := range joined {
			if len(p) > 0 {
				if p[0] != ',' {
					return nil, fmt.Errorf("codec: a joined JSON list item does not start with a comma")
				}
				joined[i] = p[1:]
				itemsSize--
				break
			}
		}
	}
	b := &ListBody{kind: f.kind, elements: joined, per: max(len(joined), 1), joined: true}
	if err := b.start(f, tm, meta, n, itemsSize); err != nil {
		return nil, err
	}
	return b, nil
}

// elementLen is the length of element i.
func (b *ListBody) elementLen(i int) int {
	size := 0
	for _, p := range b.elements[i*b.per : (i+1)*b.per] {
		size += len(p)
	}
	return size
}

// binaryPrefixMax bounds an element's prefix: a protobuf tag and length.
const binaryPrefixMax = 2 * binary.MaxVarintLen64

// Len is the body's length in bytes.
func (b *ListBody) Len() int { return b.size }

// largeWrite is the size from which a joined body's pieces, on average,
// are written to the connection as they are rather than through a buffer.
const largeWrite = 32 << 10

// LargeWrites says whether the body's writes are large ones: joined items
// (ListBodyOfJoined) in slices of largeWrite bytes or more on average,
// whose copy into a buffer would cost more than the write it saves. The
// head and the tail are small writes still.
func (b *ListBody) LargeWrites() bool {
	return b.joined && len(b.elements) > 0 && b.size/len(b.elements) >= largeWrite
}

// prefix is what comes before element i, of size bytes, in scratch.
func (b *ListBody) prefix(scratch *[binaryPrefixMax]byte, i, size int) []byte {
	if b.joined {
		return nil // the items carry theirs
	}
	switch b.kind {
	case kindJSON:
		if i > 0 {
			return append(scratch[:0], ',')
		}
	case kindProtobuf:
		p := protowire.AppendTag(scratch[:0], b.itemsTag, protowire.BytesType)
		return protowire.AppendVarint(p, uint64(size))
	}
	return nil
}

func (b *ListBody) tail() []byte {
	if b.kind == kindJSON {
		return []byte("]}")
	}
	return nil
}

// WriteTo writes the body to w in many small writes: w should be buffered.
func (b *ListBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	write := func(p []byte) error {
		if len(p) == 0 {
			return nil
		}
		m, err := w.Write(p)
		n += int64(m)
		return err
	}
	if err := write(b.head); err != nil {
		return n, err
	}
	var scratch [binaryPrefixMax]byte
	for i := range len(b.elements) / b.per {
		if err := write(b.prefix(&scratch, i, b.elementLen(i))); err != nil {
			return n, err
		}
		for _, p := range b.elements[i*b.per : (i+1)*b.per] {
			if err := write(p); err != nil {
				return n, err
			}
		}
	}
	return n, write(b.tail())
}

// AppendTo appends the body to dst.
func (b *ListBody) AppendTo(dst []byte) []byte {
	if cap(dst)-len(dst) < b.size {
		dst = append(make([]byte, 0, len(dst)+b.size), dst...)
	}
	dst = append(dst, b.head...)
	var scratch [binaryPrefixMax]byte
	for i := range len(b.elements) / b.per {
		dst = append(dst, b.prefix(&scratch, i, b.elementLen(i))...)
		for _, p := range b.elements[i*b.per : (i+1)*b.per] {
			dst = append(dst, p...)
		}
	}
	return append(dst, b.tail()...)
}

func jsonListHead(tm kapi.TypeMeta, meta kapi.ListMeta) ([]byte, error) {
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 0, len(metaJSON)+len(tm.Kind)+len(tm.APIVersion)+48)
	head = append(head, `{"kind":`...)
	head = strconv.AppendQuote(head, tm.Kind)
	head = append(head, `,"apiVersion":`...)
	head = strconv.AppendQuote(head, tm.APIVersion)
	head = append(head, `,"metadata":`...)
	head = append(head, metaJSON...)
	return append(head, `,"items":[`...), nil
}
