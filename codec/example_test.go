package codec_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/codec"
)

func ExampleNegotiate() {
	// What kubectl get sends: Tables first, then plain JSON.
	f, _ := codec.Negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	fmt.Println(f.MediaType)

	_, err := codec.Negotiate("application/x-unknown")
	fmt.Println(err)
	// Output:
	// application/json
	// codec: no acceptable media type: only the following media types are supported: application/json
}
