package codec

// Internal tests: marshalProto, unmarshalProto and protoSupported are
// unexported, wired into the media-type table by codec.go.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kapi-dev/kapi"
)

// The example Widget (examples/widgets/widgetapi imports apiserver, which
// imports codec: it is copied here).

type testWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   testWidgetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status testWidgetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type testWidgetSpec struct {
	Color    string            `json:"color" protobuf:"bytes,1,opt,name=color"`
	Replicas *int32            `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	Size     int32             `json:"size,omitempty" protobuf:"varint,3,opt,name=size"`
	Ports    []testWidgetPort  `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
	Selector map[string]string `json:"selector,omitempty" protobuf:"bytes,5,rep,name=selector"`
}

type testWidgetPort struct {
	Name     string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Port     int32  `json:"port" protobuf:"varint,2,opt,name=port"`
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,3,opt,name=protocol"`
}

type testWidgetStatus struct {
	Replicas           int32            `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Selector           string           `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
	ObservedGeneration int64            `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	Conditions         []kapi.Condition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
}

func ptr[T any](v T) *T { return &v }

// unixTime is a time as decoding gives it back: whole seconds, in Local.
func unixTime(sec int64) kapi.Time { return kapi.Time{Time: time.Unix(sec, 0).Local()} }

// fullWidget has every field set.
func fullWidget() *testWidget {
	return &testWidget{
		TypeMeta: kapi.TypeMeta{}, // travels in the envelope, not the message
		ObjectMeta: kapi.ObjectMeta{
			Name:                       "web-1",
			GenerateName:               "web-",
			Namespace:                  "default",
			UID:                        "7f1c2b9e-3a4d-4f5e-9a8b-1c2d3e4f5a6b",
			ResourceVersion:            "123456",
			Generation:                 7,
			CreationTimestamp:          unixTime(1700000000),
			DeletionTimestamp:          ptr(unixTime(1700003600)),
			DeletionGracePeriodSeconds: ptr(int64(0)),
			Labels:                     map[string]string{"app": "web", "tier": "frontend", "": "empty key"},
			Annotations:                map[string]string{"example.com/note": "héllo, wörld", "empty": ""},
			OwnerReferences: []kapi.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "WidgetClass", Name: "big", UID: "u-1",
				Controller: ptr(true), BlockOwnerDeletion: ptr(false),
			}},
			Finalizers: []string{"example.com/cleanup", ""},
			ManagedFields: []kapi.ManagedFieldsEntry{
				{
					Manager: "kubectl", Operation: "Apply", APIVersion: "example.com/v1",
					Time: ptr(unixTime(1700000001)), FieldsType: "FieldsV1",
					FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)},
				},
				{
					Manager: "controller", Operation: "Update", APIVersion: "example.com/v1",
					Time: ptr(kapi.Time{}), FieldsType: "FieldsV1",
					FieldsV1: &kapi.FieldsV1{Raw: []byte{}}, Subresource: "status",
				},
			},
		},
		Spec: testWidgetSpec{
			Color:    "Red",
			Replicas: ptr(int32(0)), // a pointer to zero is written
			Size:     -5,            // a ten-byte varint
			Ports: []testWidgetPort{
				{Name: "http", Port: 80, Protocol: "TCP"},
				{Name: "https", Port: 443},
				{},
			},
			Selector: map[string]string{"app": "web"},
		},
		Status: testWidgetStatus{
			Replicas: math.MaxInt32, Selector: "app=web", ObservedGeneration: math.MinInt64,
			Conditions: []kapi.Condition{
				{Type: "Ready", Status: kapi.ConditionTrue, ObservedGeneration: 7, LastTransitionTime: unixTime(1700000002), Reason: "Up", Message: "all good"},
				{Type: "Degraded", Status: kapi.ConditionFalse},
			},
		},
	}
}

func mustMarshalProto(t testing.TB, v any) []byte {
	t.Helper()
	b, err := marshalProto(nil, v)
	if err != nil {
		t.Fatalf("marshalProto(%T): %v", v, err)
	}
	return b
}

func TestProtoRoundTripWidget(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *testWidget
	}{
		{"full", fullWidget()},
		{"zero", &testWidget{}},
		{"empty collections", &testWidget{ObjectMeta: kapi.ObjectMeta{Labels: map[string]string{}, Finalizers: []string{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := mustMarshalProto(t, tc.in)
			var out testWidget
			if err := unmarshalProto(data, &out); err != nil {
				t.Fatalf("unmarshalProto: %v", err)
			}
			want := *tc.in
			if len(want.Labels) == 0 {
				want.Labels = nil // empty and nil both write nothing
			}
			if len(want.Finalizers) == 0 {
				want.Finalizers = nil
			}
			if !reflect.DeepEqual(&out, &want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", out, want)
			}
			// Encoding is deterministic.
			if again := mustMarshalProto(t, &out); !bytes.Equal(again, data) {
				t.Errorf("re-encoding differs:\n%x\n%x", again, data)
			}
		})
	}
}

func TestProtoDecodeResets(t *testing.T) {
	data := mustMarshalProto(t, &testWidget{Spec: testWidgetSpec{Color: "Blue"}})
	out := fullWidget()
	if err := unmarshalProto(data, out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, &testWidget{Spec: testWidgetSpec{Color: "Blue"}}) {
		t.Errorf("decoding into a used value kept its fields: %+v", out)
	}
}

// TestProtoGoldenObjectMeta checks the bytes of a small ObjectMeta against
// the field numbers of Kubernetes' generated.proto, derived by hand, in
// gogo's order (by number). gogo would also write the zero generateName
// (12 00) and selfLink (22 00); kapi omits zero values.
func TestProtoGoldenObjectMeta(t *testing.T) {
	meta := &kapi.ObjectMeta{
		Name:              "web",
		Namespace:         "default",
		UID:               "u1",
		ResourceVersion:   "42",
		Generation:        3,
		Labels:            map[string]string{"tier": "db", "app": "web"},
		CreationTimestamp: unixTime(1700000000),
	}
	want := strings.Join([]string{
		"0a 03 776562",                    // 1 name "web"
		"1a 07 64656661756c74",            // 3 namespace "default"
		"2a 02 7531",                      // 5 uid "u1"
		"32 02 3432",                      // 6 resourceVersion "42"
		"38 03",                           // 7 generation 3
		"42 08 08 80e2cfaa06 10 00",       // 8 creationTimestamp {seconds 1700000000, nanos 0}
		"5a 0a 0a 03 617070 12 03 776562", // 11 labels entry {key "app", value "web"}: sorted
		"5a 0a 0a 04 74696572 12 02 6462", // 11 labels entry {key "tier", value "db"}
	}, "")
	want = strings.ReplaceAll(want, " ", "")
	got := hex.EncodeToString(mustMarshalProto(t, meta))
	if got != want {
		t.Errorf("ObjectMeta:\n got %s\nwant %s", got, want)
	}
}

func TestProtoGoldenScalars(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"negative int32 is ten bytes", &testWidgetPort{Port: -1}, "10 ffffffffffffffffff01"},
		{"zero values and nil pointers are omitted", &testWidgetSpec{}, ""},
		{"a zero struct is omitted", &testWidget{Spec: testWidgetSpec{Ports: []testWidgetPort{}}}, ""},
		{"a pointer to zero is not", &testWidgetSpec{Replicas: ptr(int32(0))}, "1000"},
		{"a repeated zero element is not", &testWidgetSpec{Ports: make([]testWidgetPort, 2)}, "2200 2200"},
		{"map entries have key and value", &testWidgetSpec{Selector: map[string]string{"": ""}}, "2a04 0a00 1200"},
		{"-0.0 is not zero", &sink{Db: math.Copysign(0, -1)}, "99 01 0000000000000080"},
		{"zero time", &kapi.Condition{}, ""},
		{"zero time behind a pointer", &kapi.ManagedFieldsEntry{Time: &kapi.Time{}}, "2200"},
		{"pre-epoch time", &kapi.ManagedFieldsEntry{Time: ptr(unixTime(-1))}, "220d 08ffffffffffffffffff01 1000"},
		{"nil FieldsV1 raw is absent", &kapi.ManagedFieldsEntry{FieldsV1: &kapi.FieldsV1{}}, "3a00"},
		{"empty FieldsV1 raw is not", &kapi.FieldsV1{Raw: []byte{}}, "0a00"},
		{"remainingItemCount is a varint whatever its tag says", &kapi.ListMeta{RemainingItemCount: ptr(int64(5))}, "2005"},
		{"inline TypeMeta is not in the message", &kapi.Status{TypeMeta: kapi.TypeMeta{Kind: "Status"}, Code: 404}, "309403"},
		{"status", &kapi.Status{ListMeta: kapi.ListMeta{ResourceVersion: "1"}, Status: kapi.StatusFailure, Reason: kapi.StatusReasonNotFound,
			Details: &kapi.StatusDetails{Causes: []kapi.StatusCause{{Field: "f"}}}, Code: 404},
			"0a03 1201 31" + "1207 4661696c757265" + "2208 4e6f74466f756e64" + "2a05 2203 1a01 66" + "309403"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hex.EncodeToString(mustMarshalProto(t, tc.in))
			if want := strings.ReplaceAll(tc.want, " ", ""); got != want {
				t.Errorf("got %s\nwant %s", got, want)
			}
		})
	}
}

// sink has a field of every kind the codec knows.
type sink struct {
	B     bool                   `protobuf:"varint,1,opt,name=b"`
	I8    int8                   `protobuf:"varint,2,opt,name=i8"`
	I16   int16                  `protobuf:"varint,3,opt,name=i16"`
	I32   int32                  `protobuf:"varint,4,opt,name=i32"`
	I64   int64                  `protobuf:"varint,5,opt,name=i64"`
	I     int                    `protobuf:"varint,6,opt,name=i"`
	U8    uint8                  `protobuf:"varint,7,opt,name=u8"`
	U16   uint16                 `protobuf:"varint,8,opt,name=u16"`
	U32   uint32                 `protobuf:"varint,9,opt,name=u32"`
	U64   uint64                 `protobuf:"varint,10,opt,name=u64"`
	U     uint                   `protobuf:"varint,11,opt,name=u"`
	S32   int32                  `protobuf:"zigzag32,12,opt,name=s32"`
	S64   int64                  `protobuf:"zigzag64,13,opt,name=s64"`
	F32   uint32                 `protobuf:"fixed32,14,opt,name=f32"`
	SF32  int32                  `protobuf:"fixed32,15,opt,name=sf32"`
	F64   uint64                 `protobuf:"fixed64,16,opt,name=f64"`
	SF64  int64                  `protobuf:"fixed64,17,opt,name=sf64"`
	Fl    float32                `protobuf:"fixed32,18,opt,name=fl"`
	Db    float64                `protobuf:"fixed64,19,opt,name=db"`
	Str   string                 `protobuf:"bytes,20,opt,name=str"`
	Byt   []byte                 `protobuf:"bytes,21,opt,name=byt"`
	Named namedString            `protobuf:"bytes,22,opt,name=named,casttype=namedString"`
	PI    *int64                 `protobuf:"varint,23,opt,name=pi"`
	PS    *string                `protobuf:"bytes,24,opt,name=ps"`
	PB    *bool                  `protobuf:"varint,25,opt,name=pb"`
	PT    *kapi.Time             `protobuf:"bytes,26,opt,name=pt"`
	T     kapi.Time              `protobuf:"bytes,27,opt,name=t"`
	RI    []int32                `protobuf:"varint,28,rep,name=ri"`
	RP    []int64                `protobuf:"varint,29,rep,packed,name=rp"`
	RZ    []int32                `protobuf:"zigzag32,30,rep,packed,name=rz"`
	RF    []float64              `protobuf:"fixed64,31,rep,name=rf"`
	RS    []string               `protobuf:"bytes,32,rep,name=rs"`
	RB    [][]byte               `protobuf:"bytes,33,rep,name=rb"`
	RM    []sinkChild            `protobuf:"bytes,34,rep,name=rm"`
	RPM   []*sinkChild           `protobuf:"bytes,35,rep,name=rpm"`
	MII   map[int32]int64        `protobuf:"bytes,36,rep,name=mii" protobuf_key:"varint,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	MSB   map[string][]byte      `protobuf:"bytes,37,rep,name=msb"`
	MSM   map[string]sinkChild   `protobuf:"bytes,38,rep,name=msm"`
	MSP   map[string]*sinkChild  `protobuf:"bytes,39,rep,name=msp"`
	MBS   map[bool]string        `protobuf:"bytes,40,rep,name=mbs"`
	MZ    map[int64]int32        `protobuf:"bytes,41,rep,name=mz" protobuf_key:"zigzag64,1,opt,name=key" protobuf_val:"fixed32,2,opt,name=value"`
	Child *sink                  `protobuf:"bytes,42,opt,name=child"`
	Kids  []sink                 `protobuf:"bytes,43,rep,name=kids"`
	TS    *timestamppb.Timestamp `protobuf:"bytes,44,opt,name=ts"`
	RU    []uint8x               `protobuf:"varint,45,rep,packed,name=ru"`
	MST   map[string]kapi.Time   `protobuf:"bytes,46,rep,name=mst"`
	RT    []kapi.Time            `protobuf:"bytes,47,rep,name=rt"`
	RSF   []int32                `protobuf:"fixed32,48,rep,name=rsf"`
	Big   int32                  `protobuf:"varint,5000,opt,name=big"`

	Hidden  string `json:"-"`
	Skipped string `json:"skipped" protobuf:"-"`
	//lint:ignore U1000 unexported on purpose: the codec must skip it
	private string
}

type namedString string

type uint8x uint8

type sinkChild struct {
	Name  string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value *int32 `json:"value" protobuf:"varint,2,opt,name=value"`
}

func fullSink() *sink {
	s := &sink{
		B: true, I8: -8, I16: -16, I32: math.MinInt32, I64: math.MinInt64, I: -1,
		U8: 255, U16: 65535, U32: math.MaxUint32, U64: math.MaxUint64, U: 1,
		S32: -32, S64: math.MinInt64, F32: 0xdeadbeef, SF32: -2, F64: 1 << 63, SF64: -3,
		Fl: float32(math.Inf(-1)), Db: math.Pi, Str: "ünïcode ✓", Byt: []byte{0, 1, 2}, Named: "named",
		PI: ptr(int64(0)), PS: ptr(""), PB: ptr(false), PT: ptr(kapi.Time{}), T: unixTime(1),
		RI: []int32{1, -1, 0}, RP: []int64{300, -300, 0}, RZ: []int32{-1, 1, math.MinInt32},
		RF: []float64{0.5, -0}, RS: []string{"a", "", "c"}, RB: [][]byte{{}, {9}},
		RM:  []sinkChild{{Name: "x", Value: ptr(int32(1))}, {}},
		RPM: []*sinkChild{{Name: "p"}, {}},
		MII: map[int32]int64{-1: 1, 0: 0, 7: -7},
		MSB: map[string][]byte{"nil": nil, "empty": {}, "b": {1}},
		MSM: map[string]sinkChild{"a": {Name: "a"}, "": {}},
		MSP: map[string]*sinkChild{"nil": nil, "p": {Value: ptr(int32(-1))}},
		MBS: map[bool]string{true: "yes", false: "no"},
		MZ:  map[int64]int32{-5: -5, 5: 5},
		Child: &sink{
			Str:   "child",
			Child: &sink{Str: "grandchild"},
		},
		Kids: []sink{{I32: 1}, {Kids: []sink{{I32: 2}}}},
		TS:   &timestamppb.Timestamp{Seconds: 5, Nanos: 6},
		RU:   []uint8x{0, 200, 255},
		MST:  map[string]kapi.Time{"zero": {}, "one": unixTime(1)},
		RT:   []kapi.Time{{}, unixTime(-62135596799)},
		RSF:  []int32{-1, 1},
		Big:  5000,
	}
	return s
}

// equalSinks compares sinks, their proto.Message fields with proto.Equal.
func equalSinks(t *testing.T, got, want *sink) {
	t.Helper()
	if !proto.Equal(got.TS, want.TS) {
		t.Errorf("TS: got %v, want %v", got.TS, want.TS)
	}
	g, w := *got, *want
	g.TS, w.TS = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("round trip:\n got %+v\nwant %+v", g, w)
	}
}

func TestProtoRoundTripEveryKind(t *testing.T) {
	in := fullSink()
	data := mustMarshalProto(t, in)
	var out sink
	if err := unmarshalProto(data, &out); err != nil {
		t.Fatalf("unmarshalProto: %v", err)
	}
	want := *in
	want.Skipped, want.Hidden = "", ""
	// A nil pointer value in a map travels as an entry without value: nil
	// again; a nil []byte value is read as empty, as gogo reads it.
	want.MSB = map[string][]byte{"nil": {}, "empty": {}, "b": {1}}
	equalSinks(t, &out, &want)
}

func TestProtoRepeatedEncodings(t *testing.T) {
	// Numeric repeated fields decode packed and unpacked alike.
	var b []byte
	b = protowire.AppendTag(b, 28, protowire.BytesType) // ri, unpacked by its tag, sent packed
	b = protowire.AppendBytes(b, []byte{1, 2, 0x7f})
	b = protowire.AppendTag(b, 29, protowire.VarintType) // rp, packed by its tag, sent unpacked
	b = protowire.AppendVarint(b, 9)
	b = protowire.AppendTag(b, 28, protowire.VarintType)
	b = protowire.AppendVarint(b, 4)
	var s sink
	if err := unmarshalProto(b, &s); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.RI, []int32{1, 2, 127, 4}) || !reflect.DeepEqual(s.RP, []int64{9}) {
		t.Errorf("RI = %v, RP = %v", s.RI, s.RP)
	}
	// Written as the tag says.
	got := hex.EncodeToString(mustMarshalProto(t, &sinkChildren{RI: []int32{1, 2}, RP: []int64{1, 300}}))
	if want := "0801" + "0802" + "1203" + "01ac02"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

type sinkChildren struct {
	RI []int32 `protobuf:"varint,1,rep,name=ri"`
	RP []int64 `protobuf:"varint,2,rep,packed,name=rp"`
}

func TestProtoMergeSemantics(t *testing.T) {
	// A message field twice merges; a scalar's last value wins; repeated
	// fields append; a map's last entry for a key wins.
	first := mustMarshalProto(t, &testWidget{
		ObjectMeta: kapi.ObjectMeta{Name: "a", Labels: map[string]string{"k": "1", "x": "x"}},
		Spec:       testWidgetSpec{Color: "Red", Ports: []testWidgetPort{{Name: "p1"}}},
	})
	second := mustMarshalProto(t, &testWidget{
		ObjectMeta: kapi.ObjectMeta{Namespace: "ns", Labels: map[string]string{"k": "2"}},
		Spec:       testWidgetSpec{Size: 3, Ports: []testWidgetPort{{Name: "p2"}}},
	})
	var w testWidget
	if err := unmarshalProto(append(first, second...), &w); err != nil {
		t.Fatal(err)
	}
	want := testWidget{
		ObjectMeta: kapi.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"k": "2", "x": "x"}},
		Spec:       testWidgetSpec{Color: "Red", Size: 3, Ports: []testWidgetPort{{Name: "p1"}, {Name: "p2"}}},
	}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("got %+v\nwant %+v", w, want)
	}
}

func TestProtoTime(t *testing.T) {
	type times struct {
		T kapi.Time `protobuf:"bytes,1,opt,name=t"`
	}
	for _, tc := range []struct {
		name string
		msg  string // hex of the Time message
		want kapi.Time
	}{
		{"empty is zero", "", kapi.Time{}},
		{"epoch is not zero", "0800", unixTime(0)},
		{"nanos are ignored, as metav1.Time does", "0805 10ff01", unixTime(5)},
		{"seconds only", "0805", unixTime(5)},
		{"unknown fields skipped", "0805 1801 2a00", unixTime(5)},
		{"the zero instant is the zero time", "088092b8c398feffffff01", kapi.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := hex.DecodeString(strings.ReplaceAll(tc.msg, " ", ""))
			data := protowire.AppendBytes([]byte{0x0a}, msg)
			var got times
			if err := unmarshalProto(data, &got); err != nil {
				t.Fatal(err)
			}
			if got.T != tc.want {
				t.Errorf("got %#v, want %#v", got.T, tc.want)
			}
		})
	}
	// Sub-second precision does not travel, as in JSON.
	b := mustMarshalProto(t, &times{T: kapi.Time{Time: time.Unix(5, 999_999_999)}})
	if want := "0a04" + "0805" + "1000"; hex.EncodeToString(b) != want {
		t.Errorf("got %x, want %s", b, want)
	}
}

func TestProtoJSONRawMessage(t *testing.T) {
	type withRaw struct {
		Extra json.RawMessage `json:"extra,omitempty" protobuf:"bytes,1,opt,name=extra"`
	}
	in := &withRaw{Extra: json.RawMessage(`{"a":1}`)}
	b := mustMarshalProto(t, in)
	if want := append([]byte{0x0a, 7}, `{"a":1}`...); !bytes.Equal(b, want) {
		t.Errorf("got %q, want %q", b, want)
	}
	var out withRaw
	if err := unmarshalProto(b, &out); err != nil || !reflect.DeepEqual(&out, in) {
		t.Errorf("got %+v, %v", out, err)
	}
}

func TestProtoEmbeddedWithoutTag(t *testing.T) {
	// Promoted fields join the message, each with its own number.
	type common struct {
		Owner string `json:"owner" protobuf:"bytes,7,opt,name=owner"`
	}
	type withCommon struct {
		common
		Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	}
	in := &withCommon{common: common{Owner: "o"}, Name: "n"}
	b := mustMarshalProto(t, in)
	if got, want := hex.EncodeToString(b), "0a016e"+"3a016f"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var out withCommon
	if err := unmarshalProto(b, &out); err != nil || *in != out {
		t.Errorf("got %+v, %v", out, err)
	}
}

func TestProtoMessageTypes(t *testing.T) {
	in := timestamppb.New(time.Unix(10, 20))
	b := mustMarshalProto(t, in)
	want, _ := proto.Marshal(in)
	if !bytes.Equal(b, want) {
		t.Errorf("got %x, want %x", b, want)
	}
	out := &timestamppb.Timestamp{Seconds: 99}
	if err := unmarshalProto(b, out); err != nil || !proto.Equal(in, out) {
		t.Errorf("got %v, %v", out, err)
	}
	if err := protoSupported(reflect.TypeFor[timestamppb.Timestamp]()); err != nil {
		t.Error(err)
	}
}

func TestProtoSupported(t *testing.T) {
	type badPort struct {
		Name string `json:"name"`
		Port int32  `json:"port" protobuf:"varint,2,opt,name=port"`
	}
	type badSpec struct {
		Ports []badPort `json:"ports" protobuf:"bytes,1,rep,name=ports"`
	}
	type bad struct {
		kapi.TypeMeta `json:",inline"`
		Spec          badSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	}
	type untaggedMap struct {
		M map[string]badPort `json:"m" protobuf:"bytes,1,rep,name=m"`
	}
	type ignored struct {
		Secret string `json:"-"`
		//lint:ignore U1000 unexported on purpose: the codec must skip it
		internal int
		Tagged   string `json:"tagged" protobuf:"bytes,1,opt,name=tagged"`
	}
	type recursive struct {
		Children []recursive `json:"children" protobuf:"bytes,1,rep,name=children"`
		Parent   *recursive  `json:"parent" protobuf:"bytes,2,opt,name=parent"`
	}
	type untaggedMeta struct {
		kapi.ListMeta `json:"metadata"`
	}
	type embeddedPointer struct {
		*sinkChild
	}
	type anyField struct {
		X any `json:"x" protobuf:"bytes,1,opt,name=x"`
	}
	type goTime struct {
		At time.Time `json:"at" protobuf:"bytes,1,opt,name=at"`
	}
	type duplicate struct {
		A string `json:"a" protobuf:"bytes,1,opt,name=a"`
		B string `json:"b" protobuf:"bytes,1,opt,name=b"`
	}
	type floatKeys struct {
		M map[float64]string `json:"m" protobuf:"bytes,1,rep,name=m"`
	}
	type nested struct {
		M [][]string `json:"m" protobuf:"bytes,1,rep,name=m"`
	}
	type valueMessage struct {
		TS timestamppb.Timestamp `json:"ts" protobuf:"bytes,1,opt,name=ts"`
	}
	type zigzagUnsigned struct {
		U uint32 `json:"u" protobuf:"zigzag32,1,opt,name=u"`
	}
	type fixed32Of64 struct {
		I int64 `json:"i" protobuf:"fixed32,1,opt,name=i"`
	}
	type noNumber struct {
		I int64 `json:"i" protobuf:"varint,opt,name=i"`
	}
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want string // a substring of the error; "" for supported
	}{
		{"widget", reflect.TypeFor[testWidget](), ""},
		{"status", reflect.TypeFor[kapi.Status](), ""},
		{"object meta", reflect.TypeFor[kapi.ObjectMeta](), ""},
		{"list meta", reflect.TypeFor[kapi.ListMeta](), ""},
		{"json:- and unexported fields are ignored", reflect.TypeFor[ignored](), ""},
		{"recursive", reflect.TypeFor[recursive](), ""},
		{"proto.Message", reflect.TypeFor[timestamppb.Timestamp](), ""},
		{"untagged field, by its JSON path", reflect.TypeFor[bad](), "spec.ports[].name"},
		{"untagged in a map value", reflect.TypeFor[untaggedMap](), "m[].name"},
		{"untagged named embedded struct", reflect.TypeFor[untaggedMeta](), "protobuf: metadata: field ListMeta"},
		{"untagged embedded pointer", reflect.TypeFor[embeddedPointer](), "sinkChild"},
		{"interface", reflect.TypeFor[anyField](), "x: interface {} cannot travel"},
		{"time.Time", reflect.TypeFor[goTime](), "at: time.Time encodes itself to JSON"},
		{"duplicate number", reflect.TypeFor[duplicate](), "field number 1"},
		{"float map key", reflect.TypeFor[floatKeys](), "map key"},
		{"nested slices", reflect.TypeFor[nested](), "cannot be repeated"},
		{"proto.Message by value", reflect.TypeFor[valueMessage](), "through a pointer"},
		{"zigzag unsigned", reflect.TypeFor[zigzagUnsigned](), "zigzag32"},
		{"fixed32 of int64", reflect.TypeFor[fixed32Of64](), "fixed32"},
		{"tag without number", reflect.TypeFor[noNumber](), "no valid field number"},
		{"not a struct", reflect.TypeFor[*testWidget](), "not a struct"},
		{"every kind", reflect.TypeFor[sink](), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protoSupported(tc.typ)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("protoSupported(%v) = %v", tc.typ, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("protoSupported(%v) = %v, want an error with %q", tc.typ, err, tc.want)
			}
			// Asking again gives the cached answer.
			if again := protoSupported(tc.typ); (again == nil) != (err == nil) {
				t.Errorf("second call: %v, first: %v", again, err)
			}
		})
	}
}

// deepSink nests n sinks through their child field, the last with a string,
// so that the innermost non-empty message is at depth n.
func deepSink(n int) []byte {
	b := []byte{0xa2, 0x01, 1, 'x'} // str: "x"
	for range n {
		b = protowire.AppendBytes(protowire.AppendTag(nil, 42, protowire.BytesType), b)
	}
	return b
}

func TestProtoHostileInput(t *testing.T) {
	valid := mustMarshalProto(t, fullWidget())
	hexBytes := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		into any
		want string // a substring of the error
		is   error
	}{
		{"truncated tag", hexBytes("0a00 80"), &testWidget{}, "at byte 2", io.ErrUnexpectedEOF},
		{"truncated string", hexBytes("0a05 0a0561"), &testWidget{}, "metadata at byte 1", io.ErrUnexpectedEOF},
		{"truncated whole", valid[:len(valid)-3], &testWidget{}, "status", io.ErrUnexpectedEOF},
		{"length beyond the buffer", hexBytes("0aff ffff ff0f"), &testWidget{}, "metadata at byte 1", io.ErrUnexpectedEOF},
		{"length beyond the enclosing message", hexBytes("0a02 0a05 6162636465"), &testWidget{}, "metadata.name at byte 3", io.ErrUnexpectedEOF},
		{"huge length", hexBytes("0a ffffffffffffffffff01"), &testWidget{}, "metadata", io.ErrUnexpectedEOF},
		{"varint too long", hexBytes("12 04 18 ffffffffffffffffffff01"), &testWidget{}, "", nil},
		{"wrong wire type for a message", hexBytes("0801"), &testWidget{}, "metadata at byte 1: wrong wire type 0", nil},
		{"wrong wire type for a scalar", hexBytes("12 02 1a00"), &testWidget{}, "spec.size at byte 3: wrong wire type 2", nil},
		{"wrong wire type for a time", hexBytes("0a 04 42 02 0a00"), &testWidget{}, "metadata.creationTimestamp.seconds", nil},
		{"wrong wire type in a repeated element", hexBytes("12 02 2001"), &testWidget{}, "spec.ports at byte 3", nil},
		{"wrong wire type in a map entry", hexBytes("0a 04 5a 02 0801"), &testWidget{}, "metadata.labels[] at byte 5", nil},
		{"field number 0", hexBytes("0000"), &testWidget{}, "at byte 0", nil},
		{"end group for a known field", hexBytes("0c"), &testWidget{}, "metadata at byte 1: wrong wire type 4", nil},
		{"end group for an unknown field", hexBytes("9c06"), &testWidget{}, "at byte 2", nil},
		{"unterminated group", hexBytes("0b 0801"), &testWidget{}, "", nil},
		{"invalid UTF-8", hexBytes("0a 03 0a01ff"), &testWidget{}, "metadata.name at byte 4: string is not valid UTF-8", nil},
		{"invalid UTF-8 in a map key", hexBytes("0a 05 5a 03 0a01ff"), &testWidget{}, "metadata.labels[] at byte 6", nil},
		{"invalid UTF-8 in a map value", hexBytes("0a 08 5a 06 0a0161 1201ff"), &testWidget{}, "metadata.labels[a] at byte 9", nil},
		{"invalid UTF-8 in an element", hexBytes("12 0a 2204 0a026869 2202 0a01ff"), &testWidget{}, "spec.ports[1].name at byte 11", nil},
		{"invalid UTF-8 in a generic map", hexBytes("b202 03 0a01ff"), &sink{}, "MSM[] at byte 5", nil},
		{"packed run cut short", hexBytes("e201 02 01ff"), &sink{}, "RI[1]", io.ErrUnexpectedEOF},
		{"packed fixed run cut short", hexBytes("fa01 03 000000"), &sink{}, "RF[0]", io.ErrUnexpectedEOF},
		{"too deep", deepSink(maxProtoDepth + 1), &sink{}, "nested deeper than 100", nil},
		{"too deep in a map", deepMap(maxProtoDepth - 1), &sink{}, "nested deeper than 100", nil},
		{"proto.Message field", hexBytes("e202 02 0801 e202 01 08"), &sink{}, "TS at byte", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := unmarshalProto(tc.data, tc.into)
			if err == nil {
				t.Fatalf("unmarshalProto(%x) succeeded", tc.data)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}

	// Nesting up to the limit is fine, and empty messages beyond it.
	if err := unmarshalProto(deepSink(maxProtoDepth), &sink{}); err != nil {
		t.Errorf("%d levels: %v", maxProtoDepth, err)
	}
	if err := unmarshalProto(deepMap(maxProtoDepth-2), &sink{}); err != nil {
		t.Errorf("a map entry at %d: %v", maxProtoDepth-1, err)
	}
	empty := protowire.AppendBytes([]byte{0xd2, 0x02}, nil)
	for range maxProtoDepth {
		empty = protowire.AppendBytes([]byte{0xd2, 0x02}, empty)
	}
	if err := unmarshalProto(empty, &sink{}); err != nil {
		t.Errorf("an empty message at %d: %v", maxProtoDepth+1, err)
	}
	// Every prefix of a valid message decodes or fails, without panicking.
	for n := range len(valid) {
		_ = unmarshalProto(valid[:n], &testWidget{})
	}
}

// deepMap nests n sinks, the last with an MSM entry whose value is not
// empty: the entry is at depth n+1, its value at n+2.
func deepMap(n int) []byte {
	value := protowire.AppendBytes([]byte{0x12}, []byte{0x0a, 1, 'x'})
	b := protowire.AppendBytes([]byte{0xb2, 0x02}, value)
	for range n {
		b = protowire.AppendBytes([]byte{0xd2, 0x02}, b)
	}
	return b
}

func TestProtoUnknownFieldsSkipped(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 99, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 98, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	b = protowire.AppendTag(b, 98, protowire.EndGroupType)
	b = protowire.AppendTag(b, 97, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, 96, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("junk"))
	b = protowire.AppendTag(b, 4, protowire.BytesType) // metadata.selfLink: Kubernetes has it, kapi not
	b = protowire.AppendString(b, "/api/v1/x")
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "name")
	data := protowire.AppendBytes(protowire.AppendTag(b[:0:0], 1, protowire.BytesType), b)
	var w testWidget
	if err := unmarshalProto(data, &w); err != nil {
		t.Fatal(err)
	}
	if w.Name != "name" {
		t.Errorf("name = %q", w.Name)
	}
}

func TestProtoMarshalErrors(t *testing.T) {
	nest := func(inner *sink, n int) *sink {
		for range n {
			inner = &sink{Child: inner}
		}
		return inner
	}
	if _, err := marshalProto(nil, nest(&sink{Str: "x"}, maxProtoDepth+1)); err == nil || !strings.Contains(err.Error(), "Child.Child") {
		t.Errorf("marshalling %d levels: %v", maxProtoDepth+1, err)
	}
	// What marshalProto writes, unmarshalProto reads.
	for _, deep := range []*sink{nest(&sink{Str: "x"}, maxProtoDepth), nest(&sink{}, maxProtoDepth+1)} {
		b, err := marshalProto(nil, deep)
		if err != nil {
			t.Errorf("marshalling: %v", err)
		}
		if err := unmarshalProto(b, &sink{}); err != nil {
			t.Errorf("unmarshalling what was marshalled: %v", err)
		}
	}
	if _, err := marshalProto(nil, (*testWidget)(nil)); err == nil {
		t.Error("marshalling nil succeeded")
	}
	if _, err := marshalProto(nil, 5); err == nil {
		t.Error("marshalling an int succeeded")
	}
	if err := unmarshalProto(nil, testWidget{}); err == nil {
		t.Error("unmarshalling into a struct value succeeded")
	}
	if err := unmarshalProto([]byte{8, 1}, (*timestamppb.Timestamp)(nil)); err == nil {
		t.Error("unmarshalling into a nil proto.Message succeeded")
	}
	type bad struct{ X string }
	if _, err := marshalProto(nil, &bad{}); err == nil || !strings.Contains(err.Error(), "X") {
		t.Errorf("marshalling an unsupported type: %v", err)
	}
	// A value is encoded like a pointer to it.
	w := fullWidget()
	if b, err := marshalProto([]byte("prefix"), *w); err != nil || !bytes.Equal(b[6:], mustMarshalProto(t, w)) || string(b[:6]) != "prefix" {
		t.Errorf("marshalling a value: %v", err)
	}
}

func TestProtoNilElements(t *testing.T) {
	// gogo would panic on a nil element; kapi writes the zero value.
	in := &sink{RPM: []*sinkChild{nil, {Name: "x"}}}
	var out sink
	if err := unmarshalProto(mustMarshalProto(t, in), &out); err != nil {
		t.Fatal(err)
	}
	if want := []*sinkChild{{}, {Name: "x"}}; !reflect.DeepEqual(out.RPM, want) {
		t.Errorf("got %+v", out.RPM)
	}
}

func TestProtoConcurrentPlans(t *testing.T) {
	type fresh struct {
		A []testWidget `json:"a" protobuf:"bytes,1,rep,name=a"`
	}
	done := make(chan error)
	for range 8 {
		go func() {
			_, err := marshalProto(nil, &fresh{A: []testWidget{*fullWidget()}})
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkProtoWidget compares protobuf and encoding/json on the same
// Widget, with metadata as a server keeps it (labels, annotations, an owner,
// managed fields).
func BenchmarkProtoWidget(b *testing.B) {
	w := fullWidget()
	w.ManagedFields[1].FieldsV1.Raw = []byte(`{"f:status":{"f:replicas":{}}}`) // JSON needs JSON
	pb := mustMarshalProto(b, w)
	js, err := json.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal/protobuf", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pb)))
		var buf []byte
		for b.Loop() {
			buf, _ = marshalProto(buf[:0], w)
		}
	})
	b.Run("marshal/protobuf-new-buffer", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pb)))
		for b.Loop() {
			_, _ = marshalProto(nil, w)
		}
	})
	b.Run("marshal/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			_, _ = json.Marshal(w)
		}
	})
	b.Run("unmarshal/protobuf", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pb)))
		for b.Loop() {
			var out testWidget
			if err := unmarshalProto(pb, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			var out testWidget
			if err := json.Unmarshal(js, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
