package patch_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
)

// FuzzMergedDecode holds Merged.Decode to what it stands for: the object
// it puts together from the decoded live object and configuration is the
// one decoding the merged JSON gives, whenever it says it could.
func FuzzMergedDecode(f *testing.F) {
	for _, c := range mergedDecodeCases {
		f.Add(c.live, c.config, c.ignore)
	}
	s := widgetSchema(f)
	f.Fuzz(func(t *testing.T, live, config, ignore string) {
		checkMergedDecode(t, s, live, config, ignore)
	})
}

var mergedDecodeCases = []struct {
	name, live, config, ignore string
	decoded                    bool // Decode puts it together
}{
	{"create", ``, obj(`,"labels":{"a":"1"}},"spec":{"color":"red","replicas":1,"ports":[{"name":"http","port":80}]}`), "status", true},
	{"whole spec", obj(`,"uid":"u","creationTimestamp":"2025-06-01T12:00:00Z","labels":{"a":"1"}},"spec":{"color":"red","replicas":1},"status":{"phase":"Up"}`),
		obj(`,"labels":{"a":"1"}},"spec":{"color":"blue","replicas":2}`), "status", true},
	{"one field of spec", obj(`,"uid":"u","labels":{"a":"1"}},"spec":{"color":"red","replicas":1,"ports":[{"name":"a","port":1}]}`),
		obj(`},"spec":{"replicas":2}`), "", true},
	{"a label added", obj(`,"uid":"u","labels":{"a":"1"}},"spec":{"color":"red"}`), obj(`,"labels":{"b":"2"}},"spec":{"color":"red"}`), "", false}, // a map from both is decoded
	{"a list item merged", obj(`},"spec":{"ports":[{"name":"a","port":1},{"name":"b","port":2}]}`), obj(`},"spec":{"ports":[{"name":"b","port":3}]}`), "", false},
	{"raw JSON", obj(`},"spec":{"extra":{"a":1}}`), obj(`},"spec":{"extra":{"a":2},"color":"red"}`), "", false},
	{"raw JSON kept", obj(`},"spec":{"extra":{"a":1}}`), obj(`},"spec":{"color":"red"}`), "", false},
	{"status ignored", obj(`},"status":{"phase":"Up"}`), obj(`},"status":{"phase":"Down"},"spec":{"color":"red"}`), "status", true},
	{"numbers spelled otherwise", obj(`},"spec":{"replicas":1}`), obj(`},"spec":{"replicas":1,"color":"\u0072ed"}`), "", true},
	{"null", obj(`},"spec":{"replicas":1}`), obj(`},"spec":{"replicas":null,"selector":null}`), "", true},
	{"unchanged", obj(`,"uid":"u"},"spec":{"replicas":1}`), obj(`},"spec":{"replicas":1}`), "", true},
}

func TestMergedDecode(t *testing.T) {
	s := widgetSchema(t)
	for _, c := range mergedDecodeCases {
		t.Run(c.name, func(t *testing.T) {
			if decoded := checkMergedDecode(t, s, c.live, c.config, c.ignore); decoded != c.decoded {
				t.Errorf("Decode put it together: %v, want %v", decoded, c.decoded)
			}
		})
	}
}

// checkMergedDecode applies config to live and compares what Decode puts
// together with the merged JSON decoded; it says whether Decode did.
func checkMergedDecode(t *testing.T, s *patch.Schema, live, config, ignore string) bool {
	var liveObj, configObj *widget
	var l []byte
	if live != "" {
		l, liveObj = []byte(live), new(widget)
		if codec.UnmarshalJSON(l, liveObj) != nil {
			return false
		}
	}
	configObj = new(widget)
	if codec.UnmarshalJSON([]byte(config), configObj) != nil {
		return false
	}
	opts := patch.ApplyOptions{Manager: "fuzz", APIVersion: gv, Force: true, Now: kapi.NewTime(base)}
	if ignore != "" {
		opts.Ignore = []string{ignore}
	}
	c, err := patch.ParseConfiguration([]byte(config))
	if err != nil {
		return false
	}
	m, _, err := s.ApplyMerged(l, c, nil, opts)
	if err != nil {
		return false
	}
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want := new(widget)
	if codec.UnmarshalJSON(data, want) != nil {
		return false // decoding fails: the server answers that
	}
	var cur any
	if liveObj != nil {
		cur = liveObj
	}
	liveBefore, configBefore := clone(t, liveObj), clone(t, configObj)
	got := new(widget)
	if !m.Decode(got, cur, configObj) {
		return false
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode put together\n%#v\ndecoding %s gives\n%#v", got, data, want)
	}
	if !reflect.DeepEqual(liveObj, liveBefore) || !reflect.DeepEqual(configObj, configBefore) {
		t.Fatal("Decode changed what it copied from")
	}
	scribble(got)
	if !reflect.DeepEqual(liveObj, liveBefore) {
		t.Fatal("what Decode put together shares with the live object")
	}
	return true
}

func clone(t *testing.T, w *widget) *widget {
	if w == nil {
		return nil
	}
	data, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	out := new(widget)
	if err := codec.UnmarshalJSON(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// scribble changes what w's maps, slices and pointers hold.
func scribble(w *widget) {
	for k := range w.Labels {
		w.Labels[k] = "scribbled"
	}
	for k := range w.Spec.Selector {
		w.Spec.Selector[k] = "scribbled"
	}
	if w.Spec.Replicas != nil {
		*w.Spec.Replicas = -7
	}
	for i := range w.Spec.Ports {
		w.Spec.Ports[i].Name = "scribbled"
	}
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].Reason = "scribbled"
	}
}
