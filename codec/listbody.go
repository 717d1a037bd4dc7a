package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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
	elements [][]byte
	itemsTag protowire.Number // protobuf: the items' field number
	size     int
}

var _ io.WriterTo = (*ListBody)(nil)

// ListBody lays out a list body (see [Format.AppendList]); it is an error
// for YAML, whose list is a document made from the whole JSON list, not a
// concatenation. elements are kept, not copied.
func (f *Format) ListBody(tm kapi.TypeMeta, meta kapi.ListMeta, elements [][]byte) (*ListBody, error) {
	b := &ListBody{kind: f.kind, elements: elements}
	var err error
	switch f.kind {
	case kindJSON:
		b.head, err = jsonListHead(tm, meta)
	case kindProtobuf:
		b.head, b.itemsTag, err = protoListHead(tm, meta, elements)
	case kindCBOR:
		b.head, err = cborListHead(tm, meta, len(elements))
	default:
		return nil, fmt.Errorf("codec: a %s list is not a concatenation of elements", f.mediaType)
	}
	if err != nil {
		return nil, err
	}
	b.size = len(b.head) + len(b.tail())
	var scratch [binaryPrefixMax]byte
	for i, e := range elements {
		b.size += len(b.prefix(&scratch, i, e)) + len(e)
	}
	return b, nil
}

// binaryPrefixMax bounds an element's prefix: a protobuf tag and length.
const binaryPrefixMax = 2 * binary.MaxVarintLen64

// Len is the body's length in bytes.
func (b *ListBody) Len() int { return b.size }

// prefix is what comes before element i, in scratch.
func (b *ListBody) prefix(scratch *[binaryPrefixMax]byte, i int, e []byte) []byte {
	switch b.kind {
	case kindJSON:
		if i > 0 {
			return append(scratch[:0], ',')
		}
	case kindProtobuf:
		p := protowire.AppendTag(scratch[:0], b.itemsTag, protowire.BytesType)
		return protowire.AppendVarint(p, uint64(len(e)))
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
	for i, e := range b.elements {
		if err := write(b.prefix(&scratch, i, e)); err != nil {
			return n, err
		}
		if err := write(e); err != nil {
			return n, err
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
	for i, e := range b.elements {
		dst = append(dst, b.prefix(&scratch, i, e)...)
		dst = append(dst, e...)
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
