package apiserver_test

import (
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// The bad input for the example's actions (package actions): the
// subresources widgets/restart (POST) and widgets/log (GET, a stream),
// and widgetreviews, answered and never stored. Each is 4xx with kube's
// code: an unknown subresource or an object's path of a review 404, a
// verb not served 405, a body that is not the kind 400.

// withActions registers widgets and their actions.
func withActions(s *apiserver.Server) error {
	if err := widgetapi.Register(s); err != nil {
		return err
	}
	return widgetapi.RegisterActions(s)
}

func actionsCorpus() []corpusCase {
	var cases []corpusCase
	add := func(name, method, path string, body []byte, code int, header ...string) {
		cases = append(cases, corpusCase{name: "actions/" + name, method: method, path: path, body: body, code: code, header: header})
	}
	ct := func(contentType string) []string { return []string{"Content-Type", contentType} }
	restart, log, reviews := corpusItem+"/restart", corpusItem+"/log", groupVersionPath+"/namespaces/"+corpusNS+"/widgetreviews"
	deep := []byte(`{"reason":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`)
	for target, path := range map[string]string{"restart": restart, "review": reviews} {
		for _, b := range []struct {
			name, contentType string
			body              []byte
			code              int
		}{
			{"empty", mtJSON, nil, 400},
			{"null", mtJSON, []byte(`null`), 400},
			{"array", mtJSON, []byte(`[]`), 400},
			{"truncated", mtJSON, []byte(`{"reason":`), 400},
			{"two documents", mtJSON, []byte(`{} {}`), 400},
			{"wrong types", mtJSON, []byte(`{"reason":1,"spec":{"replicas":"x"}}`), 400},
			{"metadata a string", mtJSON, []byte(`{"metadata":"x"}`), 400},
			{"deep nesting", mtJSON, deep, 400},
			{"another kind", mtJSON, encJSON(doc{"apiVersion": "example.com/v1", "kind": "Widget"}), 400},
			{"another version", mtJSON, encJSON(doc{"apiVersion": "example.com/v2"}), 400},
			{"unknown field, strict", mtJSON + "", []byte(`{"bogus":1}`), 0},
			{"bad YAML", mtYAML, []byte("reason: [\n"), 400},
			{"YAML list", mtYAML, []byte("- a\n"), 400},
			{"bad CBOR", mtCBOR, []byte{0xd9, 0xd9, 0xf7, 0xbf}, 400},
			{"protobuf", mtProtobuf, []byte("k8s\x00\x0a\x00"), 415},
			{"unknown media type", "text/plain", []byte(`{}`), 415},
			{"bad media type", "application/", []byte(`{}`), 415},
		} {
			query := ""
			if b.code == 0 {
				query, b.code = "?fieldValidation=Strict", 400
			}
			add(target+"/"+b.name, http.MethodPost, path+query, b.body, b.code, ct(b.contentType)...)
		}
		add(target+"/gzip", http.MethodPost, path, []byte(`{}`), 415, "Content-Type", mtJSON, "Content-Encoding", "gzip")
		add(target+"/not acceptable", http.MethodPost, path, []byte(`{}`), 406, "Content-Type", mtJSON, "Accept", mtProtobuf)
		add(target+"/bad dryRun", http.MethodPost, path+"?dryRun=Partly", []byte(`{}`), 400, ct(mtJSON)...)
		add(target+"/bad fieldValidation", http.MethodPost, path+"?fieldValidation=Loose", []byte(`{}`), 400, ct(mtJSON)...)
		add(target+"/long fieldManager", http.MethodPost, path+"?fieldManager="+strings.Repeat("m", 129), []byte(`{}`), 422, ct(mtJSON)...)
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			add(target+"/"+m, m, path, []byte(`{}`), 405, ct(mtJSON)...)
		}
	}
	add("review/watch", http.MethodGet, reviews+"?watch=true", nil, 405)
	add("review/an object", http.MethodGet, reviews+"/r", nil, 404)
	add("review/an object's subresource", http.MethodPost, reviews+"/r/status", []byte(`{}`), 404, ct(mtJSON)...)
	add("review/cluster-wide", http.MethodPost, groupVersionPath+"/widgetreviews", []byte(`{}`), 404, ct(mtJSON)...)
	add("review/in no namespace", http.MethodPost, groupVersionPath+"/namespaces/nowhere/widgetreviews", []byte(`{}`), 404, ct(mtJSON)...)
	add("review/another namespace", http.MethodPost, reviews, encJSON(doc{"metadata": doc{"namespace": "other"}}), 400, ct(mtJSON)...)
	add("restart/a missing widget", http.MethodPost, widgetPath(corpusNS, "missing")+"/restart", []byte(`{}`), 404, ct(mtJSON)...)
	add("restart/a bad name", http.MethodPost, widgetsIn(corpusNS)+"/a%2Fb/restart", []byte(`{}`), 400, ct(mtJSON)...)
	add("restart/cluster-wide", http.MethodPost, groupVersionPath+"/widgets/a/restart", []byte(`{}`), 404, ct(mtJSON)...)
	add("restart/in v1beta1", http.MethodPost, "/apis/example.com/v1beta1/namespaces/"+corpusNS+"/widgets/a/restart", []byte(`{}`), 404, ct(mtJSON)...)
	add("log/a missing widget", http.MethodGet, widgetPath(corpusNS, "missing")+"/log", nil, 404)
	// kube-apiserver reads dryRun on writes alone: a GET's is ignored.
	add("log/a missing widget, dryRun ignored", http.MethodGet, widgetPath(corpusNS, "missing")+"/log?dryRun=x", nil, 404)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		add("log/"+m, m, log, []byte(`{}`), 405, ct(mtJSON)...)
	}
	add("unknown subresource", http.MethodPost, corpusItem+"/reboot", []byte(`{}`), 404, ct(mtJSON)...)
	add("status/POST", http.MethodPost, corpusStatus, []byte(`{}`), 405, ct(mtJSON)...)
	return cases
}
