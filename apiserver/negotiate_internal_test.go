package apiserver

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

// TestNegotiatedIsNegotiate: the remembered negotiation chooses what
// codec.Negotiate chooses, for every offer a request makes, the first time
// and from the memo; refusals are never remembered; and headers past the
// memo's bounds are still negotiated.
func TestNegotiatedIsNegotiate(t *testing.T) {
	accepts := []string{
		"", "application/json", "application/json, */*", "*/*", "application/yaml",
		"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf, */*",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
		"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
		"application/cbor", "text/html", "application/json;q=0", strings.Repeat("a", negotiatedMaxAccept+1),
	}
	offers := []codec.Offer{
		{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Watch: true},
		{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}},
		{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadataList}},
		{Views: []codec.View{codec.ViewObject}},
		{Views: []codec.View{codec.ViewObject}, Protobuf: true},
		{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Protobuf: true},
	}
	for round := range 2 {
		for _, accept := range accepts {
			for _, offer := range offers {
				want, wantErr := codec.Negotiate(accept, offer)
				got, err := negotiated(accept, offer)
				if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() || got != want {
					t.Errorf("round %d, Accept %.40q, offer %+v: %+v (%v), want %+v (%v)", round, accept, offer, got, err, want, wantErr)
				}
			}
		}
	}
	for key := range *negotiatedTargets.Load() {
		if len(key.accept) > negotiatedMaxAccept {
			t.Errorf("the memo keeps an Accept header of %d bytes", len(key.accept))
		}
	}
	for i := range 2 * negotiatedMax {
		accept := "application/json;x=" + strings.Repeat("y", i%200) + string(rune('a'+i/200))
		if _, err := negotiated(accept, offers[0]); err != nil {
			t.Fatalf("Accept %q: %v", accept, err)
		}
	}
	if n := len(*negotiatedTargets.Load()); n > negotiatedMax {
		t.Errorf("the memo holds %d negotiations, more than %d", n, negotiatedMax)
	}
}
