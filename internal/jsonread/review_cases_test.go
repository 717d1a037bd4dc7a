package jsonread_test

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/jsonread"
	"github.com/kapi-dev/kapi/kinds"
)

// oddName's tag name holds a character encoding/json refuses in a name
// (€ is a symbol, not a letter): jsonfields (encoding/json's listing)
// names the field "Price", json/v2 names it "price€".
type oddName struct {
	Price int `json:"price€"`
}

func TestDecoderTagNamesAsJSONv2(t *testing.T) {
	doc := []byte(`{"Price":1}`)
	var got, want oddName
	decoded := false
	if dec := jsonread.New(reflect.TypeFor[oddName](), fallback); dec != nil { // nil: all left to json/v2
		decoded = dec.Decode(doc, &got)
	}
	err := jsonv2.Unmarshal(doc, &want, known)
	if decoded && (err != nil || got != want) {
		t.Errorf("%s: Decoder decoded %+v; json/v2: %+v, %v", doc, got, want, err)
	}
	var viaCodec oddName
	if err := codec.UnmarshalKnownJSON(doc, &viaCodec); err == nil {
		t.Errorf("codec.UnmarshalKnownJSON(%s) = nil, %+v; json/v2 refuses it", doc, viaCodec)
	}
}

// A kind that decodes itself (a custom resource, kinds.Object) and whose
// body repeats a member: json/v2 refuses the body (AllowDuplicateNames
// false), so the server checks it and warns of or, Strict, refuses the
// duplicate field. The Decoder hands the body to UnmarshalJSON unchecked.
func TestDecoderRepeatsInACustomResource(t *testing.T) {
	for _, doc := range []string{
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a"},"spec":{"size":1,"size":2}}`,
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","name":"b"}}`,
		`{"apiVersion":"example.com/v1","kind":"Thing","kind":"Thing","metadata":{"name":"a"}}`,
	} {
		report, _, cerr := codec.CheckJSONFields([]byte(doc), reflect.TypeFor[kinds.Object]())
		v2err := jsonv2.Unmarshal([]byte(doc), new(kinds.Object), known)
		if err := codec.UnmarshalKnownJSON([]byte(doc), new(kinds.Object)); err == nil {
			t.Errorf("UnmarshalKnownJSON(%s) = nil; json/v2: %v; CheckJSONFields: %+v, %v", doc, v2err, report, cerr)
		}
	}
}
