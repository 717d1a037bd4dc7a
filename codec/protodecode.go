package codec

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// protoDecoder reads one message's wire bytes into a planned struct.
type protoDecoder struct {
	buf []byte
	str string // buf as a string, made at the first string: strings are its substrings
}

// string returns buf[a:b] as a string.
func (d *protoDecoder) string(a, b int) string {
	if d.str == "" {
		d.str = string(d.buf)
	}
	return d.str[a:b]
}

// message decodes buf[i:end] into the struct at p, at nesting depth.
func (d *protoDecoder) message(m *protoMessage, p unsafe.Pointer, i, end, depth int) error {
	for i < end {
		num, wt, n := protowire.ConsumeTag(d.buf[i:end])
		if n < 0 {
			return protoAt(i, n)
		}
		f := m.field(num)
		if f == nil {
			k := protowire.ConsumeFieldValue(num, wt, d.buf[i+n:end])
			if k < 0 {
				return protoAt(i+n, k)
			}
			i += n + k
			continue
		}
		next, err := d.field(f, unsafe.Add(p, f.offset), wt, i+n, end, depth)
		if err != nil {
			return protoInField(err, f.name)
		}
		i = next
	}
	return nil
}

// field decodes one occurrence of f at buf[i:end], of wire type wt, into the
// field at p; it returns where the next field starts.
func (d *protoDecoder) field(f *protoField, p unsafe.Pointer, wt protowire.Type, i, end, depth int) (int, error) {
	switch f.card {
	case protoRepeated:
		if wt == protowire.BytesType && f.val.kind.scalar() {
			return d.packed(f, (*protoSlice)(p), i, end)
		}
		if wt != f.val.kind.wireType() {
			return i, protoWrongWireType(i, wt)
		}
		s := (*protoSlice)(p)
		ep := f.grow(p)
		next, err := d.value(&f.val, ep, i, end, depth)
		if err != nil {
			return i, protoInField(err, "["+strconv.Itoa(s.len-1)+"]")
		}
		return next, nil
	case protoMap:
		if wt != protowire.BytesType {
			return i, protoWrongWireType(i, wt)
		}
		a, b, err := d.length(i, end)
		if err != nil {
			return i, err
		}
		if depth+1 > maxProtoDepth {
			return i, &protoError{offset: i, err: errProtoTooDeep}
		}
		return b, d.mapEntry(f, p, a, b, depth+1)
	}
	if wt != f.val.kind.wireType() {
		return i, protoWrongWireType(i, wt)
	}
	if f.ptr {
		pp := (*unsafe.Pointer)(p)
		if *pp == nil {
			*pp = reflect.New(f.val.typ).UnsafePointer()
		}
		p = *pp
	}
	return d.value(&f.val, p, i, end, depth)
}

func protoWrongWireType(i int, wt protowire.Type) error {
	return protoErrorf(i, "wrong wire type %d", wt)
}

// length reads a length prefix at i: the bytes are buf[a:b].
func (d *protoDecoder) length(i, end int) (a, b int, err error) {
	n, k := protowire.ConsumeVarint(d.buf[i:end])
	if k < 0 {
		return 0, 0, protoAt(i, k)
	}
	if n > uint64(end-i-k) {
		return 0, 0, &protoError{offset: i, err: io.ErrUnexpectedEOF}
	}
	return i + k, i + k + int(n), nil
}

// grow appends a zero element to the slice at p and returns its address
// (for a slice of pointers, the address of a new pointee).
func (f *protoField) grow(p unsafe.Pointer) unsafe.Pointer {
	s := (*protoSlice)(p)
	if s.len == s.cap {
		// reflect allocates with the element type, and zeroes the new room.
		reflect.NewAt(f.typ, p).Elem().Grow(1)
	}
	ep := unsafe.Add(s.data, uintptr(s.len)*f.elemSize)
	s.len++
	if f.ptr {
		e := reflect.New(f.val.typ).UnsafePointer()
		*(*unsafe.Pointer)(ep) = e
		return e
	}
	return ep
}

// packed decodes a packed run of scalars.
func (d *protoDecoder) packed(f *protoField, s *protoSlice, i, end int) (int, error) {
	a, b, err := d.length(i, end)
	if err != nil {
		return i, err
	}
	for a < b {
		n := d.scalar(&f.val, f.grow(unsafe.Pointer(s)), f.val.kind.wireType(), a, b)
		if n < 0 {
			return i, protoInField(protoAt(a, n), "["+strconv.Itoa(s.len-1)+"]")
		}
		a += n
	}
	return b, nil
}

// scalar decodes a number or bool of wire type wt at buf[i:end] into p; it
// returns the bytes read, or a protowire error code.
func (d *protoDecoder) scalar(v *protoValue, p unsafe.Pointer, wt protowire.Type, i, end int) int {
	switch wt {
	case protowire.Fixed32Type:
		x, n := protowire.ConsumeFixed32(d.buf[i:end])
		if n >= 0 {
			if v.kind == protoFloat {
				*(*float32)(p) = math.Float32frombits(x)
			} else if v.kind == protoSfixed32 {
				protoStoreInt(p, v.goKind, uint64(int32(x)))
			} else {
				protoStoreInt(p, v.goKind, uint64(x))
			}
		}
		return n
	case protowire.Fixed64Type:
		x, n := protowire.ConsumeFixed64(d.buf[i:end])
		if n >= 0 {
			if v.kind == protoDouble {
				*(*float64)(p) = math.Float64frombits(x)
			} else {
				protoStoreInt(p, v.goKind, x)
			}
		}
		return n
	}
	x, n := protowire.ConsumeVarint(d.buf[i:end])
	if n < 0 {
		return n
	}
	switch v.kind {
	case protoBool:
		*(*bool)(p) = x != 0
	case protoSint32:
		protoStoreInt(p, v.goKind, uint64(protowire.DecodeZigZag(uint64(uint32(x)))))
	case protoSint64:
		protoStoreInt(p, v.goKind, uint64(protowire.DecodeZigZag(x)))
	default:
		protoStoreInt(p, v.goKind, x)
	}
	return n
}

// value decodes one value of v's wire type at buf[i:end] into p.
func (d *protoDecoder) value(v *protoValue, p unsafe.Pointer, i, end, depth int) (int, error) {
	wt := v.kind.wireType()
	if wt != protowire.BytesType {
		n := d.scalar(v, p, wt, i, end)
		if n < 0 {
			return i, protoAt(i, n)
		}
		return i + n, nil
	}
	a, b, err := d.length(i, end)
	if err != nil {
		return i, err
	}
	switch v.kind {
	case protoString:
		if !utf8.Valid(d.buf[a:b]) {
			return i, protoErrorf(a, "string is not valid UTF-8")
		}
		*(*string)(p) = d.string(a, b)
	case protoBytes:
		bs := make([]byte, b-a)
		copy(bs, d.buf[a:b])
		*(*[]byte)(p) = bs
	case protoStruct:
		if b > a && depth+1 > maxProtoDepth {
			return i, &protoError{offset: i, err: errProtoTooDeep}
		}
		if err := d.message(v.msg, p, a, b, depth+1); err != nil {
			return i, err
		}
	case protoTime, protoMicroTime:
		if err := d.time((*time.Time)(p), v.kind == protoMicroTime, a, b); err != nil {
			return i, err
		}
	case protoExternal:
		if b > a && depth+1 > maxProtoDepth {
			return i, &protoError{offset: i, err: errProtoTooDeep}
		}
		m := reflect.NewAt(v.typ, p).Interface().(proto.Message)
		opts := proto.UnmarshalOptions{Merge: true, RecursionLimit: maxProtoDepth - depth}
		if err := opts.Unmarshal(d.buf[a:b], m); err != nil {
			return i, &protoError{offset: a, err: err}
		}
	}
	return b, nil
}

// time decodes Kubernetes' Time message at buf[i:end] into what a
// kapi.Time or (micro) a kapi.MicroTime wraps, as metav1.Time does (seconds
// only) or metav1.MicroTime (and microseconds), in Local; empty is the zero
// time.
func (d *protoDecoder) time(t *time.Time, micro bool, i, end int) error {
	if i == end {
		*t = time.Time{}
		return nil
	}
	var sec, nanos int64
	for i < end {
		num, wt, n := protowire.ConsumeTag(d.buf[i:end])
		if n < 0 {
			return protoAt(i, n)
		}
		if num == 1 || num == 2 {
			if wt != protowire.VarintType {
				return protoInField(protoWrongWireType(i+n, wt), [...]string{1: "seconds", 2: "nanos"}[num])
			}
			x, k := protowire.ConsumeVarint(d.buf[i+n : end])
			if k < 0 {
				return protoAt(i+n, k)
			}
			if num == 1 {
				sec = int64(x)
			} else if micro {
				nanos = int64(int32(x)) / 1000 * 1000
			}
			i += n + k
			continue
		}
		k := protowire.ConsumeFieldValue(num, wt, d.buf[i+n:end])
		if k < 0 {
			return protoAt(i+n, k)
		}
		i += n + k
	}
	// Years 0 to 9999 in UTC: JSON (RFC 3339) can carry no other.
	const year0, endOfYear9999 = -62167219200, 253402300799 // Unix seconds
	if sec < year0 || sec > endOfYear9999 {
		return protoInField(fmt.Errorf("%d is outside the years 0 to 9999", sec), "seconds")
	}
	if nanos < 0 || nanos >= 1e9 {
		nanos = 0
	}
	tt := time.Unix(sec, nanos)
	if tt.IsZero() {
		*t = time.Time{}
	} else {
		*t = tt.Local()
	}
	return nil
}

// mapEntry decodes one map entry at buf[i:end] into the map at p.
func (d *protoDecoder) mapEntry(f *protoField, p unsafe.Pointer, i, end, depth int) error {
	if f.stringMap {
		var k, v string
		var haveKey bool
		for i < end {
			num, wt, n := protowire.ConsumeTag(d.buf[i:end])
			if n < 0 {
				return protoAt(i, n)
			}
			if num != 1 && num != 2 {
				k := protowire.ConsumeFieldValue(num, wt, d.buf[i+n:end])
				if k < 0 {
					return protoAt(i+n, k)
				}
				i += n + k
				continue
			}
			if wt != protowire.BytesType {
				return protoInField(protoWrongWireType(i+n, wt), protoEntrySegment(haveKey, k))
			}
			a, b, err := d.length(i+n, end)
			if err != nil {
				return protoInField(err, protoEntrySegment(haveKey, k))
			}
			if !utf8.Valid(d.buf[a:b]) {
				return protoInField(protoErrorf(a, "string is not valid UTF-8"), protoEntrySegment(haveKey, k))
			}
			if num == 1 {
				k, haveKey = d.string(a, b), true
			} else {
				v = d.string(a, b)
			}
			i = b
		}
		m := (*map[string]string)(p)
		if *m == nil {
			*m = make(map[string]string)
		}
		(*m)[k] = v
		return nil
	}

	mv := reflect.NewAt(f.typ, p).Elem()
	key := reflect.New(f.typ.Key()).Elem()
	val := reflect.New(f.typ.Elem()).Elem()
	if f.val.kind == protoBytes {
		val.Set(reflect.MakeSlice(f.typ.Elem(), 0, 0)) // absent is empty, not nil, as gogo reads it
	}
	var haveKey bool
	for i < end {
		num, wt, n := protowire.ConsumeTag(d.buf[i:end])
		if n < 0 {
			return protoAt(i, n)
		}
		var v *protoValue
		var vp unsafe.Pointer
		switch num {
		case 1:
			v, vp = &f.key, key.Addr().UnsafePointer()
		case 2:
			v, vp = &f.val, val.Addr().UnsafePointer()
		default:
			k := protowire.ConsumeFieldValue(num, wt, d.buf[i+n:end])
			if k < 0 {
				return protoAt(i+n, k)
			}
			i += n + k
			continue
		}
		seg := "[]"
		if haveKey {
			seg = "[" + fmt.Sprint(key.Interface()) + "]"
		}
		if wt != v.kind.wireType() {
			return protoInField(protoWrongWireType(i+n, wt), seg)
		}
		if num == 2 && f.ptr {
			pp := (*unsafe.Pointer)(vp)
			if *pp == nil {
				*pp = reflect.New(f.val.typ).UnsafePointer()
			}
			vp = *pp
		}
		next, err := d.value(v, vp, i+n, end, depth)
		if err != nil {
			return protoInField(err, seg)
		}
		haveKey = haveKey || num == 1
		i = next
	}
	if mv.IsNil() {
		mv.Set(reflect.MakeMap(f.typ))
	}
	mv.SetMapIndex(key, val)
	return nil
}

func protoEntrySegment(haveKey bool, key string) string {
	if haveKey {
		return "[" + key + "]"
	}
	return "[]"
}
