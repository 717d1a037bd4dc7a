package jsonwrite_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// benchWidget is a widget as the load harness stores it.
const benchWidget = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w2","namespace":"default","uid":"3401c667-b1c0-434a-913f-06e3e675bf0e","generation":1,"creationTimestamp":"2026-11-25T16:53:02Z","labels":{"app":"loadtest","shard":"2","team":"platform","tier":"backend"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}}]},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}},"status":{}}`

// BenchmarkWidget writes the widget with and without its managedFields,
// by json.Marshal and by an Encoder (Marshal: a new slice, as stored).
func BenchmarkWidget(b *testing.B) {
	enc := jsonwrite.New(reflect.TypeFor[widgetapi.Widget]())
	for _, managed := range []bool{false, true} {
		w := new(widgetapi.Widget)
		if err := json.Unmarshal([]byte(benchWidget), w); err != nil {
			b.Fatal(err)
		}
		name := "managedFields=with"
		if !managed {
			w.ManagedFields, name = nil, "managedFields=without"
		}
		want, _ := json.Marshal(w)
		v := reflect.ValueOf(w).Elem()
		if got, ok := enc.Marshal(v); !ok || !bytes.Equal(got, want) {
			b.Fatalf("Encoder wrote %s (%v), want %s", got, ok, want)
		}
		b.Run(name+"/json.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(w); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/Encoder.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := enc.Marshal(v); !ok {
					b.Fatal("fell back")
				}
			}
		})
	}
}
