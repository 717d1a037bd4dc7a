package patch_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/patch"
)

func ExampleApply() {
	widget := []byte(`{"spec":{"color":"red","replicas":1}}`)

	merged, _ := patch.Apply(patch.MergePatch, widget, []byte(`{"spec":{"color":"blue"}}`))
	fmt.Println(string(merged))

	_, err := patch.Apply(patch.JSONPatch, widget, []byte(`[{"op":"test","path":"/spec/color","value":"green"}]`))
	fmt.Println(err != nil)
	// Output:
	// {"spec":{"color":"blue","replicas":1}}
	// true
}
