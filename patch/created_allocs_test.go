package patch

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// A create's managedFields entry, of a shape seen before, is two
// allocations: the entry with its time and fields, and the fields' bytes.
func TestCreatedEntryAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	doc := createdDocs(1)[0]
	opts := UpdateOptions{Manager: "kubectl", APIVersion: "example.com/v1", Now: kapi.Now(), Ignore: []string{"status"}}
	var out []kapi.ManagedFieldsEntry
	allocs := testing.AllocsPerRun(100, func() {
		if out, err = s.Update(nil, doc, nil, opts); err != nil || len(out) != 1 {
			t.Fatalf("Update = %v, %v", out, err)
		}
	})
	if e := out[0]; e.Manager != "kubectl" || e.Operation != OperationUpdate || e.Time == nil || !e.Time.Time.Equal(opts.Now.Time) || e.FieldsV1 == nil || len(e.FieldsV1.Raw) == 0 {
		t.Errorf("entry %+v", e)
	}
	if allocs > 2 {
		t.Errorf("a create's entry allocates %v times, want 2", allocs)
	}
}
