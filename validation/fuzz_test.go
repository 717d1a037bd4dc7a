package validation_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

type fuzzItem struct {
	Name string `json:"name" validate:"required"`
}

// fuzzTypes are the field types the fuzzer puts its tags on.
var fuzzTypes = []reflect.Type{
	reflect.TypeFor[string](), reflect.TypeFor[*int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint8](),
	reflect.TypeFor[float64](), reflect.TypeFor[bool](), reflect.TypeFor[[]string](), reflect.TypeFor[[]fuzzItem](),
	reflect.TypeFor[map[string]string](), reflect.TypeFor[fuzzItem](), reflect.TypeFor[*string](), reflect.TypeFor[[2]int](),
}

// FuzzRulesOf parses arbitrary tags on fields of several types: a bad tag
// is an error, never a panic, and accepted rules are consistent.
func FuzzRulesOf(f *testing.F) {
	f.Add(uint8(0), "required,enum=red;green;blue,minLength=1,maxLength=5", "^[a-z]+$", "red")
	f.Add(uint8(1), "minimum=0,maximum=10,exclusiveMaximum", "", "1")
	f.Add(uint8(4), "minimum=0.5,exclusiveMinimum,enum=1;2.5", "", "2.5")
	f.Add(uint8(6), "minItems=1,maxItems=2,required", "", `["a"]`)
	f.Add(uint8(0), "format=ipv4,immutable", "", "1.2.3.4")
	f.Add(uint8(3), "enum=1;2;300", "", "")
	f.Add(uint8(9), "immutable,optional", "", `{"name":"n"}`)
	f.Add(uint8(6), "items:enum=a;b,items:maxLength=1,maxItems=3", "", `["a"]`)
	f.Fuzz(func(t *testing.T, typ uint8, validate, pattern, deflt string) {
		tag := `validate:"` + validate + `" pattern:"` + pattern + `"`
		if deflt != "" {
			tag += ` default:"` + deflt + `"`
		}
		sf := reflect.StructField{Name: "F", Type: fuzzTypes[int(typ)%len(fuzzTypes)], Tag: reflect.StructTag(tag)}
		r, err := validation.RulesOf(sf)
		if err != nil || r == nil {
			return
		}
		if r.Required && r.Optional || r.MinLength > r.MaxLength && r.MaxLength >= 0 || r.MinItems > r.MaxItems && r.MaxItems >= 0 {
			t.Errorf("inconsistent rules accepted: %+v", r)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("rules do not make JSON for OpenAPI: %v", err)
		}
	})
}

var fuzzCauses = []kapi.CauseType{
	kapi.CauseTypeFieldValueRequired, kapi.CauseTypeFieldValueInvalid, kapi.CauseTypeFieldValueTypeInvalid,
	kapi.CauseTypeFieldValueNotSupported, kapi.CauseTypeFieldValueTooLong, kapi.CauseTypeTooMany,
}

// FuzzValidate defaults and validates arbitrary objects of a type with
// every constraint, as an update from arbitrary old objects.
func FuzzValidate(f *testing.F) {
	f.Add(`{"spec":{"color":"purple","replicas":-1,"parts":[{}],"partsByID":{"a":{"kind":"z"}}}}`, `{"spec":{"zone":"a"}}`)
	f.Add(`{"spec":{"name":"ABCDEFG","address":"1.2.3","tags":["a","b","c"],"steps":[],"ratio":1}}`, `{}`)
	f.Add(`{"spec":{"color":"red","labels":{"a":"b"},"zone":"b","extra":{"name":"x"}}}`, `{"spec":{"zone":"a"}}`)
	schema, err := validation.For(reflect.TypeFor[Gizmo]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, oldBody string) {
		var obj, old Gizmo
		if json.Unmarshal([]byte(body), &obj) != nil {
			return
		}
		_ = json.Unmarshal([]byte(oldBody), &old)
		schema.Default(&obj)
		errs := schema.Validate(&obj, nil)
		for _, e := range errs {
			if e.Field == "" || !slices.Contains(fuzzCauses, e.Type) || e.Error() == "" {
				t.Errorf("error %+v", e)
			}
		}
		// An update that changes nothing finds nothing (ratcheting); any
		// update finds what a create finds, or an immutable field changed.
		if same := schema.Validate(&obj, &obj); len(same) > 0 {
			t.Errorf("update to itself %v", same)
		}
		created := map[string]bool{}
		for _, e := range errs {
			created[e.Error()] = true
		}
		for _, e := range schema.Validate(&obj, &old) {
			if !created[e.Error()] && e.Detail != "field is immutable" {
				t.Errorf("update from %s found %v, which a create does not", oldBody, e)
			}
		}
		// Defaulting twice changes nothing more.
		once, _ := json.Marshal(&obj)
		schema.Default(&obj)
		if twice, _ := json.Marshal(&obj); string(once) != string(twice) {
			t.Errorf("defaulted twice: %s, then %s", once, twice)
		}
	})
}
