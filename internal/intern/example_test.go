package intern_test

import (
	"fmt"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/intern"
)

// Two decoded objects with the same labels come to share one map.
func ExampleTable_Shrink() {
	var table intern.Table
	a := &kapi.ObjectMeta{Labels: map[string]string{"app": "shop"}}
	b := &kapi.ObjectMeta{Labels: map[string]string{"app": "shop"}}
	pa := &kapi.PartialObjectMetadata{ObjectMeta: *a}
	pb := &kapi.PartialObjectMetadata{ObjectMeta: *b}
	table.Shrink(pa, nil)
	table.Shrink(pb, nil)
	pa.Labels["x"] = "y" // never done to a cached object: it shows they share
	fmt.Println(pb.Labels["x"])
	// Output: y
}
