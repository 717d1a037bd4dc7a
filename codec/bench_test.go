package codec_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

// benchWidget is about 1 KiB of JSON, with the shapes real objects have.
type benchWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            benchSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status          benchStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type benchSpec struct {
	Color    string            `json:"color" protobuf:"bytes,1,opt,name=color"`
	Replicas *int32            `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	Ports    []benchPort       `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
	Selector map[string]string `json:"selector,omitempty" protobuf:"bytes,5,rep,name=selector"`
}

type benchPort struct {
	Name     string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Port     int32  `json:"port" protobuf:"varint,2,opt,name=port"`
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,3,opt,name=protocol"`
}

type benchStatus struct {
	Replicas   int32            `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Conditions []kapi.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
}

type benchWidgetList struct {
	kapi.TypeMeta `json:",inline"`
	kapi.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items         []benchWidget `json:"items" protobuf:"bytes,2,rep,name=items"`
}

func newBenchWidget(i int) *benchWidget {
	replicas := int32(3)
	created := kapi.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &benchWidget{
		TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"},
		ObjectMeta: kapi.ObjectMeta{
			Name: fmt.Sprintf("widget-%05d", i), Namespace: "default",
			UID:             "6f1c2a3e-0b7d-4c59-9a57-2f1e8d7c6b5a",
			ResourceVersion: strconv.Itoa(1000 + i), Generation: 2, CreationTimestamp: created,
			Labels:      map[string]string{"app": "shop", "tier": "frontend", "track": "stable"},
			Annotations: map[string]string{"example.com/owner": "team-a", "example.com/description": "a widget used by the benchmarks of every wire format"},
			Finalizers:  []string{"example.com/cleanup"},
		},
		Spec: benchSpec{
			Color: "red", Replicas: &replicas,
			Ports:    []benchPort{{Name: "http", Port: 80, Protocol: "TCP"}, {Name: "https", Port: 443, Protocol: "TCP"}, {Name: "metrics", Port: 9090, Protocol: "TCP"}},
			Selector: map[string]string{"app": "shop", "tier": "frontend"},
		},
		Status: benchStatus{Replicas: 3, Conditions: []kapi.Condition{
			{Type: "Ready", Status: kapi.ConditionTrue, ObservedGeneration: 2, LastTransitionTime: created, Reason: "AllReplicasReady", Message: "3 of 3 replicas are ready"},
			{Type: "Progressing", Status: kapi.ConditionFalse, ObservedGeneration: 2, LastTransitionTime: created, Reason: "Complete", Message: "the last rollout is complete"},
		}},
	}
}

var (
	benchFormats = []string{codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf, codec.MediaTypeCBOR}
	benchNames   = map[string]string{codec.MediaTypeJSON: "json", codec.MediaTypeYAML: "yaml", codec.MediaTypeProtobuf: "protobuf", codec.MediaTypeCBOR: "cbor"}
)

// decodeBody reads a body of format f back into v, as the server reads
// request bodies: textual formats through JSON.
func decodeBody(f *codec.Format, data []byte, v any) error {
	j, ok, err := f.ToJSON(data)
	if err != nil {
		return err
	}
	if !ok {
		return f.Unmarshal(data, v)
	}
	return codec.UnmarshalJSON(j, v)
}

// BenchmarkFormats encodes and decodes one widget and a list of 500 in each
// format, side by side: go test -run=^$ -bench=Formats -benchmem ./codec
func BenchmarkFormats(b *testing.B) {
	w := newBenchWidget(0)
	items := make([]*benchWidget, 500)
	for i := range items {
		items[i] = newBenchWidget(i)
	}
	listType := kapi.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"}
	listMeta := kapi.ListMeta{ResourceVersion: "2000"}
	for _, mt := range benchFormats {
		f := codec.ByMediaType(mt)
		name := benchNames[mt]
		b.Run(name+"/encode/widget", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				element, err := f.Marshal(w)
				if err == nil {
					_, err = f.AppendBody(nil, w.TypeMeta, element)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		element, _ := f.Marshal(w)
		body, err := f.AppendBody(nil, w.TypeMeta, element)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/decode/widget", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var got benchWidget
				if err := decodeBody(f, body, &got); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encode/list500", func(b *testing.B) {
			// Every element encoded, then the list assembled: what a list
			// costs when no element is cached yet.
			b.ReportAllocs()
			elements := make([][]byte, len(items))
			for b.Loop() {
				for i, it := range items {
					if elements[i], err = f.Marshal(it); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := f.AppendList(nil, listType, listMeta, elements); err != nil {
					b.Fatal(err)
				}
			}
		})
		elements := make([][]byte, len(items))
		for i, it := range items {
			elements[i], _ = f.Marshal(it)
		}
		b.Run(name+"/assemble/list500", func(b *testing.B) {
			// The list from cached elements: what the server does.
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.AppendList(nil, listType, listMeta, elements); err != nil {
					b.Fatal(err)
				}
			}
		})
		list, err := f.AppendList(nil, listType, listMeta, elements)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/decode/list500", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				var got benchWidgetList
				if err := decodeBody(f, list, &got); err != nil {
					b.Fatal(err)
				}
				if len(got.Items) != len(items) {
					b.Fatalf("%d items", len(got.Items))
				}
			}
		})
	}
}

// TestFormatsBenchmarkData checks that what the benchmark measures is right:
// a widget and a list read back equal in every format.
func TestFormatsBenchmarkData(t *testing.T) {
	w := newBenchWidget(7)
	for _, mt := range benchFormats {
		f := codec.ByMediaType(mt)
		element, err := f.Marshal(w)
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		body, err := f.AppendBody(nil, w.TypeMeta, element)
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		var got benchWidget
		if err := decodeBody(f, body, &got); err != nil {
			t.Fatalf("%s: decode: %v", mt, err)
		}
		if want, _ := codec.JSON().Marshal(w); string(mustJSON(t, &got)) != string(want) {
			t.Errorf("%s: widget round trip\n got %s\nwant %s", mt, mustJSON(t, &got), want)
		}
		list, err := f.AppendList(nil, kapi.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"}, kapi.ListMeta{ResourceVersion: "9", Continue: "abc"}, [][]byte{element, element})
		if err != nil {
			t.Fatalf("%s: list: %v", mt, err)
		}
		var gotList benchWidgetList
		if err := decodeBody(f, list, &gotList); err != nil {
			t.Fatalf("%s: decode list: %v", mt, err)
		}
		if len(gotList.Items) != 2 || gotList.ResourceVersion != "9" || gotList.Continue != "abc" || gotList.Items[1].Name != w.Name {
			t.Errorf("%s: list round trip: %+v", mt, gotList)
		}
		if gotList.Kind != "WidgetList" || gotList.APIVersion != "example.com/v1" {
			t.Errorf("%s: list type %+v", mt, gotList.TypeMeta)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := codec.JSON().Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
