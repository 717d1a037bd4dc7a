package patch_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
)

// decodeTarget has a field of each kind Configuration.Decode sets, or
// leaves to decoding.
type decodeTarget struct {
	widget
	U      uint16              `json:"u,omitempty"`
	I8     int8                `json:"i8,omitempty"`
	F      float64             `json:"f,omitempty"`
	F32    float32             `json:"f32,omitempty"`
	B      bool                `json:"b,omitempty"`
	Counts map[string]int64    `json:"counts,omitempty"`
	Lists  map[string][]string `json:"lists,omitempty"`
	Ptrs   []*port             `json:"ptrs,omitempty"`
	When   kapi.Time           `json:"when,omitempty"`
	WhenP  *kapi.MicroTime     `json:"whenP,omitempty"`
	Raw    []byte              `json:"raw,omitempty"`
	Any    any                 `json:"any,omitempty"`
	Quoted int                 `json:"quoted,omitempty,string"`
	Text   textName            `json:"text,omitempty"`
	Named  map[textName]string `json:"named,omitempty"`
	Array  [2]int              `json:"array,omitempty"`
}

type textName string

func (n *textName) UnmarshalText(b []byte) error {
	*n = textName(strings.ToUpper(string(b)))
	return nil
}

var configurationDecodeCases = []struct {
	name, config string
	decoded      bool
}{
	{"widget", obj(`,"labels":{"a":"1"},"annotations":{"b":"2"}},"spec":{"color":"red","replicas":3,"ports":[{"name":"http","port":80,"protocol":"TCP"}],"selector":{"a":"1"},"tags":["x"]}`), true},
	{"kinds", `{"u":7,"i8":-8,"f":1.5,"b":true,"counts":{"a":1,"b":-2},"lists":{"a":["x"],"b":[]},"ptrs":[{"name":"p"}],"when":"2025-06-01T12:00:00Z","whenP":"2025-06-01T12:00:00.123456Z"}`, true},
	{"nulls", obj(`,"labels":null},"spec":{"replicas":null,"ports":null},"when":null,"whenP":null`), true},
	{"empty", `{"metadata":{"labels":{}},"spec":{"ports":[],"tags":[]}}`, true},
	{"unknown member", obj(`},"spec":{"colour":"red"}`), false},
	{"unknown member beside known ones", obj(`},"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP","number":80}]}`), false},
	{"member named otherwise", obj(`},"Spec":{"color":"red"}`), false},
	{"duplicate", obj(`},"spec":{"color":"red","color":"blue"}`), false},
	{"escape", obj(`},"spec":{"color":"r\u0065d"}`), false},
	{"float for an int", obj(`},"spec":{"replicas":1.0}`), false},
	{"exponent", obj(`},"spec":{"replicas":1e0}`), false},
	{"overflow", `{"u":65536}`, false},
	{"int8 overflow", `{"i8":128}`, false},
	{"negative uint", `{"u":-1}`, false},
	{"float32", `{"f32":0.1}`, false},
	{"float written as an integer", `{"f":10}`, true},
	{"float written otherwise", `{"f":1.50}`, false},
	{"bytes", `{"raw":"aGk="}`, false},
	{"interface", `{"any":1}`, false},
	{"quoted", `{"quoted":"1"}`, false},
	{"text", `{"text":"a"}`, false},
	{"text keys", `{"named":{"a":"b"}}`, false},
	{"array", `{"array":[1,2]}`, false},
	{"null item", `{"ptrs":[null]}`, false},
	{"null map value", `{"counts":{"a":null}}`, false},
	{"wrong type", obj(`},"spec":{"replicas":"1"}`), false},
	{"bad time", `{"when":"yesterday"}`, false},
	{"raw JSON", obj(`},"spec":{"extra":{"a":1}}`), false},
	{"managedFields", obj(`,"managedFields":[{"manager":"m"}]}`), false},
}

func TestConfigurationDecode(t *testing.T) {
	for _, c := range configurationDecodeCases {
		t.Run(c.name, func(t *testing.T) {
			if decoded := checkConfigurationDecode(t, c.config); decoded != c.decoded {
				t.Errorf("Decode decoded it: %v, want %v", decoded, c.decoded)
			}
		})
	}
}

// FuzzConfigurationDecode holds Configuration.Decode to decoding the
// document as the server does (codec.UnmarshalKnownJSON) whenever it says
// it could.
func FuzzConfigurationDecode(f *testing.F) {
	for _, c := range configurationDecodeCases {
		f.Add(c.config)
	}
	f.Fuzz(func(t *testing.T, config string) {
		checkConfigurationDecode(t, config)
	})
}

func checkConfigurationDecode(t *testing.T, config string) bool {
	c, err := patch.ParseConfiguration([]byte(config))
	if err != nil {
		return false
	}
	got := new(decodeTarget)
	if !c.Decode(got) {
		return false
	}
	want := new(decodeTarget)
	if err := codec.UnmarshalKnownJSON([]byte(config), want); err != nil {
		t.Fatalf("Decode decoded %s, which decoding refuses: %v", config, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode of %s gave\n%#v\ndecoding gives\n%#v", config, got, want)
	}
	return true
}

// TestConfigurationDecodeCopies: a configuration decoded again and again
// (its labels' map and its ports then copied from the ones decoded
// before) gives each decoding maps and lists of its own, and a
// configuration of other labels and ports its own.
func TestConfigurationDecodeCopies(t *testing.T) {
	for _, labels := range []string{`{"a":"1","b":"2"}`, `{"a":"1","b":"3"}`} {
		doc := obj(`,"labels":` + labels + `},"spec":{"selector":` + labels + `,"ports":[{"name":` + labels[5:8] + `,"port":80},{"name":"b","port":` + labels[14:15] + `}]}`)
		for range 3 {
			c, err := patch.ParseConfiguration([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				got := new(decodeTarget)
				if !c.Decode(got) {
					t.Fatalf("%s: not decoded", doc)
				}
				want := new(decodeTarget)
				if err := codec.UnmarshalKnownJSON([]byte(doc), want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Decode of %s gave\n%#v\ndecoding gives\n%#v", doc, got, want)
				}
				got.Labels["a"], got.Spec.Selector["b"] = "changed", "changed" // the caller's to change
				got.Spec.Ports[0].Name, got.Spec.Ports[1].Port = "changed", 1
			}
		}
	}
}
