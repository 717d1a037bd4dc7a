package actions_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// FuzzEndpoints sends the example's actions any body, in any media type,
// with any query: each answer is a success or a 4xx Status, never a 5xx.
func FuzzEndpoints(f *testing.F) {
	for _, s := range []struct {
		target             uint8
		contentType, query string
		body               string
	}{
		{0, "application/json", "", `{"reason":"x"}`},
		{0, "application/yaml", "fieldValidation=Strict", "reason: [\n"},
		{0, "application/cbor", "", "\xa1\x66reason\x61x"},
		{1, "", "follow=false", ""},
		{2, "application/json", "dryRun=All", `{"apiVersion":"example.com/v1","kind":"WidgetReview","spec":{"replicas":11}}`},
		{2, "application/vnd.kubernetes.protobuf", "", "k8s\x00\x0a\x00"},
		{2, "application/json", "fieldManager=%00", `{"metadata":{"namespace":"x"}}`},
	} {
		f.Add(s.target, s.contentType, s.query, []byte(s.body))
	}
	srv := apiservertest.New(f, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		return widgetapi.RegisterActions(s)
	})
	resp, err := srv.Client().Post(srv.URL+ns+"/widgets", "application/json",
		bytes.NewReader([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"Red"}}`)))
	if err != nil || resp.StatusCode != http.StatusCreated {
		f.Fatalf("create: %v %v", err, resp)
	}
	resp.Body.Close()
	targets := []struct{ method, path string }{{"POST", widget + "/restart"}, {"GET", widget + "/log"}, {"POST", reviews}, {"GET", reviews}, {"PUT", widget + "/restart"}}
	f.Fuzz(func(t *testing.T, target uint8, contentType, query string, body []byte) {
		tg := targets[int(target)%len(targets)]
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		q.Del("follow") // a followed log ends with its client only
		req, err := http.NewRequest(tg.method, srv.URL+tg.path+"?"+q.Encode(), bytes.NewReader(body))
		if err != nil {
			return
		}
		if contentType != "" {
			req.Header["Content-Type"] = []string{contentType}
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return // the client would not send it
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var st struct{ Kind string }
		if resp.StatusCode >= 500 || resp.StatusCode >= 400 && (json.Unmarshal(data, &st) != nil || st.Kind != "Status") {
			t.Fatalf("%s %s?%s (%q) %q: %d %s", tg.method, tg.path, q.Encode(), contentType, body, resp.StatusCode, data)
		}
	})
}
