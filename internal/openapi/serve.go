package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/internal/httpbody"
)

// Serve answers a group version's document, data, found at path, as
// kube-apiserver does: under its hash it is immutable, and kubectl's disk
// cache keeps it only when told for how long (Expires).
func Serve(w http.ResponseWriter, r *http.Request, path string, data []byte, hash string) {
	h := w.Header()
	etag := `"` + hash + `"`
	h.Set("Etag", etag)
	h.Set("Vary", "Accept")
	switch got := r.URL.Query().Get("hash"); {
	case got == hash:
		h.Set("Cache-Control", "public, immutable")
		h.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	case got != "":
		http.Redirect(w, r, path+"?hash="+hash, http.StatusMovedPermanently)
		return
	default:
		h.Set("Cache-Control", "no-cache, private")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	httpbody.Write(w, r, http.StatusOK, "application/json", data)
}

// The media types of /openapi/v2, as kube-apiserver serves them: JSON for
// kube-aggregator (which merges the documents of its APIServices and
// cannot read an empty body), the gnostic protobuf for kubectl and
// client-go (DiscoveryClient.OpenAPISchema), under either of its names.
const (
	openAPIV2Protobuf           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV2ProtobufDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// ServeV2 answers /openapi/v2 with a valid Swagger 2.0 document
// without paths or definitions: the schemas are in the v3 documents, which
// kubectl 1.27 and later read, but kubectl 1.27 and 1.28 fetch this one
// first and give up on a 404. kube-aggregator treats a 404 as "no spec" too,
// but a valid document suits both. Its media types are negotiated as
// kube-openapi's handler does: the clauses of Accept by q, then JSON before
// protobuf for a wildcard; nothing acceptable is 406 without a body.
func ServeV2(gitVersion string) http.HandlerFunc {
	jsonDoc, _ := json.Marshal(map[string]any{
		"swagger": "2.0",
		"info":    map[string]string{"title": "Kubernetes", "version": gitVersion},
		"paths":   map[string]any{},
	})
	// Document{swagger: 1, info: 2 {title: 1, version: 2}, paths: 8 {}}.
	var info []byte
	info = protowire.AppendTag(info, 1, protowire.BytesType)
	info = protowire.AppendString(info, "Kubernetes")
	info = protowire.AppendTag(info, 2, protowire.BytesType)
	info = protowire.AppendString(info, gitVersion)
	var pbDoc []byte
	pbDoc = protowire.AppendTag(pbDoc, 1, protowire.BytesType)
	pbDoc = protowire.AppendString(pbDoc, "2.0")
	pbDoc = protowire.AppendTag(pbDoc, 2, protowire.BytesType)
	pbDoc = protowire.AppendBytes(pbDoc, info)
	pbDoc = protowire.AppendTag(pbDoc, 8, protowire.BytesType)
	pbDoc = protowire.AppendBytes(pbDoc, nil)
	etag := fmt.Sprintf(`"%X"`, sha512.Sum512(jsonDoc)) // one for both, as kube's: Vary says which
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Accept")
		var data []byte
		switch openAPIV2MediaType(r.Header.Get("Accept")) {
		case "application/json":
			data = jsonDoc
			h.Set("Content-Type", "application/json")
		case openAPIV2Protobuf:
			data = pbDoc
			h.Set("Content-Type", openAPIV2Protobuf)
		default:
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		h.Set("Etag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		httpbody.Write(w, r, http.StatusOK, h.Get("Content-Type"), data)
	}
}

// openAPIV2MediaType picks what /openapi/v2 answers an Accept header with:
// "application/json", openAPIV2Protobuf, or "" for nothing acceptable.
func openAPIV2MediaType(accept string) string {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	best, bestQ := "", 0.0
	for _, clause := range strings.Split(accept, ",") {
		// Not mime.ParseMediaType: the protobuf's older name has an "@".
		mediaType, params, _ := strings.Cut(clause, ";")
		mediaType = strings.ToLower(strings.TrimSpace(mediaType))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, _ := strings.Cut(p, "="); strings.TrimSpace(k) == "q" {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || !(q > 0 && q <= 1) {
					q = 0
				}
			}
		}
		if q <= bestQ {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", "application/json":
			best, bestQ = "application/json", q
		case openAPIV2Protobuf, openAPIV2ProtobufDeprecated:
			best, bestQ = openAPIV2Protobuf, q
		}
	}
	return best
}
