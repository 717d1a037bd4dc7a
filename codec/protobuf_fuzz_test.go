package codec

import (
	"bytes"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// FuzzUnmarshalProto decodes anything into a Widget and into a type with a
// field of every kind: no panic, and what decodes, encodes to bytes that
// decode and encode to the same bytes again.
func FuzzUnmarshalProto(f *testing.F) {
	for _, v := range []any{fullWidget(), &testWidget{}, fullSink(), &sink{Child: &sink{Kids: []sink{{}}}}} {
		f.Add(mustMarshalProto(f, v))
	}
	f.Add(deepSink(maxProtoDepth))
	f.Add(deepMap(maxProtoDepth - 2))
	f.Add([]byte("\x0a\x05\x5a\x03\x0a\x01\xff"))
	f.Add(mustMarshalProto(f, &microTimes{T: kapi.NewMicroTime(time.Unix(5, 123456789)), PT: &kapi.MicroTime{}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkProtoStable(t, data, func() any { return new(testWidget) })
		checkProtoStable(t, data, func() any { return new(sink) })
		checkProtoStable(t, data, func() any { return new(microTimes) })
	})
}

func checkProtoStable(t *testing.T, data []byte, newValue func() any) {
	v := newValue()
	if err := unmarshalProto(data, v); err != nil {
		return
	}
	once, err := marshalProto(nil, v)
	if err != nil {
		t.Fatalf("%T decoded from %x does not encode: %v", v, data, err)
	}
	w := newValue()
	if err := unmarshalProto(once, w); err != nil {
		t.Fatalf("%T: re-encoding %x does not decode: %v", v, once, err)
	}
	twice, err := marshalProto(nil, w)
	if err != nil {
		t.Fatalf("%T: decoded twice does not encode: %v", v, err)
	}
	if !bytes.Equal(once, twice) {
		t.Fatalf("%T: unstable encoding of %x:\n%x\n%x", v, data, once, twice)
	}
}
