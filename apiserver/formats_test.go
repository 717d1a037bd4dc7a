package apiserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestFormatMatrix is issue 3's matrix: every media type × get, list,
// create, update and watch over HTTP, each response read back and shown to
// be the document the JSON answer is.
func TestFormatMatrix(t *testing.T) {
	_, c := newFormatsServer(t)
	for _, f := range apiservertest.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			ns := "matrix-" + f.Name
			a := c.create(newWidget(ns, "a"))
			c.create(newWidget(ns, "b"))
			accept := []string{"Accept", f.MediaType}

			t.Run("get", func(t *testing.T) {
				r := c.do(http.MethodGet, widgetPath(ns, "a"), nil, accept...).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				if f.MediaType == mtProtobuf {
					tm, raw := apiservertest.ProtoEnvelope(t, r.Body)
					if tm != (kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}) {
						t.Errorf("envelope type %+v, want Widget example.com/v1", tm)
					}
					// ObjectMeta with Kubernetes' numbers, read without kapi's decoder.
					if m := apiservertest.ProtoObjectMeta(t, raw); m.Name != "a" || m.Namespace != ns || m.UID != a.UID || m.ResourceVersion != a.ResourceVersion ||
						m.Generation != 1 || m.CreationTimestamp.Unix() != a.CreationTimestamp.Unix() {
						t.Errorf("protobuf ObjectMeta %+v, want that of %+v", m, a.ObjectMeta)
					}
				}
				got := formats.JSON(t, f.MediaType, r.Body)
				apiservertest.SameJSON(t, "GET", got, c.get(widgetPath(ns, "a")).mustCode(t, http.StatusOK).Body)
				if w := widgetOf(t, got); w.ResourceVersion != a.ResourceVersion || w.UID != a.UID || w.Kind != "Widget" {
					t.Errorf("GET: rv %s uid %s kind %q, want %s %s Widget", w.ResourceVersion, w.UID, w.Kind, a.ResourceVersion, a.UID)
				}
			})

			t.Run("list", func(t *testing.T) {
				for _, q := range []string{"", "?limit=1"} {
					r := c.do(http.MethodGet, widgetsIn(ns)+q, nil, accept...).mustCode(t, http.StatusOK)
					apiservertest.WantContentType(t, r.Header, f.MediaType)
					got := formats.JSON(t, f.MediaType, r.Body)
					apiservertest.SameJSON(t, "LIST"+q, got, c.get(widgetsIn(ns)+q).mustCode(t, http.StatusOK).Body)
					var l widgetList
					apiservertest.DecodeJSON(t, got, &l)
					if l.Kind != "WidgetList" || l.APIVersion != "example.com/v1" {
						t.Errorf("LIST%s: kind %q apiVersion %q", q, l.Kind, l.APIVersion)
					}
					mustRevision(t, "list resourceVersion", l.Metadata.ResourceVersion)
					if q == "" && !slices.Equal(l.names(), []string{"a", "b"}) {
						t.Errorf("LIST: items %q, want a b", l.names())
					}
					if q != "" && (l.Metadata.Continue == "" || l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 1 || len(l.Items) != 1) {
						t.Errorf("LIST%s: %d items, continue %q, remainingItemCount %v; want 1 item, a token and 1 remaining", q, len(l.Items), l.Metadata.Continue, l.Metadata.RemainingItemCount)
					}
				}
			})

			t.Run("create", func(t *testing.T) {
				in := newWidget(ns, "created")
				in.Labels = map[string]string{"format": f.Name}
				in.Annotations = map[string]string{"note": "sent as " + f.MediaType}
				in.Spec.Replicas = ptr(int32(3))
				in.Spec.Size = 7
				in.Spec.Ports = []widgetapi.WidgetPort{{Name: "http", Port: 8080}}
				in.Spec.Selector = map[string]string{"app": "demo"}
				r := c.do(http.MethodPost, widgetsIn(ns), widgetBody(t, f, in, apiservertest.CBOROptions{}),
					"Content-Type", f.MediaType, "Accept", f.MediaType).mustCode(t, http.StatusCreated)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				got := formats.JSON(t, f.MediaType, r.Body)
				w := widgetOf(t, got)
				if w.Name != "created" || w.Namespace != ns || w.Labels["format"] != f.Name || w.Annotations["note"] != in.Annotations["note"] ||
					w.Spec.Color != "Red" || w.Spec.Replicas == nil || *w.Spec.Replicas != 3 || w.Spec.Size != 7 ||
					!slices.Equal(w.Spec.Ports, []widgetapi.WidgetPort{{Name: "http", Port: 8080, Protocol: "TCP"}}) || w.Spec.Selector["app"] != "demo" {
					t.Errorf("POST answered %s, want what was sent (with protocol TCP defaulted)", got)
				}
				if w.UID == "" || w.Generation != 1 || w.CreationTimestamp.IsZero() {
					t.Errorf("POST: uid %q generation %d creationTimestamp %v, want them set", w.UID, w.Generation, w.CreationTimestamp)
				}
				mustRevision(t, "created resourceVersion", w.ResourceVersion)
				apiservertest.SameJSON(t, "POST response", got, c.get(widgetPath(ns, "created")).mustCode(t, http.StatusOK).Body)
			})

			t.Run("update", func(t *testing.T) {
				cur := c.read(ns, "a")
				cur.Spec.Color = "Blue"
				cur.Labels = map[string]string{"updated": f.Name}
				cur.Spec.Ports = []widgetapi.WidgetPort{{Name: "dns", Port: 53, Protocol: "UDP"}}
				// CBOR as Kubernetes writes it this time: strings as byte strings.
				r := c.do(http.MethodPut, widgetPath(ns, "a"), widgetBody(t, f, cur, apiservertest.CBOROptions{ByteStrings: true}),
					"Content-Type", f.MediaType, "Accept", f.MediaType).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				got := formats.JSON(t, f.MediaType, r.Body)
				w := widgetOf(t, got)
				if w.Spec.Color != "Blue" || w.Labels["updated"] != f.Name || len(w.Spec.Ports) != 1 || w.Spec.Ports[0].Protocol != "UDP" {
					t.Errorf("PUT answered %s, want the update applied", got)
				}
				if mustRevision(t, "rv", w.ResourceVersion) <= mustRevision(t, "rv", cur.ResourceVersion) || w.Generation != 2 || w.UID != cur.UID ||
					!w.CreationTimestamp.Equal(cur.CreationTimestamp.Time) {
					t.Errorf("PUT: rv %s (was %s) generation %d uid %s creationTimestamp %v; want a later rv, generation 2, the same uid and creation time",
						w.ResourceVersion, cur.ResourceVersion, w.Generation, w.UID, w.CreationTimestamp)
				}
				apiservertest.SameJSON(t, "PUT response", got, c.get(widgetPath(ns, "a")).mustCode(t, http.StatusOK).Body)
			})

			t.Run("update status", func(t *testing.T) {
				cur := c.read(ns, "b")
				cur.Status = widgetapi.WidgetStatus{Replicas: 5, Selector: "app=b", ObservedGeneration: cur.Generation}
				cur.Spec.Color = "Green" // ignored by /status
				r := c.do(http.MethodPut, widgetPath(ns, "b")+"/status", widgetBody(t, f, cur, apiservertest.CBOROptions{ByteStrings: true}),
					"Content-Type", f.MediaType, "Accept", f.MediaType).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				got := formats.JSON(t, f.MediaType, r.Body)
				w := widgetOf(t, got)
				if w.Status.Replicas != 5 || w.Status.Selector != "app=b" || w.Status.ObservedGeneration != cur.Generation || w.Spec.Color != "Red" {
					t.Errorf("PUT /status answered %s, want the new status and the old spec", got)
				}
				apiservertest.SameJSON(t, "PUT /status response", got, c.get(widgetPath(ns, "b")).mustCode(t, http.StatusOK).Body)
			})

			t.Run("watch", func(t *testing.T) {
				if f.StreamType == "" {
					// YAML cannot carry a watch stream.
					r := c.do(http.MethodGet, widgetsIn(ns)+"?watch=true", nil, accept...)
					st := statusOfResponse(t, r, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
					t.Logf("YAML watch: %s %q", r.Header.Get("Content-Type"), st.Message)
					return
				}
				list := c.list(widgetsIn(ns))
				byName := map[string][]byte{}
				for _, it := range list.Items {
					byName[it.Name] = apiservertest.MustJSON(t, it)
				}

				// Initial events, then the bookmark that ends them.
				ws := openStream(t, c, widgetsIn(ns)+"?watch=true&allowWatchBookmarks=true", f.MediaType, f.StreamType)
				evs := ws.NextN(len(list.Items)+1, false)
				for _, ev := range evs[:len(list.Items)] {
					want, ok := byName[ev.Name()]
					if ev.Type != "ADDED" || !ok {
						t.Fatalf("initial event %s %s, want ADDED of one of %q", ev.Type, ev.Name(), list.names())
					}
					apiservertest.SameJSON(t, "initial ADDED "+ev.Name(), ev.Object, want)
				}
				bm := evs[len(evs)-1]
				var b bookmark
				apiservertest.DecodeJSON(t, bm.Object, &b)
				if bm.Type != "BOOKMARK" || b.Kind != "Widget" || b.APIVersion != "example.com/v1" || b.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
					t.Errorf("event %s %s, want the BOOKMARK of a Widget that ends the initial events", bm.Type, bm.Object)
				}
				mustRevision(t, "bookmark resourceVersion", b.Metadata.ResourceVersion)
				ws.Stop()

				// Changes, side by side with a JSON watch from the same revision.
				from := widgetsIn(ns) + "?watch=true&resourceVersion=" + list.Metadata.ResourceVersion
				jw := openStream(t, c, from, mtJSON, mtJSON)
				fw := openStream(t, c, from, f.MediaType, f.StreamType)
				c.create(newWidget(ns, "w"))
				x := c.read(ns, "w")
				x.Spec.Color = "Green"
				c.update(x)
				c.do(http.MethodDelete, widgetPath(ns, "w"), nil).mustCode(t, http.StatusOK)
				je, fe := jw.NextN(3, true), fw.NextN(3, true)
				if want := []string{"ADDED w", "MODIFIED w", "DELETED w"}; !slices.Equal(apiservertest.Summary(fe), want) || !slices.Equal(apiservertest.Summary(je), want) {
					t.Fatalf("events %q (JSON %q), want %q", apiservertest.Summary(fe), apiservertest.Summary(je), want)
				}
				for i := range fe {
					apiservertest.SameJSON(t, fe[i].Type+" event", fe[i].Object, je[i].Object)
				}
			})
		})
	}
}

// tableAccept is the Accept of a Table in format mt.
func tableAccept(mt, version string) string {
	return mt + ";as=Table;g=meta.k8s.io;v=" + version
}

// blankAge empties the Age cells (column 3 of widgets), which move with the
// clock between two requests.
func blankAge(t testing.TB, doc []byte) []byte {
	t.Helper()
	var tbl map[string]any
	apiservertest.DecodeJSON(t, doc, &tbl)
	rows, _ := tbl["rows"].([]any)
	for _, r := range rows {
		if cells, _ := r.(map[string]any)["cells"].([]any); len(cells) == 4 {
			cells[3] = "<age>"
		}
	}
	return apiservertest.MustJSON(t, tbl)
}

var ageCell = regexp.MustCompile(`^[0-9]+(s|m[0-9]*s?)$`)

// checkWidgetTable checks a Table of widgets: its type, columns (when
// wantColumns) and one row per name, with the default includeObject.
func checkWidgetTable(t testing.TB, tbl kapi.Table, version string, wantColumns bool, names ...string) {
	t.Helper()
	if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/"+version {
		t.Errorf("kind %q apiVersion %q, want Table meta.k8s.io/%s", tbl.Kind, tbl.APIVersion, version)
	}
	mustRevision(t, "Table resourceVersion", tbl.ResourceVersion)
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name+":"+c.Type)
	}
	if wantColumns {
		if want := []string{"Name:string", "Color:string", "Replicas:integer", "Age:date"}; !slices.Equal(cols, want) {
			t.Errorf("columns %q, want %q", cols, want)
		}
		if len(tbl.ColumnDefinitions) > 0 && tbl.ColumnDefinitions[0].Format != "name" {
			t.Errorf("the Name column has format %q, want name", tbl.ColumnDefinitions[0].Format)
		}
	} else if len(cols) != 0 {
		t.Errorf("columns %q, want none after the first response", cols)
	}
	var got []string
	for _, row := range tbl.Rows {
		if len(row.Cells) != 4 {
			t.Errorf("row %v, want 4 cells", row.Cells)
			continue
		}
		name, _ := row.Cells[0].(string)
		got = append(got, name)
		if _, ok := row.Cells[1].(string); !ok {
			t.Errorf("row %s: Color cell %v is not a string", name, row.Cells[1])
		}
		if n, ok := row.Cells[2].(float64); !ok || n < 0 {
			t.Errorf("row %s: Replicas cell %v is not an integer", name, row.Cells[2])
		}
		if age, _ := row.Cells[3].(string); !ageCell.MatchString(age) {
			t.Errorf("row %s: Age cell %v, want a short age such as 3s", name, row.Cells[3])
		}
		var partial kapi.PartialObjectMetadata
		if err := json.Unmarshal(row.Object, &partial); err != nil || partial.Kind != "PartialObjectMetadata" ||
			partial.APIVersion != "meta.k8s.io/"+version || partial.Name != name || partial.ResourceVersion == "" {
			t.Errorf("row %s: object %s, want its PartialObjectMetadata in meta.k8s.io/%s (%v)", name, row.Object, version, err)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("rows %q, want %q", got, names)
	}
}

func TestFormatTables(t *testing.T) {
	_, c := newFormatsServer(t)
	a := c.create(newWidget("default", "a"))
	c.create(newWidget("default", "b"))
	tableFormats := []apiservertest.Format{apiservertest.Formats()[0], apiservertest.Formats()[1], apiservertest.Formats()[3]} // JSON, YAML, CBOR

	for _, f := range tableFormats {
		for _, v := range []string{"v1", "v1beta1"} {
			t.Run(f.Name+"/"+v+"/get", func(t *testing.T) {
				r := c.do(http.MethodGet, widgetPath("default", "a"), nil, "Accept", tableAccept(f.MediaType, v)).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, f.MediaType) // bare, as kube-apiserver's
				got := formats.JSON(t, f.MediaType, r.Body)
				var tbl kapi.Table
				apiservertest.DecodeJSON(t, got, &tbl)
				checkWidgetTable(t, tbl, v, true, "a")
				if tbl.ResourceVersion != a.ResourceVersion {
					t.Errorf("Table resourceVersion %s, want the object's %s", tbl.ResourceVersion, a.ResourceVersion)
				}
				if len(tbl.Rows) == 1 && (tbl.Rows[0].Cells[1] != "Red" || tbl.Rows[0].Cells[2] != float64(1)) {
					t.Errorf("cells %v, want a Red 1", tbl.Rows[0].Cells)
				}
				jsonTable := c.do(http.MethodGet, widgetPath("default", "a"), nil, "Accept", tableAccept(mtJSON, v)).mustCode(t, http.StatusOK).Body
				apiservertest.SameJSON(t, "Table", blankAge(t, got), blankAge(t, jsonTable))
			})
			t.Run(f.Name+"/"+v+"/list", func(t *testing.T) {
				accept := tableAccept(f.MediaType, v)
				r := c.do(http.MethodGet, widgetsIn("default")+"?limit=1", nil, "Accept", accept).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				var first kapi.Table
				apiservertest.DecodeJSON(t, formats.JSON(t, f.MediaType, r.Body), &first)
				checkWidgetTable(t, first, v, true, "a")
				if first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 1 {
					t.Fatalf("first page: continue %q remainingItemCount %v, want a token and 1", first.Continue, first.RemainingItemCount)
				}
				r = c.do(http.MethodGet, widgetsIn("default")+"?limit=1&continue="+first.Continue, nil, "Accept", accept).mustCode(t, http.StatusOK)
				var second kapi.Table
				apiservertest.DecodeJSON(t, formats.JSON(t, f.MediaType, r.Body), &second)
				checkWidgetTable(t, second, v, true, "b")
				if second.Continue != "" || second.ResourceVersion != first.ResourceVersion {
					t.Errorf("last page: continue %q resourceVersion %s, want none and the first page's %s", second.Continue, second.ResourceVersion, first.ResourceVersion)
				}
				whole := c.do(http.MethodGet, widgetsIn("default"), nil, "Accept", accept).mustCode(t, http.StatusOK)
				var all kapi.Table
				apiservertest.DecodeJSON(t, formats.JSON(t, f.MediaType, whole.Body), &all)
				checkWidgetTable(t, all, v, true, "a", "b")
			})
		}
		t.Run(f.Name+"/watch", func(t *testing.T) {
			path := widgetsIn("default") + "?watch=true"
			if f.StreamType == "" {
				r := c.do(http.MethodGet, path, nil, "Accept", tableAccept(f.MediaType, "v1"))
				statusOfResponse(t, r, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
				return
			}
			// The stream's Content-Type is bare whatever the view, as
			// kube-apiserver's: the events' objects name their kind.
			ws := openStream(t, c, path, tableAccept(f.MediaType, "v1"), f.StreamType)
			evs := ws.NextN(2, true)
			var names []string
			for i, ev := range evs {
				var tbl kapi.Table
				apiservertest.DecodeJSON(t, ev.Object, &tbl)
				if ev.Type != "ADDED" || len(tbl.Rows) != 1 {
					t.Fatalf("event %d: %s with %d rows, want ADDED with 1", i, ev.Type, len(tbl.Rows))
				}
				name, _ := tbl.Rows[0].Cells[0].(string)
				names = append(names, name)
				checkWidgetTable(t, tbl, "v1", i == 0, name) // column definitions with the first event only
			}
			if slices.Sort(names); !slices.Equal(names, []string{"a", "b"}) {
				t.Errorf("ADDED %q, want a b", names)
			}
			cur := c.read("default", "b")
			color := map[string]string{"Red": "Green", "Green": "Blue", "Blue": "Red"}[cur.Spec.Color] // a change every time
			cur.Spec.Color = color
			c.update(cur)
			ev := ws.NextN(1, true)[0]
			var tbl kapi.Table
			apiservertest.DecodeJSON(t, ev.Object, &tbl)
			checkWidgetTable(t, tbl, "v1", false, "b")
			if ev.Type != "MODIFIED" || len(tbl.Rows) != 1 || tbl.Rows[0].Cells[1] != color {
				t.Errorf("event %s %s, want MODIFIED b with Color %s", ev.Type, ev.Object, color)
			}
		})
	}

	t.Run("default columns", func(t *testing.T) {
		thing := c.do(http.MethodPost, thingsPath, `{"apiVersion":"plain.example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"size":3}}`).
			mustCode(t, http.StatusCreated)
		var created plainThing
		thing.into(t, &created)
		r := c.do(http.MethodGet, thingsPath, nil, "Accept", tableAccept(mtJSON, "v1")).mustCode(t, http.StatusOK)
		var tbl kapi.Table
		r.into(t, &tbl)
		var cols []string
		for _, col := range tbl.ColumnDefinitions {
			cols = append(cols, col.Name+":"+col.Type)
		}
		if want := []string{"Name:string", "Created At:date"}; !slices.Equal(cols, want) {
			t.Errorf("columns %q, want %q", cols, want)
		}
		want := []any{"t", created.CreationTimestamp.UTC().Format(time.RFC3339)}
		if len(tbl.Rows) != 1 || !slices.Equal(tbl.Rows[0].Cells, want) {
			t.Errorf("rows %+v, want cells %q", tbl.Rows, want)
		}
	})

	t.Run("includeObject", func(t *testing.T) {
		get := func(t *testing.T, query, accept string) *response {
			return c.do(http.MethodGet, widgetPath("default", "a")+query, nil, "Accept", accept)
		}
		row := func(t *testing.T, r *response) kapi.TableRow {
			t.Helper()
			var tbl kapi.Table
			r.mustCode(t, http.StatusOK).into(t, &tbl)
			if len(tbl.Rows) != 1 {
				t.Fatalf("%d rows, want 1", len(tbl.Rows))
			}
			return tbl.Rows[0]
		}
		accept := tableAccept(mtJSON, "v1")
		if o := row(t, get(t, "?includeObject=None", accept)).Object; len(o) != 0 && string(o) != "null" {
			t.Errorf("None: object %s, want none", o)
		}
		for _, q := range []string{"", "?includeObject=Metadata"} {
			var p kapi.PartialObjectMetadata
			apiservertest.DecodeJSON(t, row(t, get(t, q, accept)).Object, &p)
			if p.Kind != "PartialObjectMetadata" || p.APIVersion != "meta.k8s.io/v1" || p.Name != "a" || p.UID == "" {
				t.Errorf("%q: object %+v, want the widget's PartialObjectMetadata", q, p)
			}
		}
		full := c.get(widgetPath("default", "a")).mustCode(t, http.StatusOK).Body
		apiservertest.SameJSON(t, "includeObject=Object", row(t, get(t, "?includeObject=Object", accept)).Object, full)
		// In a list and in CBOR too.
		r := c.do(http.MethodGet, widgetsIn("default")+"?includeObject=Object", nil, "Accept", tableAccept(mtCBOR, "v1")).mustCode(t, http.StatusOK)
		var tbl kapi.Table
		apiservertest.DecodeJSON(t, respJSON(t, r), &tbl)
		if len(tbl.Rows) != 2 {
			t.Fatalf("%d rows, want 2", len(tbl.Rows))
		}
		apiservertest.SameJSON(t, "CBOR list row object", tbl.Rows[0].Object, full)

		st := get(t, "?includeObject=Bogus", accept).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		t.Logf("includeObject=Bogus: %q", st.Message)
	})

	t.Run("includeObject is a Table option only", func(t *testing.T) {
		// kube-apiserver reads includeObject only when it converts to a
		// Table (handlers/response.go optionsForTransform); other reads
		// ignore it.
		r := c.do(http.MethodGet, widgetPath("default", "a")+"?includeObject=Bogus", nil, "Accept", mtJSON)
		if r.Code != http.StatusOK {
			t.Errorf("GET (not a Table) with includeObject=Bogus: HTTP %d, want 200 as kube-apiserver; body %s", r.Code, r.Body)
		}
	})

	t.Run("Table has no protobuf", func(t *testing.T) {
		r := c.do(http.MethodGet, widgetsIn("default"), nil, "Accept", tableAccept(mtProtobuf, "v1"))
		r.failure(t, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
		// With something else acceptable, that is served.
		r = c.do(http.MethodGet, widgetsIn("default"), nil, "Accept", tableAccept(mtProtobuf, "v1")+","+mtJSON).mustCode(t, http.StatusOK)
		apiservertest.WantContentType(t, r.Header, mtJSON)
	})
}

// metadataAccept is the Accept of a metadata view in format mt.
func metadataAccept(mt, as, version string) string {
	return mt + ";as=" + as + ";g=meta.k8s.io;v=" + version
}

func TestFormatPartialObjectMetadata(t *testing.T) {
	_, c := newFormatsServer(t)
	a := c.create(newWidget("default", "a"))
	c.create(newWidget("default", "b"))
	var widgetDoc struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	c.get(widgetPath("default", "a")).mustCode(t, http.StatusOK).into(t, &widgetDoc)

	for _, v := range []string{"v1", "v1beta1"} {
		t.Run(v+"/get", func(t *testing.T) {
			var jsonDoc []byte
			for _, mt := range []string{mtJSON, mtProtobuf} {
				accept := metadataAccept(mt, "PartialObjectMetadata", v)
				r := c.do(http.MethodGet, widgetPath("default", "a"), nil, "Accept", accept).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, mt)
				if mt == mtProtobuf {
					if tm, _ := apiservertest.ProtoEnvelope(t, r.Body); tm != (kapi.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/" + v}) {
						t.Errorf("envelope %+v, want PartialObjectMetadata meta.k8s.io/%s", tm, v)
					}
				}
				doc := formats.JSON(t, mt, r.Body)
				var p map[string]json.RawMessage
				apiservertest.DecodeJSON(t, doc, &p)
				if string(p["kind"]) != `"PartialObjectMetadata"` || string(p["apiVersion"]) != `"meta.k8s.io/`+v+`"` || p["spec"] != nil {
					t.Errorf("%s: %s, want a PartialObjectMetadata in meta.k8s.io/%s without spec", mt, doc, v)
				}
				apiservertest.SameJSON(t, mt+" metadata", p["metadata"], widgetDoc.Metadata)
				if mt == mtJSON {
					jsonDoc = doc
				} else {
					apiservertest.SameJSON(t, "protobuf PartialObjectMetadata", doc, jsonDoc)
				}
			}
		})
	}

	t.Run("list", func(t *testing.T) {
		for _, q := range []string{"", "?limit=1"} {
			var jsonDoc []byte
			for _, mt := range []string{mtJSON, mtProtobuf} {
				accept := metadataAccept(mt, "PartialObjectMetadataList", "v1")
				r := c.do(http.MethodGet, widgetsIn("default")+q, nil, "Accept", accept).mustCode(t, http.StatusOK)
				apiservertest.WantContentType(t, r.Header, mt)
				doc := formats.JSON(t, mt, r.Body)
				var l struct {
					kapi.TypeMeta `json:",inline"`
					Metadata      kapi.ListMeta                `json:"metadata"`
					Items         []kapi.PartialObjectMetadata `json:"items"`
				}
				apiservertest.DecodeJSON(t, doc, &l)
				if l.Kind != "PartialObjectMetadataList" || l.APIVersion != "meta.k8s.io/v1" {
					t.Errorf("%s%s: kind %q apiVersion %q", mt, q, l.Kind, l.APIVersion)
				}
				mustRevision(t, "list resourceVersion", l.Metadata.ResourceVersion)
				wantItems := 2
				if q != "" {
					wantItems = 1
					if l.Metadata.Continue == "" {
						t.Errorf("%s%s: no continue token", mt, q)
					}
				}
				if len(l.Items) != wantItems || l.Items[0].Name != "a" || l.Items[0].UID != a.UID || l.Items[0].Kind != "PartialObjectMetadata" {
					t.Errorf("%s%s: items %+v, want %d PartialObjectMetadata starting with a", mt, q, l.Items, wantItems)
				}
				if mt == mtJSON {
					jsonDoc = doc
				} else {
					apiservertest.SameJSON(t, "protobuf PartialObjectMetadataList"+q, doc, jsonDoc)
				}
			}
		}
	})

	t.Run("watch", func(t *testing.T) {
		path := widgetsIn("default") + "?watch=true"
		jw := openStream(t, c, path, metadataAccept(mtJSON, "PartialObjectMetadata", "v1"), mtJSON)
		pw := openStream(t, c, path, metadataAccept(mtProtobuf, "PartialObjectMetadata", "v1"), mtProtobuf+";stream=watch")
		je, pe := jw.NextN(2, true), pw.NextN(2, true)
		cur := c.read("default", "a")
		cur.Labels = map[string]string{"seen": "yes"}
		c.update(cur)
		je, pe = append(je, jw.NextN(1, true)...), append(pe, pw.NextN(1, true)...)
		if got := apiservertest.Summary(pe); !slices.Equal(got, []string{"ADDED a", "ADDED b", "MODIFIED a"}) && !slices.Equal(got, []string{"ADDED b", "ADDED a", "MODIFIED a"}) {
			t.Errorf("protobuf events %q", got)
		}
		slices.SortStableFunc(je[:2], func(x, y apiservertest.Event) int { return strings.Compare(x.Name(), y.Name()) })
		slices.SortStableFunc(pe[:2], func(x, y apiservertest.Event) int { return strings.Compare(x.Name(), y.Name()) })
		for i := range pe {
			var p kapi.PartialObjectMetadata
			apiservertest.DecodeJSON(t, pe[i].Object, &p)
			if p.Kind != "PartialObjectMetadata" || p.APIVersion != "meta.k8s.io/v1" {
				t.Errorf("event object %s, want a PartialObjectMetadata", pe[i].Object)
			}
			if je[i].Type != pe[i].Type {
				t.Errorf("event %d: protobuf %s, JSON %s", i, pe[i].Type, je[i].Type)
			}
			apiservertest.SameJSON(t, "protobuf "+pe[i].Type+" "+pe[i].Name(), pe[i].Object, je[i].Object)
		}
		if m := pe[2].Object; !bytes.Contains(m, []byte(`"seen":"yes"`)) || bytes.Contains(m, []byte(`"spec"`)) {
			t.Errorf("MODIFIED object %s, want the new labels and no spec", m)
		}
	})

	t.Run("the list and the object views do not mix", func(t *testing.T) {
		for _, mt := range []string{mtJSON, mtProtobuf} {
			c.do(http.MethodGet, widgetsIn("default"), nil, "Accept", metadataAccept(mt, "PartialObjectMetadata", "v1")).
				failure(t, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
			c.do(http.MethodGet, widgetPath("default", "a"), nil, "Accept", metadataAccept(mt, "PartialObjectMetadataList", "v1")).
				failure(t, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
		}
	})
}

// TestFormatNegotiation sends the Accept headers real clients send.
func TestFormatNegotiation(t *testing.T) {
	_, c := newFormatsServer(t)
	c.create(newWidget("default", "a"))
	c.do(http.MethodPost, thingsPath, `{"metadata":{"name":"t"},"spec":{"size":1}}`).mustCode(t, http.StatusCreated)

	const (
		kubectlGet     = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
		typedClientset = "application/vnd.kubernetes.protobuf, */*"
		clientGoCBOR   = "application/json;q=0.9,application/cbor;q=1"
		metadataGet    = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
		metadataList   = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	)
	get, list, watch := widgetPath("default", "a"), widgetsIn("default"), widgetsIn("default")+"?watch=true"
	thing, things, thingWatch := thingsPath+"/t", thingsPath, thingsPath+"?watch=true"
	cases := []struct {
		name, path, accept string
		want               string // the Content-Type; "" for 406
	}{
		{"kubectl get list", list + "?limit=500", kubectlGet, mtJSON}, // bare, as kube-apiserver's
		{"kubectl get one", get, kubectlGet, mtJSON},
		{"kubectl get -w", watch, kubectlGet, mtJSON}, // a stream's Content-Type is bare, as kube-apiserver's
		{"kubectl with v1beta1 Tables only", list, "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", mtJSON},
		{"kubectl get -o yaml", get, "application/json", mtJSON},
		{"typed clientset get", get, typedClientset, mtProtobuf},
		{"typed clientset list", list, typedClientset, mtProtobuf},
		{"typed clientset watch", watch, typedClientset, mtProtobuf + ";stream=watch"},
		{"client-go CBOR get", get, clientGoCBOR, mtCBOR},
		{"client-go CBOR list", list, clientGoCBOR, mtCBOR},
		{"client-go CBOR watch", watch, clientGoCBOR, "application/cbor-seq"},
		{"metadata client get", get, metadataGet, mtProtobuf},
		{"metadata client list", list, metadataList, mtProtobuf},
		{"metadata client watch", watch, metadataGet, mtProtobuf + ";stream=watch"},
		{"no Accept", get, "", mtJSON},
		{"*/*", get, "*/*", mtJSON},
		{"application/*", list, "application/*", mtJSON},
		{"charset", get, "application/json; charset=utf-8", mtJSON},
		{"upper case", get, "Application/JSON", mtJSON},
		{"a browser", get, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", mtJSON},
		{"YAML", list, "application/yaml", mtYAML},
		{"highest q wins", get, "application/vnd.kubernetes.protobuf;q=0.5,application/yaml;q=0.7,application/cbor;q=0.6", mtYAML},
		{"first of equal q wins", get, "application/cbor,application/json", mtCBOR},
		{"stream=watch on a watch", watch, "application/json;stream=watch", mtJSON},
		{"protobuf stream=watch on a watch", watch, "application/vnd.kubernetes.protobuf;stream=watch", mtProtobuf + ";stream=watch"},
		{"q=0 refuses", get, "application/json;q=0", ""},
		{"text/plain", get, "text/plain", ""},
		{"unknown Table version", list, "application/json;as=Table;g=meta.k8s.io;v=v2", ""},
		{"unknown view", get, "application/json;as=Bogus;g=meta.k8s.io;v=v1", ""},
		{"view of another group", get, "application/json;as=Table;g=example.com;v=v1", ""},
		{"YAML watch", watch, "application/yaml", ""},
		// A type without protobuf tags.
		{"no protobuf: typed clientset get", thing, typedClientset, mtJSON},
		{"no protobuf: typed clientset list", things, typedClientset, mtJSON},
		{"no protobuf: typed clientset watch", thingWatch, typedClientset, mtJSON},
		{"no protobuf: protobuf only", thing, mtProtobuf, ""},
		{"no protobuf: protobuf only list", things, mtProtobuf, ""},
		{"no protobuf: protobuf only watch", thingWatch, mtProtobuf, ""},
		{"no protobuf: metadata client get", thing, metadataGet, mtProtobuf},
		{"no protobuf: metadata client list", things, metadataList, mtProtobuf},
		{"no protobuf: CBOR", thing, clientGoCBOR, mtCBOR},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			var header []string
			if tc.accept != "" {
				header = []string{"Accept", tc.accept}
			}
			resp, err := c.hc.Do(c.request(ctx, http.MethodGet, tc.path, nil, header...))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if tc.want != "" {
				if resp.StatusCode != http.StatusOK {
					body, _ := io.ReadAll(resp.Body)
					t.Fatalf("HTTP %d, want 200 %s; body %s", resp.StatusCode, tc.want, body)
				}
				apiservertest.WantContentType(t, resp.Header, tc.want)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			r := &response{Code: resp.StatusCode, Header: resp.Header, Body: body}
			if strings.HasPrefix(tc.accept, "application/yaml") && strings.HasPrefix(resp.Header.Get("Content-Type"), mtYAML) {
				// kube-apiserver would write this Status in YAML too: the
				// client accepts YAML, only not as a stream.
				statusOfResponse(t, r, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
				return
			}
			st := r.failure(t, http.StatusNotAcceptable, kapi.StatusReasonNotAcceptable)
			t.Logf("406: %s", st.Message)
		})
	}

	t.Run("415", func(t *testing.T) {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"u"},"spec":{"color":"Red"}}`
		for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "application/json-seq", ";;"} {
			st := c.do(http.MethodPost, widgetsIn("default"), body, "Content-Type", ct).failure(t, http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType)
			if ct == "text/plain" {
				t.Logf("415: %s", st.Message)
			}
			c.do(http.MethodPut, widgetPath("default", "a"), body, "Content-Type", ct).failure(t, http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType)
		}
		c.do(http.MethodPost, widgetsIn("default"), body, "Content-Type", "application/json; charset=utf-8").mustCode(t, http.StatusCreated)
	})

	t.Run("415 for a protobuf body of a type without protobuf", func(t *testing.T) {
		// kube-apiserver answers a protobuf body for a custom resource,
		// which has no protobuf, with 415 (NegotiateInputSerializer); kapi
		// offers no protobuf for plainThing either.
		body := apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "plain.example.com/v1", Kind: "Thing"}, apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "pb")))
		c.do(http.MethodPost, thingsPath, body, "Content-Type", mtProtobuf).failure(t, http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType)
	})
}

// TestFormatErrors: an error is a Status in the negotiated format.
func TestFormatErrors(t *testing.T) {
	_, c := newFormatsServer(t)
	existing := c.create(newWidget("default", "a"))

	for _, f := range apiservertest.Formats() {
		t.Run(f.Name+"/404", func(t *testing.T) {
			r := c.do(http.MethodGet, widgetPath("default", "nope"), nil, "Accept", f.MediaType)
			apiservertest.WantContentType(t, r.Header, f.MediaType)
			if f.MediaType == mtProtobuf {
				if tm, _ := apiservertest.ProtoEnvelope(t, r.Body); tm != (kapi.TypeMeta{Kind: "Status", APIVersion: "v1"}) {
					t.Errorf("envelope %+v, want Status v1", tm)
				}
			}
			st := statusOfResponse(t, r, http.StatusNotFound, kapi.StatusReasonNotFound)
			if want := `widgets.example.com "nope" not found`; st.Message != want {
				t.Errorf("message %q, want %q", st.Message, want)
			}
			if d := st.Details; d == nil || d.Name != "nope" || d.Group != "example.com" || d.Kind != "widgets" {
				t.Errorf("details %+v, want name nope, group example.com, kind widgets", d)
			}
			// The same Status as in JSON.
			jsonStatus := c.get(widgetPath("default", "nope")).Body
			apiservertest.SameJSON(t, "404 Status", respJSON(t, r), jsonStatus)
		})
		t.Run(f.Name+"/409", func(t *testing.T) {
			r := c.do(http.MethodPost, widgetsIn("default"), widgetBody(t, f, newWidget("default", "a"), apiservertest.CBOROptions{ByteStrings: true}),
				"Content-Type", f.MediaType, "Accept", f.MediaType)
			apiservertest.WantContentType(t, r.Header, f.MediaType)
			st := statusOfResponse(t, r, http.StatusConflict, kapi.StatusReasonAlreadyExists)
			if d := st.Details; d == nil || d.Name != "a" || d.Kind != "widgets" {
				t.Errorf("details %+v", d)
			}
			stale := *existing
			stale.ResourceVersion = "1"
			stale.Spec.Color = "Green"
			r = c.do(http.MethodPut, widgetPath("default", "a"), widgetBody(t, f, &stale, apiservertest.CBOROptions{}), "Content-Type", f.MediaType, "Accept", f.MediaType)
			st = statusOfResponse(t, r, http.StatusConflict, kapi.StatusReasonConflict)
			if !strings.Contains(st.Message, "the object has been modified") {
				t.Errorf("message %q", st.Message)
			}
		})
		t.Run(f.Name+"/422", func(t *testing.T) {
			bad := newWidget("default", "purple")
			bad.Spec.Color = "purple"
			r := c.do(http.MethodPost, widgetsIn("default"), widgetBody(t, f, bad, apiservertest.CBOROptions{}), "Content-Type", f.MediaType, "Accept", f.MediaType)
			apiservertest.WantContentType(t, r.Header, f.MediaType)
			st := statusOfResponse(t, r, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
			if !hasCause(st, "spec.color", kapi.CauseTypeFieldValueNotSupported) || st.Details.Kind != "Widget" || st.Details.Name != "purple" {
				t.Errorf("details %+v, want kind Widget, name purple and a FieldValueNotSupported cause on spec.color", st.Details)
			}
		})
	}
}

// TestFormatBadBodies: a malformed body in any format is a 400 Status,
// never a 5xx, and changes nothing.
func TestFormatBadBodies(t *testing.T) {
	_, c := newFormatsServer(t)
	c.create(newWidget("bad", "a"))
	before := c.get(allWidgets).mustCode(t, http.StatusOK).Body

	// Every body names "a", which exists: had one been decoded, a POST would
	// be a 409 and a PUT a 200.
	widgetTM := kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}
	valid := pbWidgetBody(newWidget("bad", "a"))
	_, raw := apiservertest.ProtoEnvelope(t, valid)
	rawStart := len(valid) - len(raw)
	nested := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	nestedCBOR := append(bytes.Repeat([]byte{0x81}, 10001), 0x00)
	cborWidget := func(spec any) []byte {
		return apiservertest.CBORBody(apiservertest.CBORPairs{"apiVersion", "example.com/v1", "kind", "Widget", "metadata", apiservertest.CBORPairs{"name", "a"}, "spec", spec}, apiservertest.CBOROptions{ByteStrings: true})
	}
	validCBOR := cborWidget(apiservertest.CBORPairs{"color", "Red"})
	yamlWidget := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  color: Red\n"
	jsonWidget := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"Red"}}`

	cases := []struct {
		name, contentType string
		body              []byte
	}{
		{"protobuf truncated by a byte", mtProtobuf, valid[:len(valid)-1]},
		{"protobuf truncated in the middle", mtProtobuf, valid[:rawStart+len(raw)/2]},
		{"protobuf truncated in the envelope", mtProtobuf, valid[:6]},
		{"protobuf without the envelope", mtProtobuf, raw},
		{"protobuf magic alone", mtProtobuf, []byte("k8s\x00")},
		{"protobuf envelope of another kind", mtProtobuf, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "WidgetClass"}, raw)},
		{"protobuf envelope of another version", mtProtobuf, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v2", Kind: "Widget"}, raw)},
		{"protobuf envelope with a content encoding", mtProtobuf, append(bytes.Clone(valid), apiservertest.AppendProtoString(nil, 3, "gzip")...)},
		{"protobuf field of the wrong wire type", mtProtobuf, apiservertest.ProtoWrap(widgetTM, apiservertest.AppendProtoVarint(nil, 1, 5))},
		{"protobuf length past the end", mtProtobuf, apiservertest.ProtoWrap(widgetTM, []byte{0x0a, 0x7f, 0x0a})},
		{"protobuf invalid UTF-8 name", mtProtobuf, apiservertest.ProtoWrap(widgetTM, apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "\xff\xfe")))},
		{"protobuf garbage", mtProtobuf, []byte("k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
		{"CBOR garbage", mtCBOR, []byte("\xd9\xd9\xf7\x1c\x1d\x1e garbage")},
		{"CBOR truncated", mtCBOR, validCBOR[:len(validCBOR)-3]},
		{"CBOR with data after the item", mtCBOR, append(bytes.Clone(validCBOR), 0x00)},
		{"CBOR with non-string keys", mtCBOR, cborWidget(apiservertest.CBORPairs{1, 2})},
		{"CBOR with a non-string key at the top", mtCBOR, []byte{0xd9, 0xd9, 0xf7, 0xa1, 0x01, 0x02}},
		{"CBOR nested 10001 levels", mtCBOR, cborWidget(apiservertest.CBORPairs{"color", "Red", "x", apiservertest.CBORRaw(nestedCBOR)})},
		{"CBOR with an unknown tag", mtCBOR, cborWidget(apiservertest.CBORPairs{"color", apiservertest.CBORRaw{0xc1, 0x01}})},
		{"CBOR with invalid UTF-8 text", mtCBOR, cborWidget(apiservertest.CBORPairs{"color", apiservertest.CBORRaw{0x62, 0xff, 0xfe}})},
		{"CBOR array", mtCBOR, []byte{0xd9, 0xd9, 0xf7, 0x80}},
		{"YAML billion laughs", mtYAML, []byte(billionLaughs)},
		{"YAML with two documents", mtYAML, []byte(yamlWidget + "---\n" + yamlWidget)},
		{"YAML malformed", mtYAML, []byte("metadata: [\n")},
		{"YAML nested 10001 levels", mtYAML, []byte(yamlWidget + "  x: " + nested("[", "]", 10001) + "\n")},
		{"YAML list", mtYAML, []byte("- 1\n- 2\n")},
		{"JSON with trailing garbage", mtJSON, []byte(jsonWidget + "xyz")},
		{"JSON with two objects", mtJSON, []byte(jsonWidget + jsonWidget)},
		{"JSON truncated", mtJSON, []byte(jsonWidget[:30])},
		{"JSON nested 10001 levels", mtJSON, []byte(`{"metadata":{"name":"a"},"spec":{"color":"Red","x":` + nested("[", "]", 10001) + `}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range []struct{ method, path string }{{http.MethodPost, widgetsIn("bad")}, {http.MethodPut, widgetPath("bad", "a")}} {
				r := c.do(w.method, w.path, tc.body, "Content-Type", tc.contentType)
				if r.Code >= 500 {
					t.Errorf("%s: HTTP %d: %.300s", w.method, r.Code, r.Body)
					continue
				}
				st := r.failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
				t.Logf("%s: %s", w.method, st.Message)
			}
		})
	}
	if after := c.get(allWidgets).mustCode(t, http.StatusOK).Body; !bytes.Equal(after, before) {
		t.Errorf("bad bodies changed what is stored:\nbefore %s\nafter  %s", before, after)
	}

	t.Run("CBOR fieldValidation", func(t *testing.T) {
		body := func(name string) []byte {
			return apiservertest.CBORBody(apiservertest.CBORPairs{
				"apiVersion", "example.com/v1", "kind", "Widget", "metadata", apiservertest.CBORPairs{"name", name},
				"spec", apiservertest.CBORPairs{"color", "Red", "color", "Blue", "bogus", 1},
			}, apiservertest.CBOROptions{ByteStrings: true})
		}
		st := c.do(http.MethodPost, widgetsIn("bad")+"?fieldValidation=Strict", body("strict"), "Content-Type", mtCBOR).
			failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if want := `Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "spec.color", unknown field "spec.bogus"`; st.Message != want {
			t.Errorf("message %q,\nwant    %q", st.Message, want)
		}
		if after := c.get(allWidgets).mustCode(t, http.StatusOK).Body; !bytes.Equal(after, before) {
			t.Errorf("a Strict failure changed what is stored")
		}
		for _, q := range []string{"?fieldValidation=Warn", ""} {
			name := "warn" + strings.ToLower(strings.TrimPrefix(q, "?fieldValidation="))
			r := c.do(http.MethodPost, widgetsIn("bad")+q, body(name), "Content-Type", mtCBOR, "Accept", mtCBOR).mustCode(t, http.StatusCreated)
			containsAll(t, "Warning headers", r.Header.Values("Warning"),
				`299 - "duplicate field \"spec.color\""`, `299 - "unknown field \"spec.bogus\""`)
			if w := widgetOf(t, respJSON(t, r)); w.Spec.Color != "Blue" {
				t.Errorf("%q: color %q, want the last duplicate (Blue)", q, w.Spec.Color)
			}
		}
	})

	t.Run("YAML fieldValidation=Strict", func(t *testing.T) {
		body := yamlWidget + "  bogus: 1\n"
		st := c.do(http.MethodPost, widgetsIn("bad")+"?fieldValidation=Strict", strings.Replace(body, "name: a", "name: y", 1), "Content-Type", mtYAML).
			failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if !strings.HasSuffix(st.Message, `strict decoding error: unknown field "spec.bogus"`) {
			t.Errorf("message %q", st.Message)
		}
	})
}

// gzipClient is a client that asks for gzip itself and sees the encoded
// bytes: Go's transport would otherwise decode them out of sight.
func gzipClient(t testing.TB, c *apiClient) *apiClient {
	tr := c.hc.Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	return &apiClient{t: t, base: c.base, hc: &http.Client{Transport: tr}}
}

func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func TestFormatCompressionAndPretty(t *testing.T) {
	_, c := newFormatsServer(t)
	blob := strings.Repeat("x", 60<<10)
	for i := range 3 {
		w := newWidget("big", fmt.Sprintf("w%d", i))
		w.Annotations = map[string]string{"blob": blob}
		c.create(w)
	}
	one := newWidget("bigone", "w")
	one.Annotations = map[string]string{"blob": strings.Repeat("y", 200<<10)}
	c.create(one)
	small := newWidget("small", "w")
	small.Annotations = map[string]string{"blob": blob}
	c.create(small)
	gz := gzipClient(t, c)

	for _, mt := range []string{mtJSON, mtProtobuf, mtCBOR, mtYAML} {
		t.Run("large list/"+mt, func(t *testing.T) {
			plain := gz.do(http.MethodGet, widgetsIn("big"), nil, "Accept", mt).mustCode(t, http.StatusOK)
			if len(plain.Body) < 128<<10 || plain.Header.Get("Content-Encoding") != "" {
				t.Fatalf("without Accept-Encoding: %d bytes, Content-Encoding %q; want ≥ 128 KiB, identity", len(plain.Body), plain.Header.Get("Content-Encoding"))
			}
			r := gz.do(http.MethodGet, widgetsIn("big"), nil, "Accept", mt, "Accept-Encoding", "gzip").mustCode(t, http.StatusOK)
			if ce := r.Header.Get("Content-Encoding"); ce != "gzip" {
				t.Fatalf("Content-Encoding %q, want gzip (%d bytes)", ce, len(r.Body))
			}
			if !slices.Contains(r.Header.Values("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q, want Accept-Encoding", r.Header.Values("Vary"))
			}
			apiservertest.WantContentType(t, r.Header, mt)
			body := gunzip(t, r.Body)
			if len(r.Body) >= len(body) {
				t.Errorf("gzip made %d bytes of %d", len(r.Body), len(body))
			}
			apiservertest.SameJSON(t, "gunzipped list", formats.JSON(t, mt, body), formats.JSON(t, mt, plain.Body))
		})
	}
	t.Run("large object", func(t *testing.T) {
		r := gz.do(http.MethodGet, widgetPath("bigone", "w"), nil, "Accept-Encoding", "gzip").mustCode(t, http.StatusOK)
		if r.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", r.Header.Get("Content-Encoding"))
		}
		if w := widgetOf(t, gunzip(t, r.Body)); w.Annotations["blob"] != one.Annotations["blob"] {
			t.Errorf("the gunzipped widget lost its annotation")
		}
	})
	t.Run("small list", func(t *testing.T) {
		r := gz.do(http.MethodGet, widgetsIn("small"), nil, "Accept-Encoding", "gzip").mustCode(t, http.StatusOK)
		if ce := r.Header.Get("Content-Encoding"); ce != "" || len(r.Body) >= 128<<10 {
			t.Errorf("a %d-byte list has Content-Encoding %q, want none under 128 KiB", len(r.Body), ce)
		}
		var l widgetList
		r.into(t, &l)
		if len(l.Items) != 1 {
			t.Errorf("%d items", len(l.Items))
		}
	})
	t.Run("gzip refused with q=0", func(t *testing.T) {
		r := gz.do(http.MethodGet, widgetsIn("big"), nil, "Accept-Encoding", "gzip;q=0").mustCode(t, http.StatusOK)
		if ce := r.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("Content-Encoding %q for gzip;q=0", ce)
		}
	})
	t.Run("Go's transparent gzip", func(t *testing.T) {
		if l := c.list(widgetsIn("big")); len(l.Items) != 3 || l.Items[0].Annotations["blob"] != blob {
			t.Errorf("list through Go's default transport: %d items", len(l.Items))
		}
	})

	t.Run("pretty", func(t *testing.T) {
		c.create(newWidget("default", "p"))
		for _, path := range []string{widgetPath("default", "p"), widgetsIn("default")} {
			plain := c.get(path).mustCode(t, http.StatusOK).Body
			pretty := c.get(path+"?pretty=true").mustCode(t, http.StatusOK)
			apiservertest.WantContentType(t, pretty.Header, mtJSON)
			if !bytes.Contains(pretty.Body, []byte("\n  \"")) || bytes.Contains(plain, []byte("\n")) {
				t.Errorf("%s?pretty=true is not indented (or the plain one is):\n%s", path, pretty.Body)
			}
			apiservertest.SameJSON(t, "pretty "+path, pretty.Body, plain)
		}
		// pretty only concerns JSON: protobuf stays protobuf.
		r := c.do(http.MethodGet, widgetPath("default", "p")+"?pretty=true", nil, "Accept", mtProtobuf).mustCode(t, http.StatusOK)
		apiservertest.SameJSON(t, "protobuf with pretty", formats.JSON(t, mtProtobuf, r.Body), c.get(widgetPath("default", "p")).Body)
	})
}

// TestFormatEncodeOnce: an object version is encoded once per format and
// the bytes shared by every GET, LIST and watcher. tally's spec counts its
// MarshalJSON calls (JSON, and YAML and CBOR, which are made from JSON), its
// proto field its ProtoReflect calls (protobuf).
func TestFormatEncodeOnce(t *testing.T) {
	_, c := newFormatsServer(t)
	const key = "encode-once"
	c.do(http.MethodPost, talliesPath, `{"apiVersion":"tally.example.com/v1","kind":"Tally","metadata":{"name":"t"},"spec":{"key":"`+key+`"},"proto":{"value":"`+key+`"}}`).
		mustCode(t, http.StatusCreated)
	item := talliesPath + "/t"

	readAll := func(t *testing.T, mt, stream string) {
		t.Helper()
		for range 3 {
			c.do(http.MethodGet, item, nil, "Accept", mt).mustCode(t, http.StatusOK)
		}
		c.do(http.MethodGet, talliesPath, nil, "Accept", mt).mustCode(t, http.StatusOK)
		for range 2 {
			ws := openStream(t, c, talliesPath+"?watch=true", mt, stream)
			if ev := ws.Next(); ev.Type != "ADDED" || ev.Name() != "t" {
				t.Errorf("event %s %s, want ADDED t", ev.Type, ev.Name())
			}
			ws.Stop()
		}
	}

	t.Run("JSON, YAML and CBOR", func(t *testing.T) {
		j0, p0 := jsonMarshals.get(key), protoReflects.get(key)
		first := c.get(item).mustCode(t, http.StatusOK)
		j1 := jsonMarshals.get(key)
		if j1-j0 > 1 {
			t.Errorf("the first GET marshaled the object %d times", j1-j0)
		}
		readAll(t, mtJSON, mtJSON)
		readAll(t, mtCBOR, "application/cbor-seq")
		for range 2 {
			c.do(http.MethodGet, item, nil, "Accept", mtYAML).mustCode(t, http.StatusOK)
			c.do(http.MethodGet, talliesPath, nil, "Accept", mtYAML).mustCode(t, http.StatusOK)
		}
		if j2 := jsonMarshals.get(key); j2 != j1 {
			t.Errorf("GETs, LISTs and watchers in JSON, YAML and CBOR marshaled the object %d more times after the first GET; want the first encoding shared", j2-j1)
		}
		t.Logf("MarshalJSON calls: %d by the first GET, %d by every later read", j1-j0, jsonMarshals.get(key)-j1)
		if p := protoReflects.get(key); p != p0 {
			t.Errorf("JSON reads encoded protobuf (%d ProtoReflect calls)", p-p0)
		}
		var doc tally
		first.into(t, &doc)
		if doc.Spec.Key != key || doc.Proto == nil || doc.Proto.GetValue() != key {
			t.Errorf("GET %s", first.Body)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		p0 := protoReflects.get(key)
		r := c.do(http.MethodGet, item, nil, "Accept", mtProtobuf).mustCode(t, http.StatusOK)
		p1 := protoReflects.get(key)
		if p1 == p0 {
			t.Fatalf("the first protobuf GET did not reach the proto.Message field (the counter is blind)")
		}
		apiservertest.SameJSON(t, "protobuf Tally", formats.JSON(t, mtProtobuf, r.Body), c.get(item).Body)
		j0 := jsonMarshals.get(key) // after the JSON GET just above, whose encoding is cached
		readAll(t, mtProtobuf, mtProtobuf+";stream=watch")
		t.Logf("ProtoReflect calls: %d by the first protobuf GET, %d by every later read", p1-p0, protoReflects.get(key)-p1)
		if p2 := protoReflects.get(key); p2 != p1 {
			t.Errorf("GETs, a LIST and watchers in protobuf encoded the object again after the first GET (%d ProtoReflect calls, the first GET made %d)", p2-p1, p1-p0)
		}
		if j := jsonMarshals.get(key); j != j0 {
			t.Errorf("protobuf reads marshaled JSON %d times", j-j0)
		}
	})
}

// TestFormatWatchErrorFrames: a watch from a revision that has left the
// history gets one ERROR event, a 410 Expired Status, framed and encoded
// in the stream's format, and then the stream ends.
func TestFormatWatchErrorFrames(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	first := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c := &apiClient{t: t, base: first.URL, hc: first.Client()}
	old := c.create(newWidget("default", "a")).ResourceVersion
	c.create(newWidget("default", "b"))
	first.API.Close()
	restarted := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c = &apiClient{t: t, base: restarted.URL, hc: restarted.Client()}

	cases := []struct{ name, accept, contentType string }{
		{"json", mtJSON, mtJSON},
		{"protobuf", mtProtobuf, mtProtobuf + ";stream=watch"},
		{"cbor", mtCBOR, "application/cbor-seq"},
		{"json Table", tableAccept(mtJSON, "v1"), mtJSON},
		{"protobuf PartialObjectMetadata", metadataAccept(mtProtobuf, "PartialObjectMetadata", "v1"), mtProtobuf + ";stream=watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := openStream(t, c, widgetsIn("default")+"?watch=true&resourceVersion="+old, tc.accept, tc.contentType)
			ev := ws.Next()
			var st kapi.Status
			apiservertest.DecodeJSON(t, ev.Object, &st)
			if ev.Type != "ERROR" || st.Kind != "Status" || st.APIVersion != "v1" || st.Code != http.StatusGone ||
				st.Reason != kapi.StatusReasonExpired || !strings.HasPrefix(st.Message, "too old resource version: "+old) {
				t.Errorf("event %s %s, want ERROR with a 410 Expired Status about %s", ev.Type, ev.Object, old)
			}
			ws.End() // and nothing after the ERROR
		})
	}
}
