package apiservertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

// ProtoField is one field of a protobuf message.
type ProtoField struct {
	Num    protowire.Number
	Type   protowire.Type
	Bytes  []byte // of a length-delimited field
	Varint uint64 // of a varint field
}

// ProtoFields reads every field of a message; fixed-width fields are
// skipped.
func ProtoFields(t testing.TB, data []byte) []ProtoField {
	t.Helper()
	var fields []ProtoField
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			t.Fatalf("protobuf tag: %v", protowire.ParseError(n))
		}
		data = data[n:]
		f := ProtoField{Num: num, Type: typ}
		switch typ {
		case protowire.BytesType:
			f.Bytes, n = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			f.Varint, n = protowire.ConsumeVarint(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			t.Fatalf("protobuf field %d: %v", num, protowire.ParseError(n))
		}
		data = data[n:]
		fields = append(fields, f)
	}
	return fields
}

// ProtoEnvelope reads Kubernetes' envelope of a protobuf body: "k8s\x00",
// then runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
// contentEncoding = 3, contentType = 4}. It returns the type and raw, the
// message; contentEncoding and contentType must be empty.
func ProtoEnvelope(t testing.TB, body []byte) (kapi.TypeMeta, []byte) {
	t.Helper()
	rest, ok := bytes.CutPrefix(body, []byte("k8s\x00"))
	if !ok {
		t.Fatalf("the protobuf body lacks the k8s\\x00 envelope: % x", body[:min(len(body), 8)])
	}
	var tm kapi.TypeMeta
	var raw []byte
	for _, f := range ProtoFields(t, rest) {
		switch f.Num {
		case 1:
			for _, g := range ProtoFields(t, f.Bytes) {
				switch g.Num {
				case 1:
					tm.APIVersion = string(g.Bytes)
				case 2:
					tm.Kind = string(g.Bytes)
				}
			}
		case 2:
			raw = f.Bytes
		case 3, 4:
			if len(f.Bytes) > 0 {
				t.Errorf("envelope field %d (contentEncoding/contentType) is %q, want empty for plain protobuf", f.Num, f.Bytes)
			}
		}
	}
	return tm, raw
}

// ProtoWrap writes Kubernetes' envelope around a message: a protobuf
// request body, or an item of a list as a whole object.
func ProtoWrap(tm kapi.TypeMeta, raw []byte) []byte {
	var typeMeta []byte
	typeMeta = AppendProtoString(typeMeta, 1, tm.APIVersion)
	typeMeta = AppendProtoString(typeMeta, 2, tm.Kind)
	b := []byte("k8s\x00")
	b = AppendProtoMessage(b, 1, typeMeta)
	return AppendProtoMessage(b, 2, raw)
}

// AppendProtoString appends field num holding s, unless s is empty.
func AppendProtoString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// AppendProtoMessage appends field num holding the message msg.
func AppendProtoMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// AppendProtoVarint appends field num holding v.
func AppendProtoVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// protoDocJSON reads a protobuf body (object, list or Status) as the JSON
// document it stands for.
func (d *Decoder) protoDocJSON(t testing.TB, body []byte) []byte {
	t.Helper()
	tm, raw := ProtoEnvelope(t, body)
	switch {
	case tm.Kind == "Status":
		st := ProtoStatus(t, raw)
		st.TypeMeta = tm
		return MustJSON(t, st)
	case strings.HasSuffix(tm.Kind, "List"):
		// Every Kubernetes list message: {metadata = 1: ListMeta, items = 2}.
		// Items travel without their type; it is the list's, less "List".
		itemType := kapi.TypeMeta{Kind: strings.TrimSuffix(tm.Kind, "List"), APIVersion: tm.APIVersion}
		list := struct {
			kapi.TypeMeta `json:",inline"`
			Metadata      kapi.ListMeta     `json:"metadata"`
			Items         []json.RawMessage `json:"items"`
		}{TypeMeta: tm, Items: []json.RawMessage{}}
		for _, f := range ProtoFields(t, raw) {
			switch f.Num {
			case 1:
				list.Metadata = ProtoListMeta(t, f.Bytes)
			case 2:
				list.Items = append(list.Items, d.protoObjectJSON(t, ProtoWrap(itemType, f.Bytes)))
			default:
				t.Errorf("%s: unexpected field %d", tm.Kind, f.Num)
			}
		}
		return MustJSON(t, list)
	}
	return d.protoObjectJSON(t, body)
}

// protoObjectJSON decodes one object in its envelope with the codec's
// Format.Unmarshal and gives its JSON.
func (d *Decoder) protoObjectJSON(t testing.TB, body []byte) []byte {
	t.Helper()
	tm, _ := ProtoEnvelope(t, body)
	obj, err := d.newObject(tm)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := codec.ByMediaType(MediaProtobuf).Unmarshal(body, obj); err != nil {
		t.Fatalf("unmarshal protobuf %s: %v", tm.Kind, err)
	}
	return MustJSON(t, obj)
}

// ProtoListMeta reads ListMeta {selfLink = 1, resourceVersion = 2,
// continue = 3, remainingItemCount = 4 (varint)}.
func ProtoListMeta(t testing.TB, data []byte) kapi.ListMeta {
	t.Helper()
	var m kapi.ListMeta
	for _, f := range ProtoFields(t, data) {
		switch f.Num {
		case 2:
			m.ResourceVersion = string(f.Bytes)
		case 3:
			m.Continue = string(f.Bytes)
		case 4:
			if f.Type != protowire.VarintType {
				t.Errorf("ListMeta.remainingItemCount has wire type %d, want varint", f.Type)
			}
			n := int64(f.Varint)
			m.RemainingItemCount = &n
		}
	}
	return m
}

// ProtoObjectMeta reads the metadata (field 1) of an object message with
// Kubernetes' ObjectMeta numbers: name 1, generateName 2, namespace 3,
// uid 5, resourceVersion 6, generation 7, creationTimestamp 8 {seconds 1},
// labels 11, annotations 12 ({key 1, value 2} entries); managedFields (17)
// are skipped, and any other field is an error.
func ProtoObjectMeta(t testing.TB, raw []byte) kapi.ObjectMeta {
	t.Helper()
	var m kapi.ObjectMeta
	entry := func(data []byte) (string, string) {
		var k, v string
		for _, f := range ProtoFields(t, data) {
			switch f.Num {
			case 1:
				k = string(f.Bytes)
			case 2:
				v = string(f.Bytes)
			}
		}
		return k, v
	}
	for _, f := range ProtoFields(t, raw) {
		if f.Num != 1 {
			continue
		}
		for _, g := range ProtoFields(t, f.Bytes) {
			switch g.Num {
			case 1:
				m.Name = string(g.Bytes)
			case 2:
				m.GenerateName = string(g.Bytes)
			case 3:
				m.Namespace = string(g.Bytes)
			case 5:
				m.UID = string(g.Bytes)
			case 6:
				m.ResourceVersion = string(g.Bytes)
			case 7:
				m.Generation = int64(g.Varint)
			case 8:
				for _, h := range ProtoFields(t, g.Bytes) {
					if h.Num == 1 {
						m.CreationTimestamp = kapi.NewTime(time.Unix(int64(h.Varint), 0))
					}
				}
			case 11, 12:
				k, v := entry(g.Bytes)
				target := &m.Labels
				if g.Num == 12 {
					target = &m.Annotations
				}
				if *target == nil {
					*target = map[string]string{}
				}
				(*target)[k] = v
			case 17: // managedFields: their JSON is checked elsewhere
			default:
				t.Errorf("ObjectMeta: unexpected field %d", g.Num)
			}
		}
	}
	return m
}

// ProtoStatus reads Status {metadata = 1, status = 2, message = 3,
// reason = 4, details = 5 {name = 1, group = 2, kind = 3, causes = 4
// {reason = 1, message = 2, field = 3}, retryAfterSeconds = 5, uid = 6},
// code = 6}.
func ProtoStatus(t testing.TB, data []byte) kapi.Status {
	t.Helper()
	var st kapi.Status
	for _, f := range ProtoFields(t, data) {
		switch f.Num {
		case 1:
			st.ListMeta = ProtoListMeta(t, f.Bytes)
		case 2:
			st.Status = string(f.Bytes)
		case 3:
			st.Message = string(f.Bytes)
		case 4:
			st.Reason = kapi.StatusReason(f.Bytes)
		case 5:
			st.Details = protoDetails(t, f.Bytes)
		case 6:
			st.Code = int32(f.Varint)
		}
	}
	return st
}

func protoDetails(t testing.TB, data []byte) *kapi.StatusDetails {
	d := &kapi.StatusDetails{}
	for _, g := range ProtoFields(t, data) {
		switch g.Num {
		case 1:
			d.Name = string(g.Bytes)
		case 2:
			d.Group = string(g.Bytes)
		case 3:
			d.Kind = string(g.Bytes)
		case 4:
			var c kapi.StatusCause
			for _, h := range ProtoFields(t, g.Bytes) {
				switch h.Num {
				case 1:
					c.Type = kapi.CauseType(h.Bytes)
				case 2:
					c.Message = string(h.Bytes)
				case 3:
					c.Field = string(h.Bytes)
				}
			}
			d.Causes = append(d.Causes, c)
		case 5:
			d.RetryAfterSeconds = int32(g.Varint)
		case 6:
			d.UID = string(g.Bytes)
		}
	}
	return d
}

// ProtoMap appends the entries of a map[string]string field num, sorted
// by key, as protobuf writes them: each a message {key = 1, value = 2}.
func ProtoMap(b []byte, num protowire.Number, m map[string]string) []byte {
	for _, k := range sortedKeys(m) {
		b = AppendProtoMessage(b, num, AppendProtoString(AppendProtoString(nil, 1, k), 2, m[k]))
	}
	return b
}

// ProtoObjectMetaBody writes ObjectMeta with Kubernetes' numbers (those
// ProtoObjectMeta reads, but managedFields), by hand rather than with
// kapi's encoder: the metadata field of a protobuf request body.
func ProtoObjectMetaBody(m *kapi.ObjectMeta) []byte {
	var meta []byte
	meta = AppendProtoString(meta, 1, m.Name)
	meta = AppendProtoString(meta, 2, m.GenerateName)
	meta = AppendProtoString(meta, 3, m.Namespace)
	meta = AppendProtoString(meta, 5, m.UID)
	meta = AppendProtoString(meta, 6, m.ResourceVersion)
	if m.Generation != 0 {
		meta = AppendProtoVarint(meta, 7, uint64(m.Generation))
	}
	if !m.CreationTimestamp.IsZero() {
		meta = AppendProtoMessage(meta, 8, AppendProtoVarint(nil, 1, uint64(m.CreationTimestamp.Unix())))
	}
	meta = ProtoMap(meta, 11, m.Labels)
	return ProtoMap(meta, 12, m.Annotations)
}
