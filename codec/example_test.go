package codec_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

func ExampleNegotiate() {
	// A get can be answered with the object, a Table or its metadata; this
	// resource's type has a protobuf mapping.
	offer := codec.Offer{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Protobuf: true}

	// What kubectl get sends: Tables first, then plain JSON.
	t, _ := codec.Negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", offer)
	fmt.Println(t.View, t.Version, t.ContentType())

	// What the typed clientset sends.
	t, _ = codec.Negotiate("application/vnd.kubernetes.protobuf, */*", offer)
	fmt.Println(t.ContentType())

	_, err := codec.Negotiate("application/x-unknown", offer)
	fmt.Println(err)
	// Output:
	// Table v1 application/json
	// application/vnd.kubernetes.protobuf
	// codec: no acceptable media type: only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor
}

func ExampleFormat_ListBody() {
	// Elements as a server caches them, one per object.
	elements := [][]byte{
		[]byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}}`),
		[]byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"b"}}`),
	}
	body, err := codec.JSON().ListBody(kapi.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"},
		kapi.ListMeta{ResourceVersion: "7"}, elements)
	if err != nil {
		panic(err)
	}
	// The length goes in Content-Length before a byte is written; WriteTo
	// then writes the list piece by piece (to a buffered writer, in a server).
	fmt.Println(body.Len())
	_, _ = body.WriteTo(os.Stdout)
	// Output:
	// 240
	// {"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"7"},"items":[{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}},{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"b"}}]}
}

// document decodes itself from any members, as a custom resource does.
type document struct{ members map[string]any }

func (d *document) UnmarshalJSON(data []byte) error { return json.Unmarshal(data, &d.members) }
func (*document) AnyJSONFields()                    {}

// A type that decodes a custom resource's document itself has its
// repeated fields found as a typed object's are, once it says it takes
// any members.
func ExampleAnyFields() {
	report, _, _ := codec.CheckJSONFields([]byte(`{"kind":"Widget","spec":{"name":"a","name":"b"}}`), reflect.TypeFor[document]())
	fmt.Println(report.Duplicates)
	// Output: [spec.name]
}
