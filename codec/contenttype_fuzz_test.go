package codec_test

import (
	"errors"
	"mime"
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
		// The answer is the parsed media type's, as it was before a media
		// type of the table was taken as it is, unparsed.
		if mediaType, _, perr := mime.ParseMediaType(contentType); perr != nil || codec.ByMediaType(mediaType) == nil {
			if err == nil {
				t.Fatalf("ForContentType(%q) = %v, want an error (parsed: %q, %v)", contentType, format, mediaType, perr)
			}
		} else if want, werr := codec.ForContentType(mediaType, protobuf); want != format || (werr == nil) != (err == nil) {
			t.Fatalf("ForContentType(%q) = %v, %v; its media type %q gives %v, %v", contentType, format, err, mediaType, want, werr)
		}
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
