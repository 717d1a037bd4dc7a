package jsonskip_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// Passing over a member's value to reach the next member.
func ExampleValue() {
	doc := []byte(`{"spec":{"ports":[80,443]},"status":{}}`)
	i, _ := jsonskip.Key(doc, 1, jsonskip.AnyText) // after "spec":
	end, ok := jsonskip.Value(doc, i, 1, jsonskip.AnyText)
	fmt.Println(string(doc[i:end]), ok)
	// Output: {"ports":[80,443]} true
}
