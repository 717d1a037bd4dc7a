package codec_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/codec"
)

func ExampleNegotiate() {
	// A get can be answered with the object, a Table or its metadata; this
	// resource's type has a protobuf mapping.
	offer := codec.Offer{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Protobuf: true}

	// What kubectl get sends: Tables first, then plain JSON.
	t, _ := codec.Negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", offer)
	fmt.Println(t.ContentType())

	// What the typed clientset sends.
	t, _ = codec.Negotiate("application/vnd.kubernetes.protobuf, */*", offer)
	fmt.Println(t.ContentType())

	_, err := codec.Negotiate("application/x-unknown", offer)
	fmt.Println(err)
	// Output:
	// application/json;as=Table;g=meta.k8s.io;v=v1
	// application/vnd.kubernetes.protobuf
	// codec: no acceptable media type: only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor
}
