package codec

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// protoPlan is a struct type's plan, or why it has none: what protoPlans
// holds per type, built once by protoPlanOf.
type protoPlan struct {
	msg *protoMessage
	err error
}

var (
	protoPlans   sync.Map   // reflect.Type → protoPlan
	protoBuildMu sync.Mutex // one plan is built at a time
)

// protoPlanOf returns the plan of struct type t, computed once.
func protoPlanOf(t reflect.Type) (*protoMessage, error) {
	if p, ok := protoPlans.Load(t); ok {
		p := p.(protoPlan)
		return p.msg, p.err
	}
	protoBuildMu.Lock()
	defer protoBuildMu.Unlock()
	if p, ok := protoPlans.Load(t); ok {
		p := p.(protoPlan)
		return p.msg, p.err
	}
	b := protoBuilder{building: map[reflect.Type]*protoMessage{}}
	m, err := b.message(t)
	if err != nil {
		protoPlans.Store(t, protoPlan{err: err})
		return nil, err
	}
	// Publish only whole plans: every type reached, or none.
	for typ, msg := range b.building {
		protoPlans.Store(typ, protoPlan{msg: msg})
	}
	return m, nil
}

type protoBuilder struct {
	building map[reflect.Type]*protoMessage
}

func (b *protoBuilder) message(t reflect.Type) (*protoMessage, error) {
	if p, ok := protoPlans.Load(t); ok {
		p := p.(protoPlan)
		return p.msg, p.err
	}
	if m, ok := b.building[t]; ok {
		return m, nil // a recursive type: the plan is being built
	}
	m := &protoMessage{typ: t}
	b.building[t] = m
	if err := b.fields(m, t, 0); err != nil {
		return nil, err
	}
	for i := range m.fields {
		m.fields[i].decl = i
	}
	slices.SortStableFunc(m.fields, func(a, b protoField) int { return int(a.num) - int(b.num) })
	for i := 1; i < len(m.fields); i++ {
		if m.fields[i].num == m.fields[i-1].num {
			return nil, &protoError{path: m.fields[i].name, offset: -1,
				err: fmt.Errorf("field number %d is also %s's (in %v)", m.fields[i].num, m.fields[i-1].name, t)}
		}
	}
	if n := len(m.fields); n > 0 {
		size := min(int(m.fields[n-1].num), protoMaxDense) + 1
		m.byNumber = make([]int32, size)
		for i, f := range m.fields {
			if int(f.num) < size {
				m.byNumber[f.num] = int32(i + 1)
			}
		}
	}
	if (t.Implements(protoJSONMarshaler) || reflect.PointerTo(t).Implements(protoJSONMarshaler) ||
		t.Implements(protoTextMarshaler) || reflect.PointerTo(t).Implements(protoTextMarshaler)) && len(m.fields) == 0 {
		// Such as time.Time or a quantity: its JSON is not its fields.
		return nil, &protoError{offset: -1, err: fmt.Errorf("%v encodes itself to JSON and has no protobuf fields", t)}
	}
	return m, nil
}

// fields adds the fields of struct type t, found at offset base in the
// message's struct, to m.
func (b *protoBuilder) fields(m *protoMessage, t reflect.Type, base uintptr) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("protobuf")
		jsonTag := sf.Tag.Get("json")
		jsonName, _, _ := strings.Cut(jsonTag, ",")
		if tag == "-" {
			continue
		}
		if !tagged {
			switch {
			case jsonTag == "-":
				continue
			case sf.Anonymous && protoIsTypeMeta(sf):
				continue // the inline TypeMeta travels in the envelope
			case sf.Anonymous && jsonName == "" && sf.Type.Kind() == reflect.Struct:
				if err := b.fields(m, sf.Type, base+sf.Offset); err != nil {
					return err
				}
				continue
			case !sf.IsExported() && !(sf.Anonymous && jsonName == "" && sf.Type.Kind() == reflect.Pointer):
				continue
			}
			name := jsonName
			if name == "" {
				name = sf.Name
			}
			return &protoError{path: name, offset: -1, err: fmt.Errorf("field %s of %v has no protobuf tag", sf.Name, t)}
		}
		name := jsonName
		if name == "" || jsonTag == "-" {
			name = sf.Name
		}
		if !sf.IsExported() {
			return &protoError{path: name, offset: -1, err: fmt.Errorf("field %s of %v has a protobuf tag but is not exported", sf.Name, t)}
		}
		f, err := b.field(sf, tag, name, base)
		if err != nil {
			return err
		}
		m.fields = append(m.fields, f)
	}
	return nil
}

// protoIsTypeMeta reports whether sf, an embedded field without a protobuf tag,
// is the inline TypeMeta: kapi's, or any type of that name (Kubernetes'
// types embed metav1.TypeMeta as json:",inline" or json:"").
func protoIsTypeMeta(sf reflect.StructField) bool {
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	jsonName, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return jsonName == "" && (t == protoTypeMetaType || t.Name() == "TypeMeta")
}

// protoTag is what the codec reads of a protobuf struct tag.
type protoTag struct {
	encoding string // varint, bytes, fixed32, fixed64, zigzag32, zigzag64
	num      int
	packed   bool
	name     string
}

func parseProtoTag(s string) (protoTag, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return protoTag{}, fmt.Errorf("malformed protobuf tag %q", s)
	}
	t := protoTag{encoding: parts[0]}
	n, err := strconv.Atoi(parts[1])
	if err != nil || !protowire.Number(n).IsValid() {
		return protoTag{}, fmt.Errorf("protobuf tag %q has no valid field number", s)
	}
	t.num = n
	for _, p := range parts[2:] {
		switch {
		case p == "packed":
			t.packed = true
		case strings.HasPrefix(p, "name="):
			t.name = p[len("name="):]
		}
	}
	return t, nil
}

func (b *protoBuilder) field(sf reflect.StructField, tag, name string, base uintptr) (protoField, error) {
	fail := func(err error, seg string) (protoField, error) { return protoField{}, protoInField(err, seg) }
	pt, err := parseProtoTag(tag)
	if err != nil {
		return fail(err, name)
	}
	f := protoField{
		num: protowire.Number(pt.num), name: name, protoName: pt.name,
		offset: base + sf.Offset, typ: sf.Type,
	}
	if f.protoName == "" {
		f.protoName = name
	}
	t := sf.Type
	switch {
	case t.Kind() == reflect.Map:
		f.card = protoMap
		keyTag, _ := parseProtoTag(sf.Tag.Get("protobuf_key"))
		valTag, _ := parseProtoTag(sf.Tag.Get("protobuf_val"))
		if f.key, err = b.value(t.Key(), keyTag.encoding); err != nil {
			return fail(err, name+"[]")
		}
		switch f.key.kind {
		case protoFloat, protoDouble, protoBytes, protoStruct, protoTime, protoMicroTime, protoExternal:
			return fail(fmt.Errorf("a map key of type %v cannot travel in protobuf", t.Key()), name)
		}
		vt := t.Elem()
		if vt.Kind() == reflect.Pointer {
			f.ptr, vt = true, vt.Elem()
		}
		if f.val, err = b.value(vt, valTag.encoding); err != nil {
			return fail(err, name+"[]")
		}
		f.stringMap = t.Key() == protoStringType && t.Elem() == protoStringType
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		f.card = protoRepeated
		et := t.Elem()
		f.elemSize = et.Size()
		if et.Kind() == reflect.Pointer {
			f.ptr, et = true, et.Elem()
		}
		if f.val, err = b.value(et, pt.encoding); err != nil {
			return fail(err, name+"[]")
		}
		f.packed = pt.packed && f.val.kind.scalar()
	case t.Kind() == reflect.Pointer:
		f.ptr = true
		if f.val, err = b.value(t.Elem(), pt.encoding); err != nil {
			return fail(err, name)
		}
	default:
		if f.val, err = b.value(t, pt.encoding); err != nil {
			return fail(err, name)
		}
	}
	if f.val.kind == protoExternal && !f.ptr {
		return fail(fmt.Errorf("%v is a proto.Message and must be reached through a pointer", f.val.typ), name)
	}
	if f.ptr && f.val.kind == protoBytes && f.card != protoRepeated {
		return fail(fmt.Errorf("a pointer to %v cannot travel in protobuf", f.val.typ), name)
	}
	wt := f.val.kind.wireType()
	if f.card == protoMap || f.packed {
		wt = protowire.BytesType
	}
	f.tag = protowire.EncodeTag(f.num, wt)
	return f, nil
}

// value plans a value of Go type t; encoding is the first word of its tag.
func (b *protoBuilder) value(t reflect.Type, encoding string) (protoValue, error) {
	v := protoValue{typ: t, goKind: t.Kind()}
	bits64 := false
	switch t.Kind() {
	case reflect.Struct:
		switch {
		case t == protoTimeType:
			v.kind = protoTime
		case t == protoMicroTimeType:
			v.kind = protoMicroTime
		case isProtoMessage(t):
			v.kind = protoExternal
		default:
			m, err := b.message(t)
			if err != nil {
				return v, err
			}
			v.kind, v.msg = protoStruct, m
		}
		return v, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			v.kind = protoBytes
			return v, nil
		}
		return v, fmt.Errorf("%v cannot travel in protobuf (a repeated field's elements cannot be repeated)", t)
	case reflect.String:
		v.kind = protoString
		return v, nil
	case reflect.Bool:
		v.kind = protoBool
		return v, nil
	case reflect.Float32:
		v.kind = protoFloat
		return v, nil
	case reflect.Float64:
		v.kind = protoDouble
		return v, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		v.kind = protoInt32
	case reflect.Int, reflect.Int64:
		v.kind, bits64 = protoInt64, true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		v.kind = protoUint32
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		v.kind, bits64 = protoUint64, true
	default:
		return v, fmt.Errorf("%v cannot travel in protobuf", t)
	}
	signed := v.kind == protoInt32 || v.kind == protoInt64
	switch encoding {
	case "zigzag32", "fixed32":
		if bits64 {
			return v, fmt.Errorf("%v cannot travel as %s", t, encoding)
		}
	case "zigzag64":
	case "fixed64":
	default:
		return v, nil // varint, and the tags that say bytes of an integer
	}
	switch {
	case encoding == "zigzag32" && signed:
		v.kind = protoSint32
	case encoding == "zigzag64" && signed:
		v.kind = protoSint64
	case encoding == "fixed32" && signed:
		v.kind = protoSfixed32
	case encoding == "fixed32":
		v.kind = protoFixed32
	case encoding == "fixed64" && signed:
		v.kind = protoSfixed64
	case encoding == "fixed64":
		v.kind = protoFixed64
	default:
		return v, fmt.Errorf("unsigned %v cannot travel as %s", t, encoding)
	}
	return v, nil
}

// # Encoding
