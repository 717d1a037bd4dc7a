package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// The example serves widgets in v1 (the storage version) and in the
// deprecated v1beta1, whose spec has one port where v1 has a list.

const betaVersionPath = "/apis/example.com/v1beta1"

func betaIn(ns string) string         { return betaVersionPath + "/namespaces/" + ns + "/widgets" }
func betaPath(ns, name string) string { return betaIn(ns) + "/" + name }

const betaWarning = `299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"`

func newBeta(ns, name string, port int32) *widgetapi.WidgetV1beta1 {
	return &widgetapi.WidgetV1beta1{
		TypeMeta:   kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1beta1"},
		ObjectMeta: kapi.ObjectMeta{Name: name, Namespace: ns},
		Spec:       widgetapi.WidgetSpecV1beta1{Color: "Red", Port: &port},
	}
}

// betaBody is w in format f: protobuf by kapi's codec (the wire format
// itself is TestFormatMatrix's), the others from its JSON.
func betaBody(t testing.TB, f apiservertest.Format, w *widgetapi.WidgetV1beta1) []byte {
	t.Helper()
	if f.MediaType != mtProtobuf {
		return docIn(t, f, apiservertest.MustJSON(t, w))
	}
	pb := codec.ByMediaType(mtProtobuf)
	element, err := pb.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	body, err := pb.AppendBody(nil, w.TypeMeta, element)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// docIn is a JSON document in format f (not protobuf).
func docIn(t testing.TB, f apiservertest.Format, doc []byte) []byte {
	t.Helper()
	if f.MediaType == mtJSON {
		return doc
	}
	var v any
	d := json.NewDecoder(strings.NewReader(string(doc)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if f.MediaType == mtCBOR {
		return apiservertest.CBORBody(v, apiservertest.CBOROptions{})
	}
	out, err := codec.ByMediaType(mtYAML).Transcode(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func betaOf(t testing.TB, doc []byte) *widgetapi.WidgetV1beta1 {
	t.Helper()
	var w widgetapi.WidgetV1beta1
	apiservertest.DecodeJSON(t, doc, &w)
	if w.Kind != "Widget" || w.APIVersion != "example.com/v1beta1" {
		t.Errorf("kind %q apiVersion %q, want Widget example.com/v1beta1: %s", w.Kind, w.APIVersion, doc)
	}
	return &w
}

// mustWarn fails unless the response carries the deprecation warning.
func mustWarn(t testing.TB, r *response) {
	t.Helper()
	if got := r.Header.Values("Warning"); !slices.Contains(got, betaWarning) {
		t.Errorf("Warning headers %q, want %s", got, betaWarning)
	}
}

func portsOf(w *widgetapi.Widget) string {
	var s []string
	for _, p := range w.Spec.Ports {
		s = append(s, fmt.Sprintf("%s:%d/%s", p.Name, p.Port, p.Protocol))
	}
	return strings.Join(s, ",")
}

// TestVersionMatrix: every verb in every media type in v1beta1, the
// version that is not stored, each answer in v1beta1 and what it did seen
// in v1.
func TestVersionMatrix(t *testing.T) {
	_, c := newFormatsServer(t)
	for _, f := range apiservertest.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			ns := "versions-" + f.Name
			inF := []string{"Content-Type", f.MediaType, "Accept", f.MediaType}

			t.Run("create", func(t *testing.T) {
				r := c.do(http.MethodPost, betaIn(ns), betaBody(t, f, newBeta(ns, "a", 80)), inF...).mustCode(t, http.StatusCreated)
				mustWarn(t, r)
				apiservertest.WantContentType(t, r.Header, f.MediaType)
				w := betaOf(t, formats.JSON(t, f.MediaType, r.Body))
				if w.Spec.Port == nil || *w.Spec.Port != 80 || w.Spec.Replicas == nil || *w.Spec.Replicas != 1 || w.Generation != 1 {
					t.Errorf("POST answered %+v, want port 80 and replicas defaulted to 1", w.Spec)
				}
				if v1 := c.read(ns, "a"); portsOf(v1) != "default:80/TCP" || v1.ResourceVersion != w.ResourceVersion || v1.UID != w.UID {
					t.Errorf("in v1: ports %q rv %s uid %s, want default:80/TCP and the same rv and uid", portsOf(v1), v1.ResourceVersion, v1.UID)
				}
				c.create(newWidget(ns, "b"))
			})

			t.Run("get", func(t *testing.T) {
				r := c.do(http.MethodGet, betaPath(ns, "a"), nil, "Accept", f.MediaType).mustCode(t, http.StatusOK)
				mustWarn(t, r)
				if f.MediaType == mtProtobuf {
					if tm, _ := apiservertest.ProtoEnvelope(t, r.Body); tm != (kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1beta1"}) {
						t.Errorf("envelope %+v, want Widget example.com/v1beta1", tm)
					}
				}
				got := formats.JSON(t, f.MediaType, r.Body)
				apiservertest.SameJSON(t, "GET", got, c.get(betaPath(ns, "a")).mustCode(t, http.StatusOK).Body)
				if w := betaOf(t, got); *w.Spec.Port != 80 {
					t.Errorf("GET port %d", *w.Spec.Port)
				}
			})

			t.Run("list", func(t *testing.T) {
				for _, q := range []string{"", "?limit=1", "?fieldSelector=spec.color%3DRed", "?resourceVersion=0"} {
					r := c.do(http.MethodGet, betaIn(ns)+q, nil, "Accept", f.MediaType).mustCode(t, http.StatusOK)
					mustWarn(t, r)
					got := formats.JSON(t, f.MediaType, r.Body)
					apiservertest.SameJSON(t, "LIST"+q, got, c.get(betaIn(ns)+q).mustCode(t, http.StatusOK).Body)
					var l struct {
						kapi.TypeMeta `json:",inline"`
						Items         []widgetapi.WidgetV1beta1 `json:"items"`
					}
					apiservertest.DecodeJSON(t, got, &l)
					if l.Kind != "WidgetList" || l.APIVersion != "example.com/v1beta1" || len(l.Items) == 0 || l.Items[0].APIVersion != "example.com/v1beta1" {
						t.Errorf("LIST%s: %s", q, got)
					}
					if want := map[string]int{"": 2, "?limit=1": 1, "?resourceVersion=0": 2}[q]; want > 0 && len(l.Items) != want {
						t.Errorf("LIST%s: %d items, want %d", q, len(l.Items), want)
					}
				}
			})

			t.Run("update", func(t *testing.T) {
				var cur widgetapi.WidgetV1beta1
				c.get(betaPath(ns, "a")).mustCode(t, http.StatusOK).into(t, &cur)
				cur.Spec.Color, cur.Spec.Port = "Blue", ptr(int32(81))
				r := c.do(http.MethodPut, betaPath(ns, "a"), betaBody(t, f, &cur), inF...).mustCode(t, http.StatusOK)
				mustWarn(t, r)
				w := betaOf(t, formats.JSON(t, f.MediaType, r.Body))
				if w.Spec.Color != "Blue" || *w.Spec.Port != 81 || w.Generation != 2 {
					t.Errorf("PUT answered %+v generation %d", w.Spec, w.Generation)
				}
				if v1 := c.read(ns, "a"); portsOf(v1) != "default:81/TCP" || v1.Spec.Color != "Blue" {
					t.Errorf("in v1: %q %s", portsOf(v1), v1.Spec.Color)
				}
			})

			t.Run("update status", func(t *testing.T) {
				var cur widgetapi.WidgetV1beta1
				c.get(betaPath(ns, "a")).mustCode(t, http.StatusOK).into(t, &cur)
				cur.Status.Replicas, cur.Spec.Color = 4, "Green" // the spec is ignored
				r := c.do(http.MethodPut, betaPath(ns, "a")+"/status", betaBody(t, f, &cur), inF...).mustCode(t, http.StatusOK)
				w := betaOf(t, formats.JSON(t, f.MediaType, r.Body))
				if w.Status.Replicas != 4 || w.Spec.Color != "Blue" {
					t.Errorf("PUT /status answered %+v %+v", w.Spec, w.Status)
				}
				if v1 := c.read(ns, "a"); v1.Status.Replicas != 4 {
					t.Errorf("in v1: status %+v", v1.Status)
				}
			})

			t.Run("patch", func(t *testing.T) {
				for _, p := range []struct{ typ, body, check string }{
					{"application/json-patch+json", `[{"op":"replace","path":"/spec/port","value":82}]`, "port 82"},
					{"application/merge-patch+json", `{"spec":{"size":3}}`, "size 3"},
					{"application/strategic-merge-patch+json", `{"spec":{"color":"Green"}}`, "color Green"},
				} {
					r := c.do(http.MethodPatch, betaPath(ns, "a"), p.body, "Content-Type", p.typ, "Accept", f.MediaType).mustCode(t, http.StatusOK)
					mustWarn(t, r)
					w := betaOf(t, formats.JSON(t, f.MediaType, r.Body))
					if got := map[string]string{
						"port 82": fmt.Sprint("port ", *w.Spec.Port), "size 3": fmt.Sprint("size ", w.Spec.Size), "color Green": "color " + w.Spec.Color,
					}[p.check]; got != p.check {
						t.Errorf("%s answered %s, want %s", p.typ, got, p.check)
					}
				}
				if v1 := c.read(ns, "a"); portsOf(v1) != "default:82/TCP" || v1.Spec.Size != 3 || v1.Spec.Color != "Green" {
					t.Errorf("in v1: %q size %d color %s", portsOf(v1), v1.Spec.Size, v1.Spec.Color)
				}
			})

			t.Run("apply", func(t *testing.T) {
				cfg := `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"applied","namespace":"` + ns + `"},"spec":{"color":"Red","port":90}}`
				types := map[string]string{mtJSON: "application/apply-patch+yaml", mtYAML: "application/apply-patch+yaml", mtCBOR: "application/apply-patch+cbor", mtProtobuf: "application/apply-patch+yaml"}
				body := []byte(cfg)
				if f.MediaType == mtCBOR {
					body = docIn(t, f, body)
				}
				r := c.do(http.MethodPatch, betaPath(ns, "applied")+"?fieldManager=beta-applier", body,
					"Content-Type", types[f.MediaType], "Accept", f.MediaType).mustCode(t, http.StatusCreated)
				mustWarn(t, r)
				w := betaOf(t, formats.JSON(t, f.MediaType, r.Body))
				if *w.Spec.Port != 90 || len(w.ManagedFields) != 1 || w.ManagedFields[0].APIVersion != "example.com/v1beta1" || w.ManagedFields[0].Operation != "Apply" {
					t.Errorf("apply answered %+v, managedFields %+v", w.Spec, w.ManagedFields)
				}
				if v1 := c.read(ns, "applied"); portsOf(v1) != "default:90/TCP" {
					t.Errorf("in v1: %q", portsOf(v1))
				}
			})

			t.Run("scale", func(t *testing.T) {
				r := c.do(http.MethodPut, betaPath(ns, "a")+"/scale", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"a"},"spec":{"replicas":6}}`,
					"Accept", f.MediaType).mustCode(t, http.StatusOK)
				mustWarn(t, r)
				var w widgetapi.WidgetV1beta1
				c.get(betaPath(ns, "a")).mustCode(t, http.StatusOK).into(t, &w)
				if *w.Spec.Replicas != 6 {
					t.Errorf("replicas %d after PUT /scale, want 6", *w.Spec.Replicas)
				}
			})

			t.Run("watch", func(t *testing.T) {
				if f.StreamType == "" {
					return // YAML has no watch (TestFormatMatrix)
				}
				var l struct {
					Metadata kapi.ListMeta `json:"metadata"`
				}
				c.get(betaIn(ns)).mustCode(t, http.StatusOK).into(t, &l)
				from := betaIn(ns) + "?watch=true&resourceVersion=" + l.Metadata.ResourceVersion
				jw := openStream(t, c, from, mtJSON, mtJSON)
				fw := openStream(t, c, from, f.MediaType, f.StreamType)
				w := newWidget(ns, "w")
				w.Spec.Ports = []widgetapi.WidgetPort{{Name: "default", Port: 70}}
				c.create(w) // in v1
				x := c.read(ns, "w")
				x.Spec.Color = "Green"
				c.update(x)
				c.do(http.MethodDelete, betaPath(ns, "w"), nil).mustCode(t, http.StatusOK)
				je, fe := jw.NextN(3, true), fw.NextN(3, true)
				if want := []string{"ADDED w", "MODIFIED w", "DELETED w"}; !slices.Equal(apiservertest.Summary(fe), want) || !slices.Equal(apiservertest.Summary(je), want) {
					t.Fatalf("events %q (JSON %q), want %q", apiservertest.Summary(fe), apiservertest.Summary(je), want)
				}
				for i := range fe {
					apiservertest.SameJSON(t, fe[i].Type+" event", fe[i].Object, je[i].Object)
					if b := betaOf(t, fe[i].Object); b.Spec.Port == nil || *b.Spec.Port != 70 {
						t.Errorf("%s: port %v, want 70", fe[i].Type, b.Spec.Port)
					}
				}
			})

			t.Run("delete", func(t *testing.T) {
				r := c.do(http.MethodDelete, betaPath(ns, "applied"), nil, "Accept", f.MediaType).mustCode(t, http.StatusOK)
				mustWarn(t, r)
				c.get(widgetPath(ns, "applied")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
				r = c.do(http.MethodDelete, betaIn(ns), nil, "Accept", f.MediaType).mustCode(t, http.StatusOK)
				var l struct {
					kapi.TypeMeta `json:",inline"`
					Items         []widgetapi.WidgetV1beta1 `json:"items"`
				}
				apiservertest.DecodeJSON(t, formats.JSON(t, f.MediaType, r.Body), &l)
				if l.APIVersion != "example.com/v1beta1" || len(l.Items) != 2 || l.Items[0].APIVersion != "example.com/v1beta1" {
					t.Errorf("deletecollection answered %+v", l)
				}
				if left := c.list(widgetsIn(ns)); len(left.Items) != 0 {
					t.Errorf("left after deletecollection: %q", left.names())
				}
			})
		})
	}
}

// TestVersionFieldSelectors: field selectors are per version: v1beta1
// selects on spec.port, which v1 does not have, in lists and watches
// served from the cache of v1 objects.
func TestVersionFieldSelectors(t *testing.T) {
	_, c := newTestServer(t)
	const ns = "fields"
	for i, port := range []int32{80, 81, 80} {
		c.do(http.MethodPost, betaIn(ns), newBeta(ns, fmt.Sprintf("w%d", i), port)).mustCode(t, http.StatusCreated)
	}
	sel := "?fieldSelector=spec.port%3D80"
	var l struct {
		Metadata kapi.ListMeta             `json:"metadata"`
		Items    []widgetapi.WidgetV1beta1 `json:"items"`
	}
	for _, q := range []string{sel, sel + "&limit=1", sel + "&resourceVersion=0"} {
		c.get(betaIn(ns)+q).mustCode(t, http.StatusOK).into(t, &l)
		var names []string
		for _, w := range l.Items {
			names = append(names, w.Name)
		}
		if want := map[bool][]string{true: {"w0"}, false: {"w0", "w2"}}[strings.Contains(q, "limit")]; !slices.Equal(names, want) {
			t.Errorf("LIST%s: %q, want %q", q, names, want)
		}
	}
	c.get(widgetsIn(ns)+sel).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)

	ws := openStream(t, c, betaIn(ns)+sel+"&watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", mtJSON, mtJSON)
	evs := ws.NextN(3, false)
	if got := apiservertest.Summary(evs); !slices.Equal(got[:2], []string{"ADDED w0", "ADDED w2"}) || evs[2].Type != "BOOKMARK" {
		t.Fatalf("streaming list: %q", got)
	}
	var b bookmark
	apiservertest.DecodeJSON(t, evs[2].Object, &b)
	if b.APIVersion != "example.com/v1beta1" || b.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Errorf("bookmark %s, want a v1beta1 Widget ending the initial events", evs[2].Object)
	}
	w := c.read(ns, "w1")
	w.Spec.Ports[0].Port = 80 // now selected, in v1beta1's terms
	c.update(w)
	if ev := ws.Next(); ev.Type != "ADDED" || ev.Name() != "w1" {
		t.Errorf("event %s %s, want w1 ADDED as it comes to match", ev.Type, ev.Name())
	}
}

// TestVersionViews: Table (v1beta1's own columns) and metadata in v1beta1.
func TestVersionViews(t *testing.T) {
	_, c := newFormatsServer(t)
	c.do(http.MethodPost, betaIn("views"), newBeta("views", "a", 80)).mustCode(t, http.StatusCreated)
	for _, mt := range []string{mtJSON, mtYAML, mtCBOR} {
		r := c.do(http.MethodGet, betaIn("views"), nil, "Accept", tableAccept(mt, "v1")).mustCode(t, http.StatusOK)
		mustWarn(t, r)
		var tbl kapi.Table
		apiservertest.DecodeJSON(t, formats.JSON(t, mt, r.Body), &tbl)
		var cols []string
		for _, col := range tbl.ColumnDefinitions {
			cols = append(cols, col.Name)
		}
		if !slices.Equal(cols, []string{"Name", "Color", "Port", "Age"}) || len(tbl.Rows) != 1 || fmt.Sprint(tbl.Rows[0].Cells[:3]) != "[a Red 80]" {
			t.Errorf("%s Table: columns %q rows %+v, want v1beta1's columns and a Red 80", mt, cols, tbl.Rows)
		}
	}
	for _, mt := range []string{mtJSON, mtProtobuf} {
		r := c.do(http.MethodGet, betaPath("views", "a"), nil, "Accept", metadataAccept(mt, "PartialObjectMetadata", "v1")).mustCode(t, http.StatusOK)
		var m kapi.PartialObjectMetadata
		apiservertest.DecodeJSON(t, formats.JSON(t, mt, r.Body), &m)
		if m.Kind != "PartialObjectMetadata" || m.Name != "a" {
			t.Errorf("%s metadata: %+v", mt, m)
		}
	}
}
