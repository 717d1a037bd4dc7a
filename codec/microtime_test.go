package codec

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

type microTimes struct {
	T  kapi.MicroTime  `protobuf:"bytes,1,opt,name=t"`
	PT *kapi.MicroTime `protobuf:"bytes,2,opt,name=pt"`
}

// TestProtoMicroTime: a kapi.MicroTime travels as metav1.MicroTime does,
// Kubernetes' Timestamp message with seconds and nanos truncated to the
// microsecond, and reads back to the microsecond; a zero one is left out,
// or empty behind a pointer.
func TestProtoMicroTime(t *testing.T) {
	at := kapi.MicroTime{Time: time.Unix(5, 123456789)}
	b := mustMarshalProto(t, &microTimes{T: at, PT: &kapi.MicroTime{}})
	// 1: {seconds 5, nanos 123456000}; 2: empty.
	if got, want := hex.EncodeToString(b), "0a07"+"0805"+"108094ef3a"+"1200"; got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
	var back microTimes
	if err := unmarshalProto(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.T.Equal(time.Unix(5, 123456000)) || back.PT == nil || !back.PT.IsZero() {
		t.Errorf("decoded %v, %v; want 5.123456s and a zero time", back.T, back.PT)
	}
	// A Time's nanos do not travel, as metav1.Time's.
	var tb struct {
		T kapi.Time `protobuf:"bytes,1,opt,name=t"`
	}
	if err := unmarshalProto(b, &tb); err != nil || !tb.T.Equal(time.Unix(5, 0)) {
		t.Errorf("a MicroTime read as a Time: %v, %v; want 5s", tb.T, err)
	}
}

func TestMicroTimeJSON(t *testing.T) {
	at := kapi.NewMicroTime(time.Date(2026, 11, 25, 11, 0, 0, 123456789, time.UTC))
	b, err := at.MarshalJSON()
	if err != nil || string(b) != `"2026-11-25T11:00:00.123456Z"` {
		t.Errorf("MarshalJSON: %s, %v", b, err)
	}
	var back kapi.MicroTime
	for _, in := range []string{`"2026-11-25T11:00:00.123456Z"`, `"2026-11-25T12:00:00.123456789+01:00"`} {
		if err := back.UnmarshalJSON([]byte(in)); err != nil || !back.Equal(at.Time) {
			t.Errorf("UnmarshalJSON(%s): %v, %v; want %v", in, back, err, at)
		}
	}
	if err := back.UnmarshalJSON([]byte(`"10000-01-01T00:00:00Z"`)); err == nil {
		t.Error("UnmarshalJSON of year 10000: no error")
	}
}
