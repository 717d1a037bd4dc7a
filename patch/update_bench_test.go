package patch_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

// realistic is a widget as a server stores it: metadata with labels,
// annotations, a finalizer and an owner, a spec with a map list, and a
// status with conditions.
const realistic = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w","namespace":"default","uid":"6f1c8a52-3b1e-4c8e-9a55-0d2f6b7e9c11","generation":4,"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"app.kubernetes.io/component":"frontend","app.kubernetes.io/name":"shop","tier":"web"},"annotations":{"example.com/owner":"team-storefront","example.com/revision":"42"},"ownerReferences":[{"apiVersion":"example.com/v1","kind":"WidgetClass","name":"gold","uid":"0b9d7a1e-2f45-4b6c-8d3e-5a6f7b8c9d0e","controller":true}],"finalizers":["example.com/cleanup"]},"spec":{"replicas":3,"color":"blue","ports":[{"name":"http","protocol":"TCP","port":8080},{"name":"metrics","protocol":"TCP","port":9090},{"name":"dns","protocol":"UDP","port":53}],"tags":["a","b"],"selector":{"app.kubernetes.io/name":"shop"}},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","observedGeneration":4,"lastTransitionTime":"2025-06-01T12:00:00Z","reason":"AllReplicasReady","message":"3 of 3 replicas are ready"},{"type":"Progressing","status":"False","observedGeneration":4,"lastTransitionTime":"2025-06-01T12:00:00Z","reason":"Stable","message":"the rollout is complete"}]}}`

// BenchmarkUpdate records managedFields for ordinary writes of a realistic
// object: its create (every field is the manager's), and an update of one
// field by the same manager, which every PUT and PATCH makes.
func BenchmarkUpdate(b *testing.B) {
	s := widgetSchema(b)
	opts := patch.UpdateOptions{Manager: "kubectl", APIVersion: gv, Now: kapi.NewTime(base), Ignore: []string{"status"}}
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Update(nil, []byte(realistic), nil, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		managed, err := s.Update(nil, []byte(realistic), nil, opts)
		if err != nil {
			b.Fatal(err)
		}
		next := []byte(strings.Replace(realistic, `"color":"blue"`, `"color":"red"`, 1))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Update([]byte(realistic), next, managed, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update-other", func(b *testing.B) {
		managed, err := s.Update(nil, []byte(realistic), nil, opts)
		if err != nil {
			b.Fatal(err)
		}
		next := []byte(strings.Replace(realistic, `"color":"blue"`, `"color":"red"`, 1))
		other := opts
		other.Manager = "controller"
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Update([]byte(realistic), next, managed, other); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApplyRealistic is a server-side apply of a whole realistic
// object whose spec changes, with force, to the object as a create
// recorded it: what the load harness's apply sends.
func BenchmarkApplyRealistic(b *testing.B) {
	s := widgetSchema(b)
	managed, err := s.Update(nil, []byte(realistic), nil, patch.UpdateOptions{Manager: "kubectl", APIVersion: gv, Now: kapi.NewTime(base), Ignore: []string{"status"}})
	if err != nil {
		b.Fatal(err)
	}
	config := []byte(strings.Replace(realistic, `"color":"blue"`, `"color":"red"`, 1))
	opts := patch.ApplyOptions{Manager: "bench", APIVersion: gv, Force: true, Now: kapi.NewTime(base), Ignore: []string{"status"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Apply([]byte(realistic), config, managed, opts); err != nil {
			b.Fatal(err)
		}
	}
}
