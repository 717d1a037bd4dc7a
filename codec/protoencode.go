package codec

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// protoSlice is the memory layout of a slice.
type protoSlice struct {
	data     unsafe.Pointer
	len, cap int
}

// append appends the fields of the struct at p.
func (m *protoMessage) append(b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	var err error
	for i := range m.fields {
		f := &m.fields[i]
		fp := unsafe.Add(p, f.offset)
		switch f.card {
		case protoSingle:
			if f.ptr {
				if fp = *(*unsafe.Pointer)(fp); fp == nil {
					continue
				}
				b, err = f.val.append(b, f.tag, fp, depth)
				break
			}
			if f.val.zero(fp) {
				continue
			}
			start := len(b)
			b, err = f.val.append(b, f.tag, fp, depth)
			if f.val.kind == protoStruct && b[len(b)-1] == 0 && len(b)-start == protowire.SizeVarint(f.tag)+1 {
				b = b[:start] // an empty message: a zero struct is omitted too
			}
		case protoRepeated:
			b, err = f.appendRepeated(b, (*protoSlice)(fp), depth)
		case protoMap:
			if depth+1 > maxProtoDepth && reflect.NewAt(f.typ, fp).Elem().Len() > 0 {
				return b, protoInField(errProtoTooDeep, f.name)
			}
			if f.stringMap {
				b = f.appendStringMap(b, *(*map[string]string)(fp))
			} else {
				b, err = f.appendMap(b, fp, depth)
			}
		}
		if err != nil {
			return b, protoInField(err, f.name)
		}
	}
	return b, nil
}

func (f *protoField) appendRepeated(b []byte, s *protoSlice, depth int) ([]byte, error) {
	if s.len == 0 {
		return b, nil
	}
	if f.packed {
		size := 0
		switch f.val.kind.wireType() {
		case protowire.Fixed32Type:
			size = 4 * s.len
		case protowire.Fixed64Type:
			size = 8 * s.len
		default:
			for i := range s.len {
				size += f.val.varintSize(unsafe.Add(s.data, uintptr(i)*f.elemSize))
			}
		}
		b = protowire.AppendVarint(b, f.tag)
		b = protowire.AppendVarint(b, uint64(size))
		for i := range s.len {
			b = f.val.appendScalar(b, unsafe.Add(s.data, uintptr(i)*f.elemSize))
		}
		return b, nil
	}
	tag := protowire.EncodeTag(f.num, f.val.kind.wireType())
	var err error
	for i := range s.len {
		ep := unsafe.Add(s.data, uintptr(i)*f.elemSize)
		if f.ptr {
			if ep = *(*unsafe.Pointer)(ep); ep == nil {
				// gogo would panic; write the zero value.
				ep = reflect.New(f.val.typ).UnsafePointer()
			}
		}
		if b, err = f.val.append(b, tag, ep, depth); err != nil {
			return b, protoInField(err, "["+strconv.Itoa(i)+"]")
		}
	}
	return b, nil
}

// protoKeyPool holds the sorted keys of a map while it is written.
var protoKeyPool = sync.Pool{New: func() any { return new([]string) }}

// appendStringMap writes a map[string]string, in sorted key order.
func (f *protoField) appendStringMap(b []byte, m map[string]string) []byte {
	if len(m) == 0 {
		return b
	}
	kp := protoKeyPool.Get().(*[]string)
	keys := (*kp)[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		b = protowire.AppendVarint(b, f.tag)
		b = protowire.AppendVarint(b, uint64(2+protowire.SizeBytes(len(k))+protowire.SizeBytes(len(v))))
		b = append(b, 1<<3|byte(protowire.BytesType))
		b = protowire.AppendString(b, k)
		b = append(b, 2<<3|byte(protowire.BytesType))
		b = protowire.AppendString(b, v)
	}
	clear(keys)
	*kp = keys[:0]
	protoKeyPool.Put(kp)
	return b
}

// appendMap writes any other map, in sorted key order.
func (f *protoField) appendMap(b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	mv := reflect.NewAt(f.typ, p).Elem()
	if mv.Len() == 0 {
		return b, nil
	}
	keys := mv.MapKeys()
	slices.SortFunc(keys, protoCompareKeys)
	key := reflect.New(f.typ.Key()).Elem()
	val := reflect.New(f.typ.Elem()).Elem()
	keyTag := protowire.EncodeTag(1, f.key.kind.wireType())
	valTag := protowire.EncodeTag(2, f.val.kind.wireType())
	var err error
	for _, k := range keys {
		key.Set(k)
		val.Set(mv.MapIndex(k))
		b = protowire.AppendVarint(b, f.tag)
		start := len(b)
		b = append(b, 0)
		b, _ = f.key.append(b, keyTag, key.Addr().UnsafePointer(), depth+1)
		vp := val.Addr().UnsafePointer()
		switch {
		case f.ptr:
			vp = *(*unsafe.Pointer)(vp)
		case f.val.kind == protoBytes && *(*[]byte)(vp) == nil:
			vp = nil
		}
		if vp != nil {
			if b, err = f.val.append(b, valTag, vp, depth+1); err != nil {
				return b, protoInField(err, "["+fmt.Sprint(k.Interface())+"]")
			}
		}
		b = protoPatchLength(b, start)
	}
	return b, nil
}

func protoCompareKeys(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.String:
		return strings.Compare(a.String(), b.String())
	case reflect.Bool:
		switch {
		case a.Bool() == b.Bool():
			return 0
		case a.Bool():
			return +1
		}
		return -1
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return protoCmp(a.Int(), b.Int())
	}
	return protoCmp(a.Uint(), b.Uint())
}

func protoCmp[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return +1
	}
	return 0
}

var errProtoTooDeep = fmt.Errorf("messages nested deeper than %d", maxProtoDepth)

// protoPatchLength makes the byte at start, reserved for the length of the
// message that follows it, that length, moving the message if the length
// takes more than one byte.
func protoPatchLength(b []byte, start int) []byte {
	n := len(b) - start - 1
	if n < 0x80 {
		b[start] = byte(n)
		return b
	}
	k := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, k-1)...)
	copy(b[start+k:], b[start+1:start+1+n])
	protowire.AppendVarint(b[start:start], uint64(n))
	return b
}

// append appends the value at p with its tag.
func (v *protoValue) append(b []byte, tag uint64, p unsafe.Pointer, depth int) ([]byte, error) {
	b = protowire.AppendVarint(b, tag)
	switch v.kind {
	case protoString:
		s := *(*string)(p)
		b = protowire.AppendVarint(b, uint64(len(s)))
		return append(b, s...), nil
	case protoBytes:
		s := *(*[]byte)(p)
		b = protowire.AppendVarint(b, uint64(len(s)))
		return append(b, s...), nil
	case protoStruct:
		if depth+1 > maxProtoDepth {
			// Only empty messages may be nested deeper, as in decoding.
			if !v.msg.empty(p) {
				return b, errProtoTooDeep
			}
			return append(b, 0), nil
		}
		start := len(b)
		b = append(b, 0)
		b, err := v.msg.append(b, p, depth+1)
		if err != nil {
			return b, err
		}
		return protoPatchLength(b, start), nil
	case protoTime, protoMicroTime:
		t := (*time.Time)(p) // what kapi.Time and kapi.MicroTime wrap
		if t.IsZero() {
			return append(b, 0), nil
		}
		sec, nanos := uint64(t.Unix()), uint64(0) // nanos: 0 for a Time, as metav1.Time
		if v.kind == protoMicroTime {
			nanos = uint64(t.Nanosecond() / 1000 * 1000)
		}
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeVarint(sec)+1+protowire.SizeVarint(nanos)))
		b = append(b, 1<<3|byte(protowire.VarintType))
		b = protowire.AppendVarint(b, sec)
		b = append(b, 2<<3|byte(protowire.VarintType))
		return protowire.AppendVarint(b, nanos), nil
	case protoExternal:
		m := reflect.NewAt(v.typ, p).Interface().(proto.Message)
		opts := proto.MarshalOptions{Deterministic: true}
		size := opts.Size(m)
		if size > 0 && depth+1 > maxProtoDepth {
			return b, errProtoTooDeep
		}
		b = protowire.AppendVarint(b, uint64(size))
		return opts.MarshalAppend(b, m)
	}
	return v.appendScalar(b, p), nil
}

// zero reports whether the value at p, of a non-pointer field, is omitted:
// a zero number (but -0.0), an empty string, a nil []byte, a zero time. A
// struct is not: it is omitted after the fact when its message is empty.
func (v *protoValue) zero(p unsafe.Pointer) bool {
	switch v.kind {
	case protoStruct, protoExternal:
		return false
	case protoString:
		return len(*(*string)(p)) == 0
	case protoBytes:
		return *(*[]byte)(p) == nil
	case protoTime, protoMicroTime:
		return (*time.Time)(p).IsZero()
	case protoBool:
		return !*(*bool)(p)
	case protoFloat:
		return *(*uint32)(p) == 0
	case protoDouble:
		return *(*uint64)(p) == 0
	}
	return protoLoadInt(p, v.goKind) == 0
}

// empty reports whether the struct at p writes no field at all.
func (m *protoMessage) empty(p unsafe.Pointer) bool {
	for i := range m.fields {
		f := &m.fields[i]
		fp := unsafe.Add(p, f.offset)
		switch {
		case f.card == protoRepeated:
			if (*protoSlice)(fp).len > 0 {
				return false
			}
		case f.card == protoMap:
			if reflect.NewAt(f.typ, fp).Elem().Len() > 0 {
				return false
			}
		case f.ptr:
			if *(*unsafe.Pointer)(fp) != nil {
				return false
			}
		case f.val.kind == protoStruct:
			if !f.val.msg.empty(fp) {
				return false
			}
		case !f.val.zero(fp):
			return false
		}
	}
	return true
}

// protoLoadInt reads an integer of Go kind k at p, sign-extended.
func protoLoadInt(p unsafe.Pointer, k reflect.Kind) uint64 {
	switch k {
	case reflect.Int8:
		return uint64(*(*int8)(p))
	case reflect.Int16:
		return uint64(*(*int16)(p))
	case reflect.Int32:
		return uint64(*(*int32)(p))
	case reflect.Int, reflect.Int64:
		return uint64(*(*int64)(p))
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p) // uint, uint64, uintptr
}

// protoStoreInt writes x at p, an integer of Go kind k, truncated.
func protoStoreInt(p unsafe.Pointer, k reflect.Kind, x uint64) {
	switch k {
	case reflect.Int8, reflect.Uint8:
		*(*uint8)(p) = uint8(x)
	case reflect.Int16, reflect.Uint16:
		*(*uint16)(p) = uint16(x)
	case reflect.Int32, reflect.Uint32:
		*(*uint32)(p) = uint32(x)
	default:
		*(*uint64)(p) = x
	}
}

// appendScalar appends a number or a bool, without tag.
func (v *protoValue) appendScalar(b []byte, p unsafe.Pointer) []byte {
	switch v.kind {
	case protoBool:
		if *(*bool)(p) {
			return append(b, 1)
		}
		return append(b, 0)
	case protoSint32, protoSint64:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(int64(protoLoadInt(p, v.goKind))))
	case protoFixed32, protoSfixed32:
		return protowire.AppendFixed32(b, uint32(protoLoadInt(p, v.goKind)))
	case protoFixed64, protoSfixed64:
		return protowire.AppendFixed64(b, protoLoadInt(p, v.goKind))
	case protoFloat:
		return protowire.AppendFixed32(b, math.Float32bits(*(*float32)(p)))
	case protoDouble:
		return protowire.AppendFixed64(b, math.Float64bits(*(*float64)(p)))
	}
	return protowire.AppendVarint(b, protoLoadInt(p, v.goKind))
}

// varintSize is the size of a varint scalar at p.
func (v *protoValue) varintSize(p unsafe.Pointer) int {
	switch v.kind {
	case protoBool:
		return 1
	case protoSint32, protoSint64:
		return protowire.SizeVarint(protowire.EncodeZigZag(int64(protoLoadInt(p, v.goKind))))
	}
	return protowire.SizeVarint(protoLoadInt(p, v.goKind))
}

// # Decoding
