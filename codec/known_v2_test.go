package codec_test

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/codec"
)

type flex struct {
	A string `json:"a"`
}

// UnmarshalJSONFrom takes any object, keeping its "a": it decodes itself, as json/v2 asks.
func (f *flex) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var m map[string]any
	if err := jsonv2.UnmarshalDecode(dec, &m); err != nil {
		return err
	}
	f.A, _ = m["a"].(string)
	return nil
}

type flexDoc struct {
	Spec struct {
		Flex flex `json:"flex"`
	} `json:"spec"`
}

// CheckJSONFields looks into a type that decodes itself only with json/v2's
// UnmarshalJSONFrom (jsonfields knows encoding/json's methods); the
// decoder hands it the whole object. UnmarshalKnownJSON leaves any type
// holding one to the check, which reports its unknown members.
func TestKnownJSONLeavesV2DecodersToTheCheck(t *testing.T) {
	data := []byte(`{"spec":{"flex":{"a":"1","x":2}}}`)
	report, _, err := codec.CheckJSONFields(data, reflect.TypeFor[flexDoc]())
	if err != nil || report.Empty() {
		t.Fatalf("CheckJSONFields: %+v, %v", report, err)
	}
	var v flexDoc
	if err := codec.UnmarshalKnownJSON(data, &v); err == nil {
		t.Errorf("UnmarshalKnownJSON decoded a body CheckJSONFields reports %+v of", report)
	}
}
