package lifecycle_test

import (
	"fmt"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/lifecycle"
)

// LastWrite is what the expiry of events measures an event's age from.
func ExampleLastWrite() {
	created := kapi.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	updated := kapi.NewTime(time.Date(2026, 11, 25, 11, 30, 0, 0, time.UTC))
	e := &builtin.Event{ObjectMeta: kapi.ObjectMeta{
		CreationTimestamp: created,
		ManagedFields:     []kapi.ManagedFieldsEntry{{Manager: "recorder", Operation: "Update", Time: &updated}},
	}}
	fmt.Println(lifecycle.LastWrite(e).UTC())
	// Output: 2026-11-25 11:30:00 +0000 UTC
}
