package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/storage/memory"
)

// declared is a Gadget, which declares every constraint of package
// validation in its tags.
type declared struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            declaredSpec `json:"spec"`
}

type declaredSpec struct {
	Color    string   `json:"color" validate:"required,enum=Red;Green;Blue" description:"Color of the declared."`
	Replicas *int32   `json:"replicas,omitempty" validate:"minimum=0" default:"1"`
	Port     int32    `json:"port,omitempty" validate:"minimum=1,maximum=65535"`
	Load     float64  `json:"load,omitempty" validate:"minimum=0,exclusiveMinimum,maximum=1,exclusiveMaximum"`
	Name     string   `json:"name,omitempty" validate:"minLength=2,maxLength=5" pattern:"^[a-z]+$"`
	Address  string   `json:"address,omitempty" validate:"format=ipv4"`
	Tags     []string `json:"tags,omitempty" validate:"maxItems=2"`
	Steps    []string `json:"steps" validate:"minItems=1"`
	Zones    []string `json:"zones,omitempty" validate:"items:enum=a;b"`
	Zone     string   `json:"zone,omitempty" validate:"immutable"`
	Mode     string   `json:"mode,omitempty" validate:"enum=fast;slow" default:"fast"`
	Owner    *string  `json:"owner" validate:"optional"`
	Label    string   `json:"label" validate:"optional"`
	Note     string   `json:"note,omitempty" validate:"required"`
}

const declaredGadgets = "/apis/example.com/v1/namespaces/default/gadgets"

func newDeclaredServer(t *testing.T) *apiClient {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[declared]{
			Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
			// The user's own check runs after the declared ones.
			Validate: func(_ context.Context, g, _ *declared) apiserver.FieldErrors {
				if g.Spec.Note == "forbidden" {
					return apiserver.FieldErrors{apiserver.Forbidden("spec.note", "not this note")}
				}
				return nil
			},
		})
	})
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// declaredBody is a valid Gadget but for the fields of spec, a JSON object
// whose nulls remove fields.
func declaredBody(name, spec string) string {
	fields := map[string]any{"color": "Red", "note": "n", "steps": []string{"a"}}
	var change map[string]any
	if err := json.Unmarshal([]byte("{"+strings.TrimPrefix(spec, ",")+"}"), &change); err != nil {
		panic(err)
	}
	for k, v := range change {
		if v == nil {
			delete(fields, k)
		} else {
			fields[k] = v
		}
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}, "spec": fields})
	return string(body)
}

func TestDeclaredConstraintsRefuseWrites(t *testing.T) {
	c := newDeclaredServer(t)
	cases := []struct {
		name, spec string
		field      string
		typ        kapi.CauseType
		message    string
	}{
		{"required", `,"color":""`, "spec.color", kapi.CauseTypeFieldValueRequired, `Required value`},
		{"required, omitted", `,"note":null`, "spec.note", kapi.CauseTypeFieldValueRequired, `Required value`},
		{"enum", `,"color":"purple"`, "spec.color", kapi.CauseTypeFieldValueNotSupported, `Unsupported value: "purple": supported values: "Red", "Green", "Blue"`},
		{"minimum", `,"replicas":-1`, "spec.replicas", kapi.CauseTypeFieldValueInvalid, `Invalid value: -1: must be greater than or equal to 0`},
		{"maximum", `,"port":65536`, "spec.port", kapi.CauseTypeFieldValueInvalid, `Invalid value: 65536: must be between 1 and 65535, inclusive`},
		{"exclusiveMinimum", `,"load":-0.25`, "spec.load", kapi.CauseTypeFieldValueInvalid, `Invalid value: -0.25: must be greater than 0`},
		{"exclusiveMaximum", `,"load":1`, "spec.load", kapi.CauseTypeFieldValueInvalid, `Invalid value: 1: must be less than 1`},
		{"minLength", `,"name":"a"`, "spec.name", kapi.CauseTypeFieldValueInvalid, `Invalid value: "a": must be at least 2 characters`},
		{"maxLength", `,"name":"abcdef"`, "spec.name", kapi.CauseTypeFieldValueTooLong, `Too long: may not be more than 5 bytes`},
		{"pattern", `,"name":"AB"`, "spec.name", kapi.CauseTypeFieldValueInvalid, `Invalid value: "AB": must match '^[a-z]+$'`},
		{"format", `,"address":"10.0.0"`, "spec.address", kapi.CauseTypeFieldValueTypeInvalid, `Invalid value: "10.0.0": must be of type ipv4`},
		{"minItems", `,"steps":[]`, "spec.steps", kapi.CauseTypeFieldValueInvalid, `Invalid value: 0: must have at least 1 item`},
		{"maxItems", `,"tags":["a","b","c"]`, "spec.tags", kapi.CauseTypeTooMany, `Too many: 3: must have at most 2 items`},
		{"items:enum", `,"zones":["a","c"]`, "spec.zones[1]", kapi.CauseTypeFieldValueNotSupported, `Unsupported value: "c": supported values: "a", "b"`},
		{"enum after the user's check", `,"mode":"warp","note":"forbidden"`, "spec.mode", kapi.CauseTypeFieldValueNotSupported, `Unsupported value: "warp": supported values: "fast", "slow"`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("g%d", i)
			st := c.do(http.MethodPost, declaredGadgets, declaredBody(name, tc.spec)).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
			want := `Gadget.example.com "` + name + `" is invalid: ` + tc.field + ": " + tc.message
			if tc.name == "enum after the user's check" {
				want = `Gadget.example.com "` + name + `" is invalid: [` + tc.field + ": " + tc.message + `, spec.note: Forbidden: not this note]`
			}
			if st.Message != want {
				t.Errorf("message\n%s\nwant\n%s", st.Message, want)
			}
			if d := st.Details; d == nil || len(d.Causes) == 0 || d.Causes[0] != (kapi.StatusCause{Type: tc.typ, Message: tc.message, Field: tc.field}) {
				t.Errorf("details %+v, want first cause %s %s %q", st.Details, tc.field, tc.typ, tc.message)
			}
			c.get(declaredGadgets+"/"+name).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
		})
	}
}

func TestDeclaredDefaultsAndImmutability(t *testing.T) {
	c := newDeclaredServer(t)
	var g declared
	c.do(http.MethodPost, declaredGadgets, declaredBody("g", `,"zone":"a"`)).mustCode(t, http.StatusCreated).into(t, &g)
	if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 || g.Spec.Mode != "fast" {
		t.Fatalf("created spec %+v, want replicas 1 and mode fast by default", g.Spec)
	}

	// Defaults apply on every write: a merge patch that removes them.
	c.do(http.MethodPatch, declaredGadgets+"/g", `{"spec":{"replicas":null,"mode":null}}`, "Content-Type", "application/merge-patch+json").
		mustCode(t, http.StatusOK).into(t, &g)
	if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 || g.Spec.Mode != "fast" {
		t.Errorf("patched spec %+v, want the defaults back", g.Spec)
	}

	for _, w := range []struct {
		name          string
		method, body  string
		contentType   string
		code          int
		wantZoneAfter string
	}{
		{"put changes", http.MethodPut, "b", "", http.StatusUnprocessableEntity, "a"},
		{"patch clears", http.MethodPatch, `{"spec":{"zone":null}}`, "application/merge-patch+json", http.StatusUnprocessableEntity, "a"},
		{"apply changes", http.MethodPatch, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {zone: c, color: Red, note: n, steps: [a]}\n", "application/apply-patch+yaml", http.StatusUnprocessableEntity, "a"},
		{"patch keeps", http.MethodPatch, `{"spec":{"zone":"a","port":80}}`, "application/merge-patch+json", http.StatusOK, "a"},
	} {
		t.Run(w.name, func(t *testing.T) {
			var r *response
			if w.method == http.MethodPut {
				cur := c.get(declaredGadgets+"/g").mustCode(t, http.StatusOK)
				var obj declared
				cur.into(t, &obj)
				obj.Spec.Zone = w.body
				r = c.do(http.MethodPut, declaredGadgets+"/g", obj)
			} else {
				query := "?fieldManager=test"
				if strings.HasPrefix(w.contentType, "application/apply-patch") {
					query += "&force=true"
				}
				r = c.do(w.method, declaredGadgets+"/g"+query, w.body, "Content-Type", w.contentType)
			}
			if w.code != http.StatusOK {
				st := r.failure(t, w.code, kapi.StatusReasonInvalid)
				if want := `Gadget.example.com "g" is invalid: spec.zone: Invalid value: null: field is immutable`; st.Message != want {
					t.Errorf("message %q, want %q", st.Message, want)
				}
			} else {
				r.mustCode(t, http.StatusOK)
			}
			var now declared
			c.get(declaredGadgets+"/g").mustCode(t, http.StatusOK).into(t, &now)
			if now.Spec.Zone != w.wantZoneAfter {
				t.Errorf("zone %q after, want %q", now.Spec.Zone, w.wantZoneAfter)
			}
		})
	}
}

func TestDeclaredConstraintsInOpenAPI(t *testing.T) {
	c := newDeclaredServer(t)
	var doc map[string]any
	c.get("/openapi/v3/apis/example.com/v1").mustCode(t, http.StatusOK).into(t, &doc)
	schema := func(path ...string) any {
		var v any = doc
		for _, k := range append([]string{"components", "schemas", "com.example.v1.Gadget", "properties", "spec"}, path...) {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %v in the document", path)
			}
			v = m[k]
		}
		return v
	}
	for _, tc := range []struct{ field, want string }{
		{"color", `{"type":"string","description":"Color of the declared.","enum":["Red","Green","Blue"]}`},
		{"replicas", `{"type":"integer","format":"int32","default":1,"minimum":0}`},
		{"port", `{"type":"integer","format":"int32","minimum":1,"maximum":65535}`},
		{"load", `{"type":"number","format":"double","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":true}`},
		{"name", `{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"}`},
		{"address", `{"type":"string","format":"ipv4"}`},
		{"tags", `{"type":"array","items":{"type":"string"},"maxItems":2}`},
		{"steps", `{"type":"array","items":{"type":"string"},"minItems":1}`},
		{"zones", `{"type":"array","items":{"type":"string","enum":["a","b"]}}`},
		{"zone", `{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"field is immutable"}]}`},
		{"mode", `{"type":"string","default":"fast","enum":["fast","slow"]}`},
	} {
		t.Run(tc.field, func(t *testing.T) {
			got := schema("properties", tc.field)
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("schema\n%s\nwant\n%s", g, tc.want)
			}
		})
	}
	// required: color and note by their tags, which the server enforces;
	// steps, without omitempty, is not, for the server accepts a gadget
	// without it; label, without omitempty, is optional by its tag.
	got, _ := json.Marshal(schema("required"))
	if string(got) != `["color","note"]` {
		t.Errorf("required %s, want color and note", got)
	}
}

// A constraint declared after objects were stored ratchets, as a CRD's
// does: an update that leaves the field alone passes, one that changes it
// is checked.
func TestDeclaredConstraintRatchets(t *testing.T) {
	type looseSpec struct {
		Size int32  `json:"size"`
		Note string `json:"note,omitempty"`
	}
	type strictSpec struct {
		Size int32  `json:"size" validate:"maximum=10"`
		Note string `json:"note,omitempty"`
	}
	type loose struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            looseSpec `json:"spec"`
	}
	type strict struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            strictSpec `json:"spec"`
	}
	store := memory.New()
	before := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[loose]{Group: "example.com", Version: "v1", Kind: "Box", Plural: "boxes"})
	}, apiserver.WithStorage(store))
	c := &apiClient{t: t, base: before.URL, hc: before.Client()}
	c.do(http.MethodPost, "/apis/example.com/v1/boxes", `{"metadata":{"name":"big"},"spec":{"size":50}}`).mustCode(t, http.StatusCreated)

	after := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[strict]{Group: "example.com", Version: "v1", Kind: "Box", Plural: "boxes"})
	}, apiserver.WithStorage(store))
	c = &apiClient{t: t, base: after.URL, hc: after.Client()}
	merge := []string{"Content-Type", "application/merge-patch+json"}
	c.do(http.MethodPatch, "/apis/example.com/v1/boxes/big", `{"spec":{"note":"still big"}}`, merge...).mustCode(t, http.StatusOK)
	st := c.do(http.MethodPatch, "/apis/example.com/v1/boxes/big", `{"spec":{"size":40}}`, merge...).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if want := `Box.example.com "big" is invalid: spec.size: Invalid value: 40: must be less than or equal to 10`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	c.do(http.MethodPost, "/apis/example.com/v1/boxes", `{"metadata":{"name":"new"},"spec":{"size":50}}`).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
}

func TestRegisterRefusesBadTags(t *testing.T) {
	type badSpec struct {
		Size string `json:"size" validate:"minimum=1"`
	}
	type bad struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            badSpec `json:"spec"`
	}
	s, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	err = apiserver.Register(s, apiserver.Resource[bad]{Group: "example.com", Version: "v1", Kind: "Bad", Plural: "bads"})
	if err == nil || !strings.Contains(err.Error(), "spec.size") || !strings.Contains(err.Error(), "minimum: applies to numbers, not string") {
		t.Errorf("Register: %v, want an error naming spec.size and what is wrong", err)
	}
	if errs := strings.Count(fmt.Sprint(err), "applies to numbers"); errs != 1 {
		t.Errorf("the error says it %d times: %v", errs, err)
	}
}

// The example's widgets declare their checks in tags; the words of their
// 422s are those the hand-written checks had.
func TestWidgetDeclaredMessages(t *testing.T) {
	_, c := newTestServer(t)
	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"","replicas":-1,"size":-2,"ports":[{"name":"a","port":0,"protocol":"ICMP"},{"port":80},{"name":"a","port":81}]}}`
	st := c.do(http.MethodPost, widgetsIn("default"), body).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	want := []string{
		`spec.color: Required value`,
		`spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
		`spec.size: Invalid value: -2: must be greater than or equal to 0`,
		`spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
		`spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`,
		`spec.ports[1].name: Required value`,
		`spec.ports[2].name: Duplicate value: "a"`,
	}
	if w := `Widget.example.com "w" is invalid: [` + strings.Join(want, ", ") + `]`; st.Message != w {
		t.Errorf("message\n%s\nwant\n%s", st.Message, w)
	}
	var got []string
	for _, c := range st.Details.Causes {
		got = append(got, c.Field+": "+c.Message)
	}
	if !slices.Equal(got, want) {
		t.Errorf("causes %q", got)
	}
}

// The status subresource checks the declared constraints once, and only
// those of what it changes.
func TestWidgetDeclaredStatus(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "s"))
	st := c.do(http.MethodPatch, widgetPath("default", "s")+"/status", `{"status":{"replicas":-1}}`, "Content-Type", "application/merge-patch+json").
		failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if want := `Widget.example.com "s" is invalid: status.replicas: Invalid value: -1: must be greater than or equal to 0`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	c.do(http.MethodPatch, widgetPath("default", "s")+"/status", `{"status":{"replicas":3}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
}
