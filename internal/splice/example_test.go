package splice_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/internal/splice"
)

// An object's JSON element from its stored value and its revision.
func ExampleElement() {
	stored := []byte(`{"kind":"Widget","metadata":{"name":"w","namespace":"default","generation":1}}`)
	element, ok := splice.Element(nil, stored, "42")
	fmt.Println(string(element), ok)
	// Output: {"kind":"Widget","metadata":{"name":"w","namespace":"default","resourceVersion":"42","generation":1}} true
}
