package apiserver_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// TestResponseContentType pins the Content-Type of every view × format ×
// verb against what kube-apiserver v1.37 sends:
//
//   - get and list: WriteObjectNegotiated (endpoints/handlers/
//     responsewriters/writers.go) writes the negotiated serializer's bare
//     MediaType for a resource, whatever view the client asked for; only
//     aggregated discovery names its kind in the Content-Type
//     (listGVKInContentType). The body names the view's kind.
//   - watch: serveWatchHandler (handlers/watch.go) writes application/json,
//     application/cbor-seq, or the media type with ;stream=watch, whatever
//     the view; YAML has no stream serializer, so a YAML watch is 406.
//   - a view a verb cannot take (PartialObjectMetadataList of one object,
//     PartialObjectMetadata of a list) is 406 (handlers/response.go
//     asPartialObjectMetadata(List)); so is a Table in protobuf, which has
//     no protobuf mapping (meta/v1 types.go, +protobuf=false).
//
// One difference is deliberate: kube-apiserver offers a Table in JSON and
// YAML only (RequestScope.AllowsMediaTypeTransform, handlers/rest.go, not
// yet taught CBOR); kapi serves it in CBOR too, as it serves every
// resource in every format. A client that accepts a CBOR Table gets one.
func TestResponseContentType(t *testing.T) {
	_, c := newFormatsServer(t)
	const ns = "content-type"
	c.create(newWidget(ns, "a"))

	const (
		object  = ""
		table   = "Table"
		meta    = "PartialObjectMetadata"
		metaLst = "PartialObjectMetadataList"
	)
	get, list, watch := widgetPath(ns, "a"), widgetsIn(ns), widgetsIn(ns)+"?watch=true"
	cases := []struct {
		verb, path, view, format string
		want                     string // Content-Type; "" for 406
		wantKind                 string // of the body, or of a watch event's object
	}{
		{"get", get, object, mtJSON, mtJSON, "Widget"},
		{"get", get, object, mtYAML, mtYAML, "Widget"},
		{"get", get, object, mtProtobuf, mtProtobuf, "Widget"},
		{"get", get, object, mtCBOR, mtCBOR, "Widget"},
		{"list", list, object, mtJSON, mtJSON, "WidgetList"},
		{"list", list, object, mtYAML, mtYAML, "WidgetList"},
		{"list", list, object, mtProtobuf, mtProtobuf, "WidgetList"},
		{"list", list, object, mtCBOR, mtCBOR, "WidgetList"},
		{"watch", watch, object, mtJSON, mtJSON, "Widget"},
		{"watch", watch, object, mtYAML, "", ""},
		{"watch", watch, object, mtProtobuf, mtProtobuf + ";stream=watch", "Widget"},
		{"watch", watch, object, mtCBOR, "application/cbor-seq", "Widget"},

		{"get", get, table, mtJSON, mtJSON, "Table"},
		{"get", get, table, mtYAML, mtYAML, "Table"},
		{"get", get, table, mtProtobuf, "", ""},
		{"get", get, table, mtCBOR, mtCBOR, "Table"},
		{"list", list, table, mtJSON, mtJSON, "Table"},
		{"list", list, table, mtYAML, mtYAML, "Table"},
		{"list", list, table, mtProtobuf, "", ""},
		{"list", list, table, mtCBOR, mtCBOR, "Table"},
		{"watch", watch, table, mtJSON, mtJSON, "Table"},
		{"watch", watch, table, mtYAML, "", ""},
		{"watch", watch, table, mtProtobuf, "", ""},
		{"watch", watch, table, mtCBOR, "application/cbor-seq", "Table"},

		{"get", get, meta, mtJSON, mtJSON, meta},
		{"get", get, meta, mtYAML, mtYAML, meta},
		{"get", get, meta, mtProtobuf, mtProtobuf, meta},
		{"get", get, meta, mtCBOR, mtCBOR, meta},
		{"list", list, meta, mtJSON, "", ""},
		{"list", list, meta, mtProtobuf, "", ""},
		{"watch", watch, meta, mtJSON, mtJSON, meta},
		{"watch", watch, meta, mtYAML, "", ""},
		{"watch", watch, meta, mtProtobuf, mtProtobuf + ";stream=watch", meta},
		{"watch", watch, meta, mtCBOR, "application/cbor-seq", meta},

		{"get", get, metaLst, mtJSON, "", ""},
		{"get", get, metaLst, mtProtobuf, "", ""},
		{"list", list, metaLst, mtJSON, mtJSON, metaLst},
		{"list", list, metaLst, mtYAML, mtYAML, metaLst},
		{"list", list, metaLst, mtProtobuf, mtProtobuf, metaLst},
		{"list", list, metaLst, mtCBOR, mtCBOR, metaLst},
		// A watch's events are single objects: the metadata client watches
		// with as=PartialObjectMetadata.
		{"watch", watch, metaLst, mtJSON, "", ""},
	}
	for _, tc := range cases {
		accept := tc.format
		view := tc.view
		if view == object {
			view = "Object"
		} else {
			accept += ";as=" + tc.view + ";g=meta.k8s.io;v=v1"
		}
		t.Run(tc.verb+"/"+view+"/"+apiservertest.BareType(t, tc.format), func(t *testing.T) {
			var kind struct {
				Kind string `json:"kind"`
			}
			switch {
			case tc.want == "":
				r := c.do(http.MethodGet, tc.path, nil, "Accept", accept)
				statusOfResponse(t, r, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
				return
			case tc.verb == "watch":
				ws := openStream(t, c, tc.path, accept, tc.want)
				ev := ws.Next()
				if err := json.Unmarshal(ev.Object, &kind); err != nil {
					t.Fatalf("event %s: %v", ev.Object, err)
				}
			default:
				r := c.do(http.MethodGet, tc.path, nil, "Accept", accept).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, tc.want)
				apiservertest.DecodeJSON(t, formats.JSON(t, tc.format, r.Body), &kind)
			}
			if kind.Kind != tc.wantKind {
				t.Errorf("kind %q, want %q", kind.Kind, tc.wantKind)
			}
		})
	}
}
