package codec_test

import (
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

// FuzzForContentType: the Content-Type of a request body picks a format of
// the table or is ErrUnsupportedMediaType (415), and the format picked is
// picked again by its own media type.
func FuzzForContentType(f *testing.F) {
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", "application/yaml", "application/vnd.kubernetes.protobuf",
		"application/cbor", "application/json;;;", "*/*", "application/", "text/plain", "application/JSON", "",
		"application/json;as=Table;g=meta.k8s.io;v=v1", "application/vnd.kubernetes.protobuf;stream=watch",
	} {
		f.Add(ct, true)
	}
	f.Fuzz(func(t *testing.T, contentType string, protobuf bool) {
		format, err := codec.ForContentType(contentType, protobuf)
		if err != nil {
			if !errors.Is(err, codec.ErrUnsupportedMediaType) {
				t.Fatalf("ForContentType(%q): %v is not ErrUnsupportedMediaType", contentType, err)
			}
			return
		}
		if format == nil || codec.ByMediaType(format.MediaType()) != format {
			t.Fatalf("ForContentType(%q) = %v, not a format of the table", contentType, format)
		}
		if !protobuf && !format.FromJSON() {
			t.Fatalf("ForContentType(%q, false) picked protobuf", contentType)
		}
		if again, err := codec.ForContentType(format.MediaType(), protobuf); err != nil || again != format {
			t.Fatalf("ForContentType(%q) = %s, but ForContentType(%q) = %v, %v", contentType, format.MediaType(), format.MediaType(), again, err)
		}
	})
}
