package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

// FuzzServerSideApply applies a configuration to a live object as one
// manager, then the same configuration again, then another manager's
// configuration and an update: Apply and Update never panic, fail only
// with their documented errors, return JSON objects, and the repeated apply
// changes neither the object nor its managedFields.
func FuzzServerSideApply(f *testing.F) {
	f.Add(obj(`,"labels":{"a":"1"}},"spec":{"color":"red","replicas":1}`), obj(`},"spec":{"replicas":2,"ports":[{"name":"http","port":80}]}`), obj(`},"spec":{"replicas":3}`), true, "")
	f.Add(obj(`},"spec":{"ports":[{"name":"a"},{"name":"b","port":1}],"tags":["x","y"]}`), obj(`},"spec":{"ports":[{"name":"b","port":2},{"name":"c"}],"tags":["z","x"]}`), obj(`},"spec":{"tags":["x"]}`), false, "status")
	f.Add(``, obj(`},"spec":{"extra":{"a":[1,{"b":null}]},"args":["a","a"],"selector":{}}`), `{}`, false, "")
	f.Add(obj(`},"status":{"conditions":[{"type":"Ready","status":"True"}]}`), obj(`},"status":{"conditions":[{"type":"Ready","status":"False"}]},"spec":null`), obj(`},"status":null`), true, "spec")
	f.Add(`{"spec":{"ports":[{"name":"a"},{"name":"a"}]}}`, `{"spec":{"ports":[{"name":"a","port":1}]}}`, `{"spec":{"ports":[{"name":"a","port":2}]}}`, true, "")
	s := widgetSchema(f)
	f.Fuzz(func(t *testing.T, live, config, other string, force bool, ignore string) {
		var l []byte
		if live != "" {
			l = []byte(live)
		}
		opts := patch.ApplyOptions{Manager: "fuzz", APIVersion: gv, Force: force, Now: kapi.NewTime(base)}
		if ignore != "" {
			opts.Ignore = []string{ignore}
		}
		out, managed, err := s.Apply(l, []byte(config), nil, opts)
		if err != nil {
			var ce *patch.ConflictError
			if !errors.Is(err, patch.ErrMalformed) && !errors.Is(err, patch.ErrNotApplicable) && !errors.As(err, &ce) {
				t.Fatalf("error %v is neither ErrMalformed, ErrNotApplicable nor a conflict", err)
			}
			return
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil || v == nil {
			t.Fatalf("result is not a JSON object: %s", out)
		}
		opts.Force = false
		opts.Now = kapi.NewTime(base.Add(1e9))
		again, managedAgain, err := s.Apply(out, []byte(config), managed, opts)
		if err != nil {
			t.Fatalf("the same apply again fails: %v\nobject: %s\nmanagedFields: %s", err, out, entries(managed))
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("the same apply again changes the object:\n%s\nthen\n%s", out, again)
		}
		if touchesIgnored(config, ignore) {
			// kube-apiserver merges ignored fields before it resets them, so
			// an apply that names them stamps its entry every time.
			managed, managedAgain = withoutTimes(managed), withoutTimes(managedAgain)
		}
		if !reflect.DeepEqual(managedAgain, managed) {
			t.Fatalf("the same apply again changes managedFields:\n%s\nthen\n%s", entries(managed), entries(managedAgain))
		}

		opts.Manager, opts.Force = "other", force
		third, managedThird, err := s.Apply(out, []byte(other), managed, opts)
		if err != nil {
			var ce *patch.ConflictError
			if !errors.Is(err, patch.ErrMalformed) && !errors.Is(err, patch.ErrNotApplicable) && !errors.As(err, &ce) {
				t.Fatalf("error %v is neither ErrMalformed, ErrNotApplicable nor a conflict", err)
			}
			return
		}
		if err := json.Unmarshal(third, &v); err != nil || v == nil {
			t.Fatalf("result is not a JSON object: %s", third)
		}
		if _, err := s.Update(third, out, managedThird, patch.UpdateOptions{Manager: "writer", APIVersion: gv}); err != nil {
			t.Fatalf("Update back to an object Apply accepted: %v", err)
		}
	})
}

func entries(es []kapi.ManagedFieldsEntry) string {
	var b bytes.Buffer
	for _, e := range es {
		b.WriteString(entry(e) + "\n")
	}
	return b.String()
}

func touchesIgnored(config, ignore string) bool {
	var c map[string]any
	json.Unmarshal([]byte(config), &c)
	_, ok := c[ignore]
	return ok
}

func withoutTimes(es []kapi.ManagedFieldsEntry) []kapi.ManagedFieldsEntry {
	out := append([]kapi.ManagedFieldsEntry(nil), es...)
	for i := range out {
		out[i].Time = nil
	}
	return out
}
