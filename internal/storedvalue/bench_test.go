package storedvalue_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/storedvalue"
)

// benchWidget is a widget as the load harness's apply stores it: two
// managers, each with a set of the object's fields.
const benchWidget = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w2","namespace":"default","uid":"3401c667-b1c0-434a-913f-06e3e675bf0e","generation":1,"creationTimestamp":"2026-11-25T16:53:02Z","labels":{"app":"loadtest","shard":"2","team":"platform","tier":"backend"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}},{"manager":"loadtest","operation":"Apply","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{"f:color":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{"f:app":{},"f:tier":{}},"f:size":{}}}}]},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}},"status":{}}`

// BenchmarkStoredValue is what every write spends on its stored value:
// the object encoded without managedFields, then the value with them.
func BenchmarkStoredValue(b *testing.B) {
	w := new(widgetapi.Widget)
	if err := json.Unmarshal([]byte(benchWidget), w); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := storedvalue.Unmanaged(w, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.WithManaged(w, true, true); err != nil {
			b.Fatal(err)
		}
		v.Done()
	}
}
