package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// widgetWithMeta is a valid widget named name with the metadata fields of
// meta (a JSON object's members) added.
func widgetWithMeta(name, meta string) string {
	if meta != "" {
		meta = "," + meta
	}
	return fmt.Sprintf(`{"metadata":{"name":%q%s},"spec":{"color":"Red"}}`, name, meta)
}

// TestMetadataLimits: metadata is refused as kube-apiserver refuses it, with
// its words, as 422 Invalid with one cause per problem.
func TestMetadataLimits(t *testing.T) {
	_, c := newTestServer(t)
	const (
		qualifiedName = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
		labelValue    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	)
	long := strings.Repeat("a", 64)
	bigAnnotations := func(total int) string {
		// Two annotations whose keys and values add up to total bytes.
		half := total/2 - 1
		return fmt.Sprintf(`"annotations":{"a":%q,"b":%q}`, strings.Repeat("x", half), strings.Repeat("y", total-2-half))
	}
	cases := []struct {
		name   string
		body   string
		causes []kapi.StatusCause // nil: created
	}{
		{name: "valid labels and annotations", body: widgetWithMeta("ok", `"labels":{"example.com/app":"web","tier":""},"annotations":{"Example.com/Note":"any text: at all"}`)},
		{name: "annotations of exactly 256 KiB", body: widgetWithMeta("exact", bigAnnotations(262144))},
		{name: "annotations over 256 KiB", body: widgetWithMeta("big", bigAnnotations(262145)), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueTooLong, Field: "metadata.annotations", Message: "Too long: may not be more than 262144 bytes"},
		}},
		{name: "annotation key with a space", body: widgetWithMeta("ak", `"annotations":{"bad key":"v"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.annotations", Message: `Invalid value: "bad key": ` + qualifiedName},
		}},
		{name: "label key with two slashes", body: widgetWithMeta("lk", `"labels":{"a/b/c":"v"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		}},
		{name: "label key with an empty prefix", body: widgetWithMeta("lp", `"labels":{"/app":"v"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "/app": prefix part must be non-empty`},
		}},
		{name: "label key with an upper-case prefix", body: widgetWithMeta("lu", `"labels":{"Example.com/app":"v"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "Example.com/app": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		}},
		{name: "label key name over 63", body: widgetWithMeta("ll", `"labels":{"`+long+`":"v"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "` + long + `": name part must be no more than 63 bytes`},
		}},
		{name: "label value over 63", body: widgetWithMeta("lv", `"labels":{"app":"`+long+`"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "` + long + `": must be no more than 63 bytes`},
		}},
		{name: "label value with a space", body: widgetWithMeta("ls", `"labels":{"app":"a b"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "a b": ` + labelValue},
		}},
		{name: "label value ending in a dash", body: widgetWithMeta("ld", `"labels":{"app":"web-"}`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: `Invalid value: "web-": ` + labelValue},
		}},
		{name: "finalizer that is not a qualified name", body: widgetWithMeta("fz", `"finalizers":["no good"]`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.finalizers", Message: `Invalid value: "no good": ` + qualifiedName},
		}},
		{name: "owner reference without its fields", body: widgetWithMeta("or", `"ownerReferences":[{"apiVersion":"a/b/c"}]`), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.ownerReferences[0].apiVersion", Message: `Invalid value: "a/b/c": must be <group>/<version> or <version>`},
			{Type: kapi.CauseTypeFieldValueRequired, Field: "metadata.ownerReferences[0].kind", Message: "Required value: must not be empty"},
			{Type: kapi.CauseTypeFieldValueRequired, Field: "metadata.ownerReferences[0].name", Message: "Required value: must not be empty"},
			{Type: kapi.CauseTypeFieldValueRequired, Field: "metadata.ownerReferences[0].uid", Message: "Required value: must not be empty"},
		}},
		{name: "name over 253", body: widgetWithMeta(strings.Repeat("n", 254), ""), causes: []kapi.StatusCause{
			{Type: kapi.CauseTypeFieldValueInvalid, Field: "metadata.name", Message: `Invalid value: "` + strings.Repeat("n", 254) + `": must be no more than 253 characters`},
		}},
		{name: "generateName with upper case", body: `{"metadata":{"generateName":"Web-"},"spec":{"color":"Red"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(http.MethodPost, widgetsIn("default"), tc.body)
			if tc.name == "generateName with upper case" {
				st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
				if !hasCause(st, "metadata.generateName", kapi.CauseTypeFieldValueInvalid) {
					t.Errorf("causes %+v, want one for metadata.generateName", st.Details.Causes)
				}
				return
			}
			if tc.causes == nil {
				r.mustCode(t, http.StatusCreated)
				return
			}
			st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
			if st.Details == nil {
				t.Fatalf("no details: %s", r.Body)
			}
			got, _ := json.Marshal(st.Details.Causes)
			want, _ := json.Marshal(tc.causes)
			if !bytes.Equal(got, want) {
				t.Errorf("causes\n got %s\nwant %s", got, want)
			}
			if !strings.HasPrefix(st.Message, `Widget.example.com "`) || !strings.Contains(st.Message, " is invalid: ") {
				t.Errorf("message %q", st.Message)
			}
		})
	}

	t.Run("an update is checked too", func(t *testing.T) {
		w := c.create(newWidget("default", "updated"))
		w.Labels = map[string]string{"app": "not valid"}
		st := c.do(http.MethodPut, widgetPath("default", "updated"), w).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if !hasCause(st, "metadata.labels", kapi.CauseTypeFieldValueInvalid) {
			t.Errorf("causes %+v", st.Details)
		}
	})
}

// deepJSON nests n arrays in a widget's spec, under an unknown field.
func deepJSON(n int) string {
	return `{"metadata":{"name":"deep"},"spec":{"color":"Red","deep":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
}

// deepYAML is deepJSON in YAML's block style, one line of nested
// sequences: "- - - x".
func deepYAML(n int) string {
	return "metadata:\n  name: deep\nspec:\n  color: Red\n  deep:\n  " + strings.Repeat("- ", n) + "x\n"
}

// deepCBOR nests n arrays in a widget's spec: {"metadata":{"name":"deep"},
// "spec":{"deep":[[...]]}}, self-described as Kubernetes writes CBOR.
func deepCBOR(n int) []byte {
	b := []byte{0xd9, 0xd9, 0xf7, 0xa2}
	text := func(s string) { b = append(append(b, 0x60|byte(len(s))), s...) }
	text("metadata")
	b = append(b, 0xa1)
	text("name")
	text("deep")
	text("spec")
	b = append(b, 0xa1)
	text("deep")
	b = append(b, bytes.Repeat([]byte{0x81}, n)...)
	return append(b, 0x00)
}

// TestNestingLimits: a body nested deeper than 10000 (encoding/json's
// limit, and Kubernetes' for CBOR) is refused with a 400 Status in every
// format and on every write, never a 500 or a crash; one just under the
// limit is decoded.
func TestNestingLimits(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithMaxRequestBodyBytes(8<<20))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.create(newWidget("default", "target"))
	target := widgetPath("default", "target")
	const (
		jsonType  = "application/json"
		yamlType  = "application/yaml"
		cborType  = "application/cbor"
		mergeType = "application/merge-patch+json"
		jsonPatch = "application/json-patch+json"
		applyYAML = "application/apply-patch+yaml"
		applyCBOR = "application/apply-patch+cbor"
	)
	deepPatch := func(n int) string {
		return `[{"op":"add","path":"/spec/deep","value":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]`
	}
	cases := []struct {
		name, method, path, contentType string
		body                            func(n int) []byte
	}{
		{"create JSON", http.MethodPost, widgetsIn("default"), jsonType, func(n int) []byte { return []byte(deepJSON(n)) }},
		{"create YAML", http.MethodPost, widgetsIn("default"), yamlType, func(n int) []byte { return []byte(deepYAML(n)) }},
		{"create YAML flow style", http.MethodPost, widgetsIn("default"), yamlType, func(n int) []byte { return []byte(deepJSON(n)) }},
		{"create CBOR", http.MethodPost, widgetsIn("default"), cborType, deepCBOR},
		{"update JSON", http.MethodPut, target, jsonType, func(n int) []byte { return []byte(strings.Replace(deepJSON(n), `"deep"}`, `"target"}`, 1)) }},
		{"merge patch", http.MethodPatch, target, mergeType, func(n int) []byte { return []byte(deepJSON(n)[len(`{"metadata":{"name":"deep"},`)-1:]) }},
		{"JSON patch", http.MethodPatch, target, jsonPatch, func(n int) []byte { return []byte(deepPatch(n)) }},
		{"apply YAML", http.MethodPatch, target + "?fieldManager=test", applyYAML, func(n int) []byte { return []byte(strings.Replace(deepYAML(n), "name: deep", "name: target", 1)) }},
		{"apply CBOR", http.MethodPatch, widgetPath("default", "deep") + "?fieldManager=test", applyCBOR, deepCBOR},
		{"delete options", http.MethodDelete, widgetPath("default", "absent"), jsonType, func(n int) []byte {
			return []byte(`{"preconditions":{"uid":"x","extra":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
		}},
	}
	for _, tc := range cases {
		for _, depth := range []int{10001, 100000, 1000000} {
			t.Run(fmt.Sprintf("%s nested %d deep", tc.name, depth), func(t *testing.T) {
				r := c.do(tc.method, tc.path, tc.body(depth), "Content-Type", tc.contentType)
				st := r.failure(t, r.Code, "")
				if r.Code != http.StatusBadRequest && r.Code != http.StatusUnprocessableEntity {
					t.Errorf("HTTP %d (%s), want 400 or 422", r.Code, st.Message)
				}
			})
		}
	}
	t.Run("just under the limit", func(t *testing.T) {
		// The unknown field is dropped, with a warning.
		c.do(http.MethodPost, widgetsIn("default"), deepJSON(9990)).mustCode(t, http.StatusCreated)
	})
}

// TestBodyLimitOnEveryWrite: the body limit holds for every verb and body
// format, with kube-apiserver's 413.
func TestBodyLimitOnEveryWrite(t *testing.T) {
	const limit = 4096
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithMaxRequestBodyBytes(limit))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.create(newWidget("default", "a"))
	a := widgetPath("default", "a")
	padding := strings.Repeat("x", 2*limit)
	cases := []struct {
		name, method, path, contentType, body string
	}{
		{"create YAML", http.MethodPost, widgetsIn("default"), "application/yaml", "metadata:\n  name: big\n  annotations:\n    pad: " + padding + "\n"},
		{"JSON patch", http.MethodPatch, a, "application/json-patch+json", `[{"op":"add","path":"/metadata/annotations","value":{"pad":"` + padding + `"}}]`},
		{"apply", http.MethodPatch, a + "?fieldManager=test", "application/apply-patch+yaml", `{"metadata":{"name":"a","annotations":{"pad":"` + padding + `"}}}`},
		{"delete options", http.MethodDelete, a, "application/json", `{"dryRun":["` + padding + `"]}`},
		{"delete collection options", http.MethodDelete, widgetsIn("default"), "application/json", `{"dryRun":["` + padding + `"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := c.do(tc.method, tc.path, tc.body, "Content-Type", tc.contentType).failure(t, http.StatusRequestEntityTooLarge, kapi.StatusReasonRequestEntityTooLarge)
			if want := fmt.Sprintf("Request entity too large: limit is %d", limit); st.Message != want {
				t.Errorf("message %q, want %q", st.Message, want)
			}
		})
	}
	c.read("default", "a") // nothing was deleted
}
