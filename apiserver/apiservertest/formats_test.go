package apiservertest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

const widgets = "/apis/example.com/v1/namespaces/default/widgets"

// do sends a request to srv and reads the answer.
func do(t *testing.T, srv *apiservertest.Server, method, path string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// TestDecoder reads a widget, a list and a failure in every format and
// finds the JSON answer's documents.
func TestDecoder(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register)
	d := &apiservertest.Decoder{Types: map[string]func() any{"Widget": func() any { return new(widgetapi.Widget) }}}
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"app":"web"}},"spec":{"color":"Red"}}`)
	if code, _, data := do(t, srv, http.MethodPost, widgets, body, "Content-Type", apiservertest.MediaJSON); code != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", code, data)
	}
	_, _, wantItem := do(t, srv, http.MethodGet, widgets+"/a", nil)
	_, _, wantList := do(t, srv, http.MethodGet, widgets, nil)
	for _, f := range apiservertest.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			code, h, data := do(t, srv, http.MethodGet, widgets+"/a", nil, "Accept", f.MediaType)
			if code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", code, data)
			}
			apiservertest.WantContentType(t, h, f.MediaType)
			apiservertest.SameJSON(t, f.Name+" item", d.ResponseJSON(t, h, data), wantItem)
			_, h, data = do(t, srv, http.MethodGet, widgets, nil, "Accept", f.MediaType)
			apiservertest.SameJSON(t, f.Name+" list", d.ResponseJSON(t, h, data), wantList)
			code, h, data = do(t, srv, http.MethodGet, widgets+"/none", nil, "Accept", f.MediaType)
			if code != http.StatusNotFound {
				t.Fatalf("GET of none: HTTP %d", code)
			}
			st := d.Failure(t, code, h, data, kapi.StatusReasonNotFound)
			if st.Details == nil || st.Details.Name != "none" {
				t.Errorf("Status details %+v, want the name", st.Details)
			}
		})
	}
	// The helpers fail a test on what they cannot read.
	if err := apiservertest.Collect(func(t testing.TB) { d.JSON(t, apiservertest.MediaJSON, []byte("{")) }); err == nil {
		t.Error("JSON of a bad JSON body passed")
	}
	if err := apiservertest.Collect(func(t testing.TB) { (&apiservertest.Decoder{}).JSON(t, apiservertest.MediaProtobuf, mustGet(t, srv)) }); err == nil ||
		!strings.Contains(err.Error(), "no Go type") {
		t.Errorf("a protobuf Widget without Types: %v, want no Go type", err)
	}
}

func mustGet(t testing.TB, srv *apiservertest.Server) []byte {
	req, _ := http.NewRequest(http.MethodGet, srv.URL+widgets+"/a", nil)
	req.Header.Set("Accept", apiservertest.MediaProtobuf)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return data
}

// TestBody writes a widget in JSON, YAML and CBOR, and in protobuf by
// hand; the server creates the same widget from each.
func TestBody(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register)
	d := &apiservertest.Decoder{Types: map[string]func() any{"Widget": func() any { return new(widgetapi.Widget) }}}
	for _, f := range apiservertest.Formats() {
		t.Run(f.Name, func(t *testing.T) {
			name := "w-" + f.Name
			var body []byte
			if f.MediaType == apiservertest.MediaProtobuf {
				meta := apiservertest.ProtoObjectMetaBody(&kapi.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}})
				spec := apiservertest.AppendProtoString(nil, 1, "Red") // Widget.spec.color
				raw := apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(nil, 1, meta), 2, spec)
				body = apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, raw)
			} else {
				doc := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `","labels":{"app":"web"}},"spec":{"color":"Red","size":3}}`
				body = apiservertest.Body(t, f.MediaType, []byte(doc), apiservertest.CBOROptions{ByteStrings: true})
			}
			code, h, data := do(t, srv, http.MethodPost, widgets, body, "Content-Type", f.MediaType, "Accept", f.MediaType)
			if code != http.StatusCreated {
				t.Fatalf("HTTP %d: %s", code, d.ResponseJSON(t, h, data))
			}
			var w widgetapi.Widget
			apiservertest.DecodeJSON(t, d.ResponseJSON(t, h, data), &w)
			if w.Name != name || w.Labels["app"] != "web" || w.Spec.Color != "Red" {
				t.Errorf("created %+v", w)
			}
			if f.MediaType == apiservertest.MediaProtobuf {
				_, raw := apiservertest.ProtoEnvelope(t, data)
				if m := apiservertest.ProtoObjectMeta(t, raw); m.Name != name || m.Labels["app"] != "web" || m.UID == "" || m.ResourceVersion == "" {
					t.Errorf("ProtoObjectMeta = %+v", m)
				}
			}
		})
	}
}

// TestWatch reads a watch in every format that has one.
func TestWatch(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register)
	d := &apiservertest.Decoder{Types: map[string]func() any{"Widget": func() any { return new(widgetapi.Widget) }}}
	var streams []*apiservertest.Stream
	for _, f := range apiservertest.Formats() {
		if f.StreamType == "" {
			continue
		}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+widgets+"?watch=true", nil)
		req.Header.Set("Accept", f.MediaType)
		streams = append(streams, d.Watch(t, srv.Client(), req, f.StreamType))
	}
	for _, name := range []string{"a", "b"} {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"color":"Red"}}`
		if code, _, data := do(t, srv, http.MethodPost, widgets, []byte(body), "Content-Type", apiservertest.MediaJSON); code != http.StatusCreated {
			t.Fatalf("create: HTTP %d: %s", code, data)
		}
	}
	if code, _, data := do(t, srv, http.MethodDelete, widgets+"/a", nil); code != http.StatusOK {
		t.Fatalf("delete: HTTP %d: %s", code, data)
	}
	for _, s := range streams {
		if got, want := apiservertest.Summary(s.NextN(3, true)), []string{"ADDED a", "ADDED b", "DELETED a"}; !slices.Equal(got, want) {
			t.Errorf("%s: events %q, want %q", s.ContentType, got, want)
		}
	}
}

func TestCBOR(t *testing.T) {
	doc := map[string]any{"b": []any{int64(-3), 1.5, true, nil}, "a": "x"}
	body := apiservertest.CBORBody(doc, apiservertest.CBOROptions{})
	seq := append(append([]byte(nil), body...), apiservertest.CBORBody(apiservertest.CBORPairs{"k", 1, "k", 2}, apiservertest.CBOROptions{ByteStrings: true})...)
	r := bufio.NewReader(bytes.NewReader(seq))
	first, err := apiservertest.ReadCBORItem(r)
	if err != nil || !bytes.Equal(first, body) {
		t.Fatalf("first item % x, %v; want % x", first, err, body)
	}
	d := &apiservertest.Decoder{}
	var got map[string]any
	apiservertest.DecodeJSON(t, d.JSON(t, apiservertest.MediaCBOR, first), &got)
	if want := `{"a":"x","b":[-3,1.5,true,null]}`; string(apiservertest.MustJSON(t, got)) != want {
		t.Errorf("CBOR as JSON %s, want %s", apiservertest.MustJSON(t, got), want)
	}
	if _, err := apiservertest.ReadCBORItem(r); err != nil {
		t.Fatalf("second item: %v", err)
	}
	if _, err := apiservertest.ReadCBORItem(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last item: %v, want EOF", err)
	}
}

func TestCollect(t *testing.T) {
	if err := apiservertest.Collect(func(t testing.TB) {}); err != nil {
		t.Errorf("nothing reported: %v", err)
	}
	err := apiservertest.Collect(func(t testing.TB) {
		t.Errorf("one %d", 1)
		t.Fatalf("two")
		t.Errorf("never")
	})
	if err == nil || err.Error() != "one 1; two" {
		t.Errorf("Collect = %v, want one 1; two", err)
	}
	if err := apiservertest.Collect(func(testing.TB) { panic("boom") }); err == nil || err.Error() != "boom" {
		t.Errorf("a panic: %v, want boom", err)
	}
	var doc map[string]any
	if err := apiservertest.Collect(func(t testing.TB) { apiservertest.DecodeJSON(t, []byte("nope"), &doc) }); err == nil {
		t.Error("DecodeJSON of bad JSON reported nothing")
	}
}
