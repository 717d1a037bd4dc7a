package patch_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

type widget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            widgetSpec   `json:"spec,omitempty"`
	Status          widgetStatus `json:"status,omitempty"`
}

type widgetSpec struct {
	Replicas *int32            `json:"replicas,omitempty"`
	Color    string            `json:"color,omitempty"`
	Ports    []port            `json:"ports,omitempty" listType:"map" listMapKey:"name"`
	Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Args     []string          `json:"args,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	Extra    json.RawMessage   `json:"extra,omitempty"`
}

type port struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol,omitempty"`
	Port     int32  `json:"port,omitempty"`
}

type widgetStatus struct {
	Phase      string           `json:"phase,omitempty"`
	Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
}

func widgetSchema(t testing.TB) *patch.Schema {
	t.Helper()
	s, err := patch.SchemaOf(reflect.TypeFor[widget]())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const gv = "example.com/v1"

// obj is a Widget's JSON: the type and name, then more members.
func obj(members string) string {
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"` + members + `}`
}

// step is one write in a test's sequence.
type step struct {
	apply, update string // the manager
	sub           string
	force         bool
	ignore        []string
	body          string // apply: the configuration; update: the new object
	wantErr       string // the error's whole message, when it fails
}

// entry prints a managedFields entry compactly: manager operation
// subresource @second fields.
func entry(e kapi.ManagedFieldsEntry) string {
	s := e.Manager + " " + e.Operation
	if e.Subresource != "" {
		s += " /" + e.Subresource
	}
	if e.Time != nil {
		s += fmt.Sprintf(" @%d", e.Time.Unix()-base.Unix())
	}
	if e.APIVersion != gv {
		s += " " + e.APIVersion
	}
	return s + " " + string(e.FieldsV1.Raw)
}

var base = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// run plays the steps from an absent object; the object and entries after
// the last one.
func run(t *testing.T, steps []step) (string, []kapi.ManagedFieldsEntry) {
	t.Helper()
	return runWith(t, widgetSchema(t), steps)
}

// runWith is run with the schema s.
func runWith(t *testing.T, s *patch.Schema, steps []step) (string, []kapi.ManagedFieldsEntry) {
	t.Helper()
	var live []byte
	var managed []kapi.ManagedFieldsEntry
	for i, st := range steps {
		now := kapi.NewTime(base.Add(time.Duration(i+1) * time.Second))
		var err error
		var out []byte
		var fields []kapi.ManagedFieldsEntry
		if st.apply != "" {
			out, fields, err = s.Apply(live, []byte(st.body), managed, patch.ApplyOptions{
				Manager: st.apply, APIVersion: gv, Subresource: st.sub, Force: st.force, Now: now, Ignore: st.ignore,
			})
		} else {
			out = []byte(st.body)
			var old []byte
			if live != nil {
				old = live
			}
			fields, err = s.Update(old, out, managed, patch.UpdateOptions{
				Manager: st.update, APIVersion: gv, Subresource: st.sub, Now: now, Ignore: st.ignore,
			})
		}
		if st.wantErr != "" || err != nil {
			if err == nil || err.Error() != st.wantErr {
				t.Fatalf("step %d: err = %v\nwant %s", i+1, err, st.wantErr)
			}
			continue
		}
		if !json.Valid(out) {
			t.Fatalf("step %d: result is not JSON: %s", i+1, out)
		}
		live, managed = out, fields
	}
	return string(live), managed
}

func TestServerSideApply(t *testing.T) {
	for _, tc := range []struct {
		name       string
		steps      []step
		wantObject string   // "" to skip
		wantFields []string // entries as entry() prints them, in order
	}{
		{
			name:       "create by apply owns what the configuration names, in FieldsV1",
			steps:      []step{{apply: "alice", body: obj(`,"namespace":"ns","uid":"u","labels":{"app":"a"}},"spec":{"replicas":1,"ports":[{"name":"http","port":80}],"tags":["x"],"args":["a","b"],"selector":{"k":"v"},"extra":{"any":[1]}}`)}},
			wantObject: obj(`,"namespace":"ns","uid":"u","labels":{"app":"a"}},"spec":{"replicas":1,"ports":[{"name":"http","port":80}],"tags":["x"],"args":["a","b"],"selector":{"k":"v"},"extra":{"any":[1]}}`),
			wantFields: []string{`alice Apply @1 {"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:args":{},"f:extra":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}},"f:replicas":{},"f:selector":{"f:k":{}},"f:tags":{"v:\"x\"":{}}}}`},
		},
		{
			name:       "an empty object and null are owned as values, an empty granular list is not",
			steps:      []step{{apply: "alice", body: obj(`,"labels":{}},"spec":{"color":null,"ports":[],"selector":{}}`)}},
			wantFields: []string{`alice Apply @1 {"f:metadata":{"f:labels":{}},"f:spec":{"f:color":{},"f:selector":{}}}`},
		},
		{
			name: "the apply set replaces the manager's last one; dropped fields are removed",
			steps: []step{
				{apply: "alice", body: obj(`,"labels":{"a":"1","b":"2"}},"spec":{"replicas":1,"color":"red","tags":["x","y"]}`)},
				{apply: "alice", body: obj(`,"labels":{"a":"1"}},"spec":{"color":"red","tags":["y"]}`)},
			},
			wantObject: obj(`,"labels":{"a":"1"}},"spec":{"color":"red","tags":["y"]}`),
			wantFields: []string{`alice Apply @2 {"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:color":{},"f:tags":{"v:\"y\"":{}}}}`},
		},
		{
			name: "a field applied with the same value is shared, and stays when one owner drops it",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"replicas":1,"color":"red"}`)},
				{apply: "bob", body: obj(`},"spec":{"color":"red"}`)},
				{apply: "alice", body: obj(`},"spec":{"replicas":1}`)},
			},
			wantObject: obj(`},"spec":{"replicas":1,"color":"red"}`),
			wantFields: []string{`bob Apply {"f:spec":{"f:color":{}}}`, `alice Apply @1 {"f:spec":{"f:replicas":{}}}`},
		},
		{
			name: "conflict with an applier: 409 naming the field, nothing changes",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"replicas":1}`)},
				{apply: "bob", body: obj(`},"spec":{"replicas":2}`), wantErr: `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`},
			},
			wantObject: obj(`},"spec":{"replicas":1}`),
			wantFields: []string{`alice Apply @1 {"f:spec":{"f:replicas":{}}}`},
		},
		{
			name: "conflict with an updater names its apiVersion",
			steps: []step{
				{update: "kubectl-edit", body: obj(`,"uid":"u"},"spec":{"replicas":1}`)},
				{apply: "bob", body: obj(`},"spec":{"replicas":2}`), wantErr: `Apply failed with 1 conflict: conflict with "kubectl-edit" using example.com/v1: .spec.replicas`},
			},
		},
		{
			name: "conflicts with several managers and items are listed per manager",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"color":"red","ports":[{"name":"http","port":80}]}`)},
				{update: "ctl", sub: "status", body: obj(`,"uid":"u"},"spec":{"color":"red","replicas":3,"ports":[{"name":"http","port":80}]}`)},
				{apply: "bob", body: obj(`},"spec":{"replicas":1,"color":"blue","ports":[{"name":"http","port":81}]}`),
					wantErr: "Apply failed with 3 conflicts: conflicts with \"alice\":\n- .spec.color\n- .spec.ports[name=\"http\"].port\nconflicts with \"ctl\" with subresource \"status\" using example.com/v1:\n- .spec.replicas"},
			},
		},
		{
			name: "force takes the conflicting fields over",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"replicas":1,"color":"red"}`)},
				{apply: "bob", force: true, body: obj(`},"spec":{"replicas":2}`)},
			},
			wantObject: obj(`},"spec":{"replicas":2,"color":"red"}`),
			wantFields: []string{`alice Apply @1 {"f:spec":{"f:color":{}}}`, `bob Apply @2 {"f:spec":{"f:replicas":{}}}`},
		},
		{
			name: "map-list items merge by key, keeping live order and owners",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"ports":[{"name":"http","port":80},{"name":"grpc","port":90}]}`)},
				{apply: "bob", body: obj(`},"spec":{"ports":[{"name":"admin","port":70},{"name":"http","protocol":"TCP"}]}`)},
				{apply: "alice", body: obj(`},"spec":{"ports":[{"name":"http","port":80}]}`)},
			},
			wantObject: obj(`},"spec":{"ports":[{"name":"admin","port":70},{"name":"http","port":80,"protocol":"TCP"}]}`),
			wantFields: []string{
				`bob Apply @2 {"f:spec":{"f:ports":{"k:{\"name\":\"admin\"}":{".":{},"f:name":{},"f:port":{}},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:protocol":{}}}}}`,
				`alice Apply @3 {"f:spec":{"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}}}}`,
			},
		},
		{
			name: "set items are owned one by one; atomic lists and untyped values whole",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"tags":["x"],"args":["a"],"extra":{"k":1}}`)},
				{apply: "bob", body: obj(`},"spec":{"tags":["y"]}`)},
				{apply: "bob", body: obj(`},"spec":{"args":["b"]}`), wantErr: `Apply failed with 1 conflict: conflict with "alice": .spec.args`},
				{apply: "bob", body: obj(`},"spec":{"extra":{"k":2}}`), wantErr: `Apply failed with 1 conflict: conflict with "alice": .spec.extra`},
			},
			wantObject: obj(`},"spec":{"tags":["x","y"],"args":["a"],"extra":{"k":1}}`),
		},
		{
			name: "an update takes the fields it changed from their owners and drops owners left with none",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"replicas":1}`)},
				{update: "ctl", body: obj(`},"spec":{"replicas":2,"color":"red"}`)},
			},
			wantFields: []string{`ctl Update @2 {"f:spec":{"f:color":{},"f:replicas":{}}}`},
		},
		{
			name: "create by update records every field, the map itself too; server-owned metadata never",
			steps: []step{
				{update: "kubectl-create", body: obj(`,"uid":"u","resourceVersion":"1","generation":1,"creationTimestamp":"2030-01-01T00:00:00Z","labels":{"a":"1"}},"spec":{"color":"red"}`)},
			},
			wantFields: []string{`kubectl-create Update @1 {"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{}}}`},
		},
		{
			name: "updates to an existing object nobody tracks are not tracked; its first apply records them as before-first-apply",
			steps: []step{
				{apply: "alice", body: obj(`,"uid":"u"},"spec":{"color":"red"}`)},
				{apply: "alice", body: obj(`}`)}, // alice owns nothing now
				{update: "ctl", body: obj(`,"uid":"u"},"spec":{"color":"blue"}`)},
				{apply: "bob", body: obj(`},"spec":{"replicas":1}`)},
			},
			wantObject: obj(`,"uid":"u"},"spec":{"color":"blue","replicas":1}`),
			wantFields: []string{`bob Apply @4 {"f:spec":{"f:replicas":{}}}`, `before-first-apply Update @4 {"f:spec":{".":{},"f:color":{}}}`},
		},
		{
			name: "a no-op apply keeps the manager's time; Apply entries sort before Update ones",
			steps: []step{
				{apply: "alice", body: obj(`},"spec":{"color":"red"}`)},
				{update: "ctl", body: obj(`},"spec":{"color":"red","replicas":1}`)},
				{apply: "alice", body: obj(`},"spec":{"color":"red"}`)},
			},
			wantFields: []string{`alice Apply @1 {"f:spec":{"f:color":{}}}`, `ctl Update @2 {"f:spec":{"f:replicas":{}}}`},
		},
		{
			name: "ignored fields are neither merged nor owned, nor conflicts",
			steps: []step{
				{update: "ctl", sub: "status", ignore: []string{"spec"}, body: obj(`,"uid":"u"},"status":{"phase":"Ready"}`)},
				{apply: "alice", ignore: []string{"status"}, body: obj(`},"spec":{"color":"red"},"status":{"phase":"Done"}`)},
				{apply: "ctl", sub: "status", ignore: []string{"spec"}, body: obj(`},"spec":{"color":"blue"},"status":{"phase":"Done"}`), wantErr: `Apply failed with 1 conflict: conflict with "ctl" with subresource "status" using example.com/v1: .status.phase`},
				{apply: "ctl", sub: "status", ignore: []string{"spec"}, force: true, body: obj(`},"spec":{"color":"blue"},"status":{"phase":"Done"}`)},
			},
			wantObject: obj(`,"uid":"u"},"spec":{"color":"red"},"status":{"phase":"Done"}`),
			wantFields: []string{
				`alice Apply @2 {"f:spec":{"f:color":{}}}`,
				`ctl Apply /status @4 {"f:status":{"f:phase":{}}}`,
				`ctl Update /status @1 {"f:status":{}}`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fields := run(t, tc.steps)
			if tc.wantObject != "" && !jsonEqual(t, []byte(got), []byte(tc.wantObject)) {
				t.Errorf("object = %s\nwant     %s", got, tc.wantObject)
			}
			if tc.wantFields != nil {
				var entries []string
				for _, e := range fields {
					entries = append(entries, entry(e))
				}
				if !reflect.DeepEqual(entries, tc.wantFields) {
					t.Errorf("managedFields =\n  %s\nwant\n  %s", strings.Join(entries, "\n  "), strings.Join(tc.wantFields, "\n  "))
				}
			}
		})
	}
}

// TestScaleUpdateUntimed: a write through /scale records its entry without
// a time, again and again, and its entry goes before the timed ones, as
// kube-apiserver's scale handler records it (the crddiff goldens hold it
// to kube-apiserver's).
func TestScaleUpdateUntimed(t *testing.T) {
	_, managed := run(t, []step{
		{update: "creator", body: obj(`,"uid":"u"},"spec":{"replicas":1,"color":"red"}`)},
		{update: "hpa", sub: "scale", body: obj(`,"uid":"u"},"spec":{"replicas":2,"color":"red"}`)},
		{update: "hpa", sub: "scale", body: obj(`,"uid":"u"},"spec":{"replicas":3,"color":"red"}`)},
		{update: "editor", body: obj(`,"uid":"u"},"spec":{"replicas":3,"color":"blue"}`)},
	})
	var got []string
	for _, e := range managed {
		got = append(got, entry(e))
	}
	want := []string{`hpa Update /scale {"f:spec":{"f:replicas":{}}}`, `creator Update @1 {"f:spec":{}}`, `editor Update @4 {"f:spec":{"f:color":{}}}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("managedFields:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}
