package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/codec"
)

// TestFormatListStreamed: a list written piece by piece from the cached
// elements is byte for byte the list codec.AppendList assembles from the
// same elements (read back one by one with GET), in every format and view
// whose list is a concatenation, empty lists included; and every list,
// streamed or assembled (Table, YAML), says its exact Content-Length.
func TestFormatListStreamed(t *testing.T) {
	_, c := newFormatsServer(t)
	for i := range 3 {
		c.create(newWidget("three", fmt.Sprintf("w%d", i)))
	}
	type view struct {
		name          string
		list, element string // Accept parameters of the list and of one item
	}
	views := []view{{name: "object"}}
	for _, v := range []string{"v1", "v1beta1"} {
		views = append(views, view{"metadata-" + v, ";as=PartialObjectMetadataList;g=meta.k8s.io;v=" + v, ";as=PartialObjectMetadata;g=meta.k8s.io;v=" + v})
	}
	for _, mt := range []string{mtJSON, mtProtobuf, mtCBOR} {
		for _, v := range views {
			for _, ns := range []string{"empty", "three"} {
				t.Run(mt+"/"+v.name+"/"+ns, func(t *testing.T) {
					r := c.do(http.MethodGet, widgetsIn(ns), nil, "Accept", mt+v.list).mustCode(t, http.StatusOK)
					wantContentLength(t, r)
					var doc struct {
						kapi.TypeMeta `json:",inline"`
						Metadata      kapi.ListMeta `json:"metadata"`
					}
					// The list's type and metadata, read from its JSON twin
					// (no write happens in between).
					apiservertest.DecodeJSON(t, c.do(http.MethodGet, widgetsIn(ns), nil, "Accept", mtJSON+v.list).mustCode(t, http.StatusOK).Body, &doc)
					var elements [][]byte
					for i := range map[string]int{"empty": 0, "three": 3}[ns] {
						one := c.do(http.MethodGet, widgetPath(ns, fmt.Sprintf("w%d", i)), nil, "Accept", mt+v.element).mustCode(t, http.StatusOK)
						switch mt {
						case mtProtobuf:
							_, raw := apiservertest.ProtoEnvelope(t, one.Body)
							elements = append(elements, raw)
						case mtCBOR:
							elements = append(elements, bytes.TrimPrefix(one.Body, []byte{0xd9, 0xd9, 0xf7}))
						default:
							elements = append(elements, one.Body)
						}
					}
					want, err := codec.ByMediaType(mt).AppendList(nil, doc.TypeMeta, doc.Metadata, elements)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(r.Body, want) {
						t.Errorf("the streamed list differs from the assembled one:\ngot  %q\nwant %q", r.Body, want)
					}
				})
			}
		}
	}
	for _, accept := range []string{mtYAML, tableAccept(mtJSON, "v1"), tableAccept(mtCBOR, "v1"), "pretty"} {
		for _, ns := range []string{"empty", "three"} {
			t.Run(accept+"/"+ns, func(t *testing.T) {
				path, mt := widgetsIn(ns), accept
				if accept == "pretty" {
					path, mt = path+"?pretty=true", mtJSON
				}
				wantContentLength(t, c.do(http.MethodGet, path, nil, "Accept", mt).mustCode(t, http.StatusOK))
			})
		}
	}
}

func wantContentLength(t testing.TB, r *response) {
	t.Helper()
	if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Body)) {
		t.Errorf("Content-Length %q for a body of %d bytes", got, len(r.Body))
	}
}
