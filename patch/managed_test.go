package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

func TestServerSideApplyErrors(t *testing.T) {
	s := widgetSchema(t)
	live := []byte(obj(`},"spec":{"color":"red"}`))
	good := []kapi.ManagedFieldsEntry{{Manager: "a", Operation: "Apply", APIVersion: gv, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)}}}
	for _, tc := range []struct {
		name    string
		live    string
		config  string
		managed []kapi.ManagedFieldsEntry
		manager string
		want    error
		message string
	}{
		{"not JSON", "", `{`, nil, "m", patch.ErrMalformed, "unexpected EOF"},
		{"not an object", "", `[1]`, nil, "m", patch.ErrMalformed, "must be an object"},
		{"no manager", "", obj(`}`), nil, "", patch.ErrMalformed, "fieldManager is required"},
		{"unknown field", "", obj(`},"spec":{"colour":"red"}`), nil, "m", patch.ErrMalformed, `.spec: field "colour" not declared in schema`},
		{"object for a scalar", "", obj(`},"spec":{"color":{"r":1}}`), nil, "m", patch.ErrMalformed, ".spec.color: expected a scalar"},
		{"scalar for a list", "", obj(`},"spec":{"ports":"http"}`), nil, "m", patch.ErrMalformed, ".spec.ports: expected a list"},
		{"map-list item without its key", "", obj(`},"spec":{"ports":[{"port":80}]}`), nil, "m", patch.ErrMalformed, `omits all key fields ["name"]`},
		{"map-list item that is not an object", "", obj(`},"spec":{"ports":[1]}`), nil, "m", patch.ErrMalformed, "non-map elements"},
		{"duplicate map-list keys", "", obj(`},"spec":{"ports":[{"name":"a"},{"name":"a","port":1}]}`), nil, "m", patch.ErrMalformed, `duplicate entries for key [name="a"]`},
		{"duplicate set items", "", obj(`},"spec":{"tags":["x","x"]}`), nil, "m", patch.ErrMalformed, `duplicate entries for key [="x"]`},
		{"null set item", "", obj(`},"spec":{"tags":[null]}`), nil, "m", patch.ErrMalformed, "explicit null"},
		{"nested too deep", "", obj(`},"spec":{"extra":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`), nil, "m", patch.ErrMalformed, "exceeded max depth"},
		{"live is not an object", `"x"`, obj(`}`), nil, "m", patch.ErrNotApplicable, "not a JSON object"},
		{"live has the wrong shape", `{"spec":[]}`, obj(`}`), nil, "m", patch.ErrNotApplicable, "expected an object"},
		{"bad operation", string(live), obj(`}`), []kapi.ManagedFieldsEntry{{Manager: "a", Operation: "Patch", APIVersion: gv, FieldsType: "FieldsV1"}}, "m", patch.ErrNotApplicable, "operation"},
		{"bad fieldsType", string(live), obj(`}`), []kapi.ManagedFieldsEntry{{Manager: "a", Operation: "Apply", APIVersion: gv, FieldsType: "FieldsV2"}}, "m", patch.ErrNotApplicable, "fieldsType"},
		{"bad fieldsV1", string(live), obj(`}`), []kapi.ManagedFieldsEntry{{Manager: "a", Operation: "Apply", APIVersion: gv, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"k:[":{}}`)}}}, "m", patch.ErrNotApplicable, "fieldsV1"},
		{"valid managedFields", string(live), obj(`},"spec":{"color":"red"}`), good, "m", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l []byte
			if tc.live != "" {
				l = []byte(tc.live)
			}
			_, _, err := s.Apply(l, []byte(tc.config), tc.managed, patch.ApplyOptions{Manager: tc.manager, APIVersion: gv})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.message)
			}
		})
	}
}

func TestServerSideApplyIgnoresManagedFieldsInObjects(t *testing.T) {
	s := widgetSchema(t)
	mf := `,"managedFields":[{"manager":"x","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`
	out, fields, err := s.Apply([]byte(obj(mf+`},"spec":{"color":"red"}`)), []byte(obj(mf+`},"spec":{"replicas":1}`)), nil, patch.ApplyOptions{Manager: "m", APIVersion: gv, Now: kapi.NewTime(base)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "managedFields") {
		t.Errorf("result carries managedFields: %s", out)
	}
	var got []string
	for _, e := range fields {
		got = append(got, entry(e))
	}
	want := []string{`m Apply @0 {"f:spec":{"f:replicas":{}}}`, `before-first-apply Update @0 {"f:spec":{".":{},"f:color":{}}}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("managedFields = %q\nwant %q", got, want)
	}
}

func TestConflictErrorCauses(t *testing.T) {
	s := widgetSchema(t)
	_, managed, err := s.Apply(nil, []byte(obj(`},"spec":{"replicas":1,"ports":[{"name":"http","port":80}]}`)), nil, patch.ApplyOptions{Manager: "kubectl", APIVersion: gv})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Apply([]byte(obj(`},"spec":{"replicas":1,"ports":[{"name":"http","port":80}]}`)), []byte(obj(`},"spec":{"replicas":2,"ports":[{"name":"http","port":81}]}`)), managed, patch.ApplyOptions{Manager: "other", APIVersion: gv})
	var ce *patch.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	want := []kapi.StatusCause{
		{Type: kapi.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl"`, Field: ".spec.replicas"},
		{Type: kapi.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl"`, Field: `.spec.ports[name="http"].port`},
	}
	if got := ce.Causes(); !reflect.DeepEqual(got, want) {
		t.Errorf("Causes = %+v\nwant %+v", got, want)
	}
	if msg := "Apply failed with 2 conflicts: conflicts with \"kubectl\":\n- .spec.replicas\n- .spec.ports[name=\"http\"].port"; err.Error() != msg {
		t.Errorf("Error = %q\nwant %q", err, msg)
	}
}

// TestUpdateManagersCapped: kube-apiserver keeps ten Update entries and
// folds the oldest into "ancient-changes".
func TestUpdateManagersCapped(t *testing.T) {
	got := updateLabelsInTurn(t, 12, func(i int) (string, time.Time) {
		return fmt.Sprintf("u%02d", i), base.Add(time.Duration(i) * time.Second)
	})
	if len(got) != 10 || got[0] != `ancient-changes Update @2 {"f:metadata":{"f:labels":{".":{},"f:l00":{},"f:l01":{},"f:l02":{}}}}` {
		t.Errorf("managedFields =\n  %s", strings.Join(got, "\n  "))
	}
	if got[1] != `u03 Update @3 {"f:metadata":{"f:labels":{"f:l03":{}}}}` {
		t.Errorf("second entry = %s", got[1])
	}
}

// TestUpdateManagersCappedInTheSameSecond: entries of one second are
// folded in the order of their identifiers (the entry's JSON, so by
// manager name here), not in the order they were written, as
// kube-apiserver's capManagersManager sorts them (apimachinery's
// managedfields/internal/capmanagers.go). The managers write in reverse
// order of their names: u11 first, u00 last.
func TestUpdateManagersCappedInTheSameSecond(t *testing.T) {
	got := updateLabelsInTurn(t, 12, func(i int) (string, time.Time) {
		return fmt.Sprintf("u%02d", 11-i), base
	})
	want := []string{`ancient-changes Update @0 {"f:metadata":{"f:labels":{"f:l00":{},"f:l01":{},"f:l02":{}}}}`}
	for i := 3; i <= 10; i++ {
		want = append(want, fmt.Sprintf(`u%02d Update @0 {"f:metadata":{"f:labels":{"f:l%02d":{}}}}`, i, i))
	}
	want = append(want, `u11 Update @0 {"f:metadata":{"f:labels":{".":{},"f:l11":{}}}}`) // the first writer made the map
	if !slices.Equal(got, want) {
		t.Errorf("managedFields =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// updateLabelsInTurn has n managers, named and timed by who, each add a
// label named after its own number (u07 adds l07) by an Update, in turn,
// and returns the entries after the last (see entry).
func updateLabelsInTurn(t *testing.T, n int, who func(i int) (string, time.Time)) []string {
	t.Helper()
	s := widgetSchema(t)
	var live []byte
	labels := map[string]any{}
	var managed []kapi.ManagedFieldsEntry
	for i := range n {
		manager, at := who(i)
		labels["l"+strings.TrimPrefix(manager, "u")] = "x"
		next, err := json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "uid": "u", "labels": labels}})
		if err != nil {
			t.Fatal(err)
		}
		if managed, err = s.Update(live, next, managed, patch.UpdateOptions{Manager: manager, APIVersion: gv, Now: kapi.NewTime(at)}); err != nil {
			t.Fatal(err)
		}
		live = next
	}
	var got []string
	for _, e := range managed {
		got = append(got, entry(e))
	}
	return got
}

func TestFieldsV1RoundTrip(t *testing.T) {
	// A set from another server, with an element kind kapi never writes
	// (i:) and one it does not know (z:), survives being read and written.
	raw := `{"f:spec":{"f:ports":{"k:{\"name\":\"a\",\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:tags":{"v:\"x\"":{},"v:3":{}}},"z:x":{}}`
	s := widgetSchema(t)
	managed := []kapi.ManagedFieldsEntry{{Manager: "x", Operation: "Update", APIVersion: gv, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(raw)}}}
	out, err := s.Update([]byte(obj(`}`)), []byte(obj(`}`)), managed, patch.UpdateOptions{Manager: "y", APIVersion: gv})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"f:spec":{"f:ports":{"k:{\"name\":\"a\",\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:tags":{"v:3":{},"v:\"x\"":{}}}}`
	if len(out) != 1 || string(out[0].FieldsV1.Raw) != want {
		t.Errorf("fieldsV1 = %s\nwant %s", out[0].FieldsV1.Raw, want)
	}
}
