package codec_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

// BenchmarkDecodeBody is a request body decoded as a server decodes it:
// checked for unknown and duplicate fields, then decoded (checked), or
// decoded once where nothing is to be checked (known).
func BenchmarkDecodeBody(b *testing.B) {
	data := []byte(widgetJSON)
	b.Run("checked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, _, err := codec.CheckJSONFields(data, widgetType); err != nil || !r.Empty() {
				b.Fatal(r, err)
			}
			if err := codec.UnmarshalJSON(data, reflect.New(widgetType).Interface()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("known", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := codec.UnmarshalKnownJSON(data, reflect.New(widgetType).Interface()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
