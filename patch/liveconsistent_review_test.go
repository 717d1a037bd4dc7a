package patch

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
)

type staleSpec struct {
	Color string `json:"color,omitempty"`
}

type staleWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            staleSpec `json:"spec"`
}

type staleFloatSpec struct {
	Color string  `json:"color,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
}

type staleFloatWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            staleFloatSpec `json:"spec"`
}

// TestApplyLiveReadOneWay: a live object stored with a field its type no
// longer declares (a field removed in an upgrade of the server) is read by
// ApplyMerged from its Go value (ApplyOptions.Live) when typedTree can
// build that, which knows nothing of the field, and from its JSON when it
// cannot, which refuses it (ErrNotApplicable: "field not declared in
// schema"; 422 from the server). The same apply to the same stored object
// thus succeeds or fails by whether some unrelated field of the type is a
// float (or a Quantity, a []byte, ...). At 06d520c both failed. It fails
// here: the widget without a float is applied, the one with a float is
// refused.
func TestApplyLiveReadOneWay(t *testing.T) {
	config, err := ParseConfiguration([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Blue"}}`))
	if err != nil {
		t.Fatal(err)
	}
	outcome := func(typ reflect.Type, live string) error {
		s, err := SchemaOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		obj := reflect.New(typ).Interface()
		if err := json.Unmarshal([]byte(live), obj); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.ApplyMerged([]byte(live), config, nil, ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Force: true, Live: obj})
		return err
	}
	plain := outcome(reflect.TypeFor[staleWidget](),
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red","legacy":"x"}}`)
	float := outcome(reflect.TypeFor[staleFloatWidget](),
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red","legacy":"x","ratio":0.5}}`)
	if (plain == nil) != (float == nil) {
		t.Errorf("one stored object, two answers: without a float %v; with a float %v", plain, float)
	}
}
