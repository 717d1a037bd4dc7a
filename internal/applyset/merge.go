package applyset

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
)

// WithParentTypes serves Path on a server that serves
// CustomResourceDefinitions itself (api, its handler of them), and also
// registers kinds as parent types: kubectl's question (a JSON list whose
// label selector asks about ParentTypeLabel) is answered with api's list
// and, after its items, a CRD of each of kinds that it does not hold
// already. Every other request, and every answer but a 200 JSON list, is
// api's own.
func WithParentTypes(api http.Handler, kinds []Kind) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		extra, asks, err := selected(kinds, q.Get("labelSelector"))
		if err != nil || !asks || len(extra) == 0 || r.Method != http.MethodGet || q.Has("watch") || q.Has("continue") {
			api.ServeHTTP(w, r)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Accept-Encoding") // the list is read here
		rec := &recorder{header: http.Header{}, code: http.StatusOK}
		api.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		if mt, params, err := mime.ParseMediaType(rec.header.Get("Content-Type")); rec.code == http.StatusOK && err == nil && mt == "application/json" && params["as"] == "" {
			if merged, err := appendItems(body, extra); err == nil {
				body = merged
			}
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.code)
		_, _ = w.Write(body)
	})
}

// appendItems adds to the list the CRDs of extra whose names it does not
// hold.
func appendItems(list []byte, extra []crd) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(list, &doc); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(doc["items"], &items); err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, item := range items {
		var named struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(item, &named); err != nil {
			return nil, err
		}
		held[named.Metadata.Name] = true
	}
	for _, c := range extra {
		if held[c.Metadata.Name] {
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		items = append(items, b)
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	doc["items"] = b
	return json.Marshal(doc)
}

// recorder holds an answer to be changed before it is sent.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }
