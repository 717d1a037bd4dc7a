package gc_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/gc"
)

// What a DELETE's options make of an object's finalizers: the propagation
// policy becomes a finalizer the collector acts on.
func ExampleDeletionFinalizers() {
	foreground, orphan := "Foreground", true
	fmt.Println(gc.DeletionFinalizers([]string{"example.com/hold"}, nil, &foreground))
	fmt.Println(gc.DeletionFinalizers([]string{"foregroundDeletion"}, &orphan, nil))
	fmt.Println(gc.DeletionFinalizers([]string{"orphan"}, nil, nil))
	// Output:
	// [example.com/hold foregroundDeletion] true
	// [orphan] true
	// [orphan] false
}
