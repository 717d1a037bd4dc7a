package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The bad-input corpus: hostile and malformed requests to every endpoint in
// every media type. Each must be answered with a 4xx Status — never a 5xx,
// never a hang — and none may change what is stored. badInputCorpus is also
// the seed of FuzzRequest.

// corpusCase is one bad request.
type corpusCase struct {
	name   string
	method string
	path   string
	header []string // key, value pairs
	body   []byte
	raw    []byte // when set, the whole request as written on the connection
	code   int    // the expected code; 0 is any 4xx
}

// Media types of request bodies.
const (
	ctJSONPatch  = "application/json-patch+json"
	ctMergePatch = "application/merge-patch+json"
	ctSMP        = "application/strategic-merge-patch+json"
	ctApplyYAML  = "application/apply-patch+yaml"
	ctApplyCBOR  = "application/apply-patch+cbor"
)

// The objects the corpus runs against.
const corpusNS = "default"

var (
	corpusItem   = widgetPath(corpusNS, "a")
	corpusStatus = corpusItem + "/status"
	corpusClass  = widgetClasses + "/gold"
)

// corpusSeed fills a server's store before the corpus runs.
func corpusSeed(c *apiClient) {
	corpusSeedBuiltins(c)
	c.create(newWidget(corpusNS, "a"))
	b := newWidget(corpusNS, "b")
	b.Labels = map[string]string{"app": "b"}
	b.Spec.Ports = []widgetapi.WidgetPort{{Name: "http", Port: 80}}
	c.create(b)
	c.create(newWidget("other", "c"))
	for _, name := range []string{"gold", "silver"} {
		c.do(http.MethodPost, widgetClasses, map[string]any{
			"apiVersion": "example.com/v1", "kind": "WidgetClass",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"maxReplicas": 3},
		}).mustCode(c.t, http.StatusCreated)
	}
}

// doc is a JSON-like document: map[string]any, []any, string, bool, int,
// json.Number (for numbers no Go type holds), nil.
type doc = map[string]any

func widgetDoc(name string) doc {
	return doc{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": doc{"name": name, "labels": doc{"app": "x"}, "annotations": doc{"note": "n"}},
		"spec": doc{"color": "Red", "replicas": 2, "size": 1,
			"ports":    []any{doc{"name": "http", "port": 80, "protocol": "TCP"}},
			"selector": doc{"app": "x"}},
		"status": doc{"replicas": 1, "observedGeneration": 1,
			"conditions": []any{doc{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "R", "message": "m"}}},
	}
}

func classDoc(name string) doc {
	return doc{"apiVersion": "example.com/v1", "kind": "WidgetClass",
		"metadata": doc{"name": name}, "spec": doc{"description": "d", "maxReplicas": 3}}
}

// deepCopy copies a doc through JSON, keeping numbers as json.Number.
func deepCopy(d doc) doc {
	data, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out doc
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// with returns a copy of d with the value at path (keys; an int indexes a
// list) set to v.
func with(d doc, v any, path ...any) doc {
	out := deepCopy(d)
	var cur any = out
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[k] = v
			} else {
				cur = m[k]
			}
		case int:
			l := cur.([]any)
			if last {
				l[k] = v
			} else {
				cur = l[k]
			}
		}
	}
	return out
}

func encJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

func encYAML(v any) []byte {
	data, err := apiservertest.YAML(v)
	if err != nil {
		panic(err)
	}
	return data
}

func encCBOR(v any) []byte {
	return apiservertest.CBORBody(deepCopyAny(v), apiservertest.CBOROptions{})
}

func deepCopyAny(v any) any {
	if d, ok := v.(doc); ok {
		return deepCopy(d)
	}
	return v
}

// bodyFormat writes a document as a request body.
type bodyFormat struct {
	name        string
	contentType string
	encode      func(any) []byte
}

var textFormats = []bodyFormat{
	{"json", mtJSON, encJSON},
	{"yaml", mtYAML, encYAML},
	{"cbor", mtCBOR, encCBOR},
}

// nest is s repeated n times, then mid, then e repeated n times.
func nest(s, mid, e string, n int) []byte {
	return []byte(strings.Repeat(s, n) + mid + strings.Repeat(e, n))
}

// billionLaughs is YAML whose aliases expand to 10^9 strings.
const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
apiVersion: example.com/v1
kind: Widget
metadata: {name: a}
spec: {color: Red, selector: {x: *i}}
`

// bodyLimit is the corpus server's request body limit: lower than the
// default 3 MiB (which TestErrorMatrix covers) so that the bodies over it
// stay quick to send under -race.
const bodyLimit = 1 << 20

// badInputCorpus is every case, named uniquely.
func badInputCorpus() []corpusCase {
	var cases []corpusCase
	add := func(name, method, path string, body []byte, code int, header ...string) {
		cases = append(cases, corpusCase{name: name, method: method, path: path, body: body, code: code, header: header})
	}
	ct := func(contentType string) []string { return []string{"Content-Type", contentType} }
	coll := widgetsIn(corpusNS)

	// Where a whole object is written, and what name it must carry there.
	type target struct {
		name, method, path string
		doc                doc
	}
	targets := []target{
		{"create", http.MethodPost, coll, widgetDoc("new")},
		{"update", http.MethodPut, corpusItem, widgetDoc("a")},
		{"status", http.MethodPut, corpusStatus, widgetDoc("a")},
		{"class-create", http.MethodPost, widgetClasses, classDoc("new")},
		{"class-update", http.MethodPut, corpusClass, classDoc("gold")},
	}

	// # Broken bodies, in every format, to every place an object is written.
	broken := map[string][]struct {
		name string
		body []byte
	}{
		mtJSON: {
			{"truncated", []byte(`{"apiVersion":"example.com/v1","metadata":{"name":"x"`)},
			{"empty", nil},
			{"whitespace", []byte(" \n\t ")},
			{"null", []byte(`null`)},
			{"array", []byte(`[{"metadata":{"name":"x"}}]`)},
			{"string", []byte(`"widget"`)},
			{"number", []byte(`42`)},
			{"trailing garbage", []byte(`{"metadata":{"name":"x"}}}}`)},
			{"two documents", []byte(`{"metadata":{"name":"x"}} {"metadata":{"name":"y"}}`)},
			{"invalid UTF-8 outside strings", []byte("{\xff\xfe}")},
			{"NUL bytes", []byte("\x00\x00\x00\x00")},
			{"unquoted keys", []byte(`{metadata:{name:x}}`)},
			{"single quotes", []byte(`{'metadata':{'name':'x'}}`)},
			{"bad escape", []byte(`{"metadata":{"name":"\x"}}`)},
			{"lone surrogate escape", []byte(`{"metadata":{"name":"\ud800"},"spec":{"color":"\udfff"}}`)},
			{"NaN", []byte(`{"metadata":{"name":"x"},"spec":{"replicas":NaN}}`)},
			{"comment", []byte(`{"metadata":{"name":"x"} /* c */}`)},
		},
		mtYAML: {
			{"unclosed flow", []byte("metadata: [\n")},
			{"colons", []byte(": : :\n")},
			{"tab indentation", []byte("metadata:\n\tname: x\n")},
			{"undefined alias", []byte("metadata: *nope\n")},
			{"recursive alias", []byte("metadata: &a {name: *a}\n")},
			{"a list", []byte("- a\n- b\n")},
			{"a string", []byte("just a string\n")},
			{"null", []byte("~\n")},
			{"binary tag", []byte("metadata: !!binary '%%%'\n")},
			{"int tag on a string", []byte("spec: {replicas: !!int abc}\n")},
			{"map key that is a map", []byte("{a: b}: c\n")},
			{"bad indentation", []byte("metadata:\n  name: x\n bad: y\n")},
			{"invalid UTF-8", []byte("metadata: {name: \xff\xfe}\n")},
			{"many documents", []byte("---\nkind: Widget\n---\nkind: Widget\n")},
		},
		mtCBOR: {
			{"tag only", []byte{0xd9, 0xd9, 0xf7}},
			{"truncated map", []byte{0xd9, 0xd9, 0xf7, 0xa2, 0x64, 'k', 'i', 'n', 'd'}},
			{"lone break", []byte{0xff}},
			{"integer keys", []byte{0xd9, 0xd9, 0xf7, 0xa1, 0x01, 0x02}},
			{"map of 2^63 entries", []byte{0xd9, 0xd9, 0xf7, 0xbb, 0x80, 0, 0, 0, 0, 0, 0, 0}},
			{"string of 2^63 bytes", []byte{0xd9, 0xd9, 0xf7, 0xa1, 0x7b, 0x80, 0, 0, 0, 0, 0, 0, 0}},
			{"invalid UTF-8 text", apiservertest.CBORBody(apiservertest.CBORPairs{"metadata", apiservertest.CBORPairs{"name", apiservertest.CBORRaw{0x62, 0xff, 0xfe}}}, apiservertest.CBOROptions{})},
			{"reserved additional info", []byte{0xd9, 0xd9, 0xf7, 0xbc}},
			{"undefined", []byte{0xd9, 0xd9, 0xf7, 0xf7}},
			{"an array", apiservertest.CBORBody([]any{"a", "b"}, apiservertest.CBOROptions{})},
			{"a JSON body", []byte(`{"metadata":{"name":"x"}}`)},
			{"trailing bytes", append(apiservertest.CBORBody(doc{"metadata": doc{"name": "x"}}, apiservertest.CBOROptions{}), 0x00, 0x01)},
			{"indefinite map without break", []byte{0xd9, 0xd9, 0xf7, 0xbf, 0x61, 'a', 0x01}},
			{"unknown simple value", []byte{0xd9, 0xd9, 0xf7, 0xa1, 0x61, 'a', 0xf8, 0x20}},
		},
		mtProtobuf: {
			{"no magic", []byte{0x0a, 0x02, 0x08, 0x01}},
			{"wrong magic", []byte("k8s\x01\x0a\x00")},
			{"magic only", []byte("k8s\x00")},
			{"raw garbage", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, []byte{0xff, 0xff, 0xff})},
			{"length past the end", append([]byte("k8s\x00"), 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01)},
			{"overlong varint", append([]byte("k8s\x00"), 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
			{"wire type 7", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, []byte{0x0f, 0x01})},
			{"other kind", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "v1", Kind: "Pod"}, apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "x")))},
			{"a JSON body", []byte(`{"metadata":{"name":"x"}}`)},
			{"deep groups", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, nest("\xa3\x06", "", "\xa4\x06", 200000))},
			{"metadata of the wrong wire type", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, []byte{0x08, 0x01})},
			{"name of the wrong wire type", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, apiservertest.AppendProtoMessage(nil, 1, []byte{0x08, 0x05}))},
			{"replicas of the wrong wire type", apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "x")), 2, apiservertest.AppendProtoString(nil, 2, "three")))},
		},
	}
	for i, tg := range targets {
		for _, mt := range []string{mtJSON, mtYAML, mtCBOR, mtProtobuf} {
			for j, b := range broken[mt] {
				if i >= 2 && j%3 != i%3 {
					continue // status and classes get a third of each format's cases
				}
				add(fmt.Sprintf("body/%s/%s/%s", tg.name, bareName(mt), b.name), tg.method, tg.path, b.body, 0, ct(mt)...)
			}
		}
	}

	// # Wrong types at every level, and numbers no field holds.
	type mutation struct {
		name string
		v    any
		path []any
	}
	big := json.Number("18446744073709551616") // 2^64
	huge := json.Number("1e400")
	widgetMutations := []mutation{
		{"apiVersion number", 1, []any{"apiVersion"}},
		{"kind list", []any{}, []any{"kind"}},
		{"metadata string", "m", []any{"metadata"}},
		{"name number", 123, []any{"metadata", "name"}},
		{"labels string", "app=x", []any{"metadata", "labels"}},
		{"label value number", 5, []any{"metadata", "labels", "app"}},
		{"annotations list", []any{"a"}, []any{"metadata", "annotations"}},
		{"generation string", "1", []any{"metadata", "generation"}},
		{"generation 2^64", big, []any{"metadata", "generation"}},
		{"generation 1e400", huge, []any{"metadata", "generation"}},
		{"creationTimestamp not a time", "yesterday", []any{"metadata", "creationTimestamp"}},
		{"resourceVersion number", 7, []any{"metadata", "resourceVersion"}},
		{"resourceVersion not a number", "abc", []any{"metadata", "resourceVersion"}},
		{"ownerReferences string", "x", []any{"metadata", "ownerReferences"}},
		{"finalizers string", "x", []any{"metadata", "finalizers"}},
		{"managedFields string", "x", []any{"metadata", "managedFields"}},
		{"deletionGracePeriodSeconds 1e400", huge, []any{"metadata", "deletionGracePeriodSeconds"}},
		{"spec string", "x", []any{"spec"}},
		{"color number", 7, []any{"spec", "color"}},
		{"replicas string", "three", []any{"spec", "replicas"}},
		{"replicas bool", true, []any{"spec", "replicas"}},
		{"replicas 2^64", big, []any{"spec", "replicas"}},
		{"replicas 1e400", huge, []any{"spec", "replicas"}},
		{"replicas 2^31", json.Number("2147483648"), []any{"spec", "replicas"}},
		{"replicas below int64", json.Number("-9223372036854775809"), []any{"spec", "replicas"}},
		{"replicas fraction", json.Number("1.5"), []any{"spec", "replicas"}},
		{"size list", []any{1}, []any{"spec", "size"}},
		{"ports map", doc{}, []any{"spec", "ports"}},
		{"port item string", "http", []any{"spec", "ports", 0}},
		{"port string", "80", []any{"spec", "ports", 0, "port"}},
		{"port 2^64", big, []any{"spec", "ports", 0, "port"}},
		{"selector list", []any{"a"}, []any{"spec", "selector"}},
		{"status string", "ok", []any{"status"}},
		{"status replicas string", "one", []any{"status", "replicas"}},
		{"observedGeneration 2^64", big, []any{"status", "observedGeneration"}},
		{"conditions string", "Ready", []any{"status", "conditions"}},
		{"condition time not a time", "now", []any{"status", "conditions", 0, "lastTransitionTime"}},
	}
	classMutations := []mutation{
		{"spec list", []any{}, []any{"spec"}},
		{"maxReplicas string", "3", []any{"spec", "maxReplicas"}},
		{"maxReplicas 2^64", big, []any{"spec", "maxReplicas"}},
		{"maxReplicas 1e400", huge, []any{"spec", "maxReplicas"}},
		{"description number", 1, []any{"spec", "description"}},
		{"name map", doc{}, []any{"metadata", "name"}},
	}
	for _, tg := range targets {
		muts := widgetMutations
		if strings.HasPrefix(tg.name, "class") {
			muts = classMutations
		}
		formats := textFormats
		if tg.name != "create" {
			formats = textFormats[:1] // every format once, on create, is enough
		}
		for _, f := range formats {
			for _, m := range muts {
				if f.name == "yaml" && (m.v == any(big) || m.v == any(huge)) {
					continue // yaml.v3 writes them as strings: the string cases cover that
				}
				if tg.method == http.MethodPost && m.name == "resourceVersion not a number" {
					continue // a create ignores the resourceVersion sent
				}
				add(fmt.Sprintf("type/%s/%s/%s", tg.name, f.name, m.name), tg.method, tg.path, f.encode(with(tg.doc, m.v, m.path...)), 400, ct(f.contentType)...)
			}
		}
	}
	// Giant numbers as YAML writes them.
	for _, n := range []string{"1e400", "18446744073709551616", ".inf", "-.inf", ".nan", "0x7fffffffffffffffff", "1_000_000_000_000_000_000"} {
		add("number/yaml/replicas "+n, http.MethodPost, coll, []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: n}\nspec: {color: Red, replicas: "+n+"}\n"), 400, ct(mtYAML)...)
	}
	// ... and as CBOR writes them: bignums, floats, tags.
	for _, n := range []struct {
		name string
		raw  []byte
	}{
		{"bignum 2^64", []byte{0xc2, 0x49, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"negative bignum", []byte{0xc3, 0x49, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"uint64 max", []byte{0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"negative 2^64", []byte{0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"float infinity", []byte{0xf9, 0x7c, 0x00}},
		{"float NaN", []byte{0xf9, 0x7e, 0x00}},
		{"decimal fraction tag", []byte{0xc4, 0x82, 0x21, 0x19, 0x6a, 0xb3}},
		{"epoch time tag", []byte{0xc1, 0x1a, 0x51, 0x4b, 0x67, 0xb0}},
	} {
		body := apiservertest.CBORBody(apiservertest.CBORPairs{"apiVersion", "example.com/v1", "kind", "Widget", "metadata", apiservertest.CBORPairs{"name", "n"},
			"spec", apiservertest.CBORPairs{"color", "Red", "replicas", apiservertest.CBORRaw(n.raw)}}, apiservertest.CBOROptions{})
		add("number/cbor/replicas "+n.name, http.MethodPost, coll, body, 400, ct(mtCBOR)...)
	}

	// # Invalid UTF-8 in names, labels and bodies.
	for _, f := range []struct {
		name, body string
	}{
		{"name", `{"metadata":{"name":"a\xffb"},"spec":{"color":"Red"}}`},
		{"generateName", `{"metadata":{"generateName":"\xff\xfe"},"spec":{"color":"Red"}}`},
		{"namespace", `{"metadata":{"name":"u","namespace":"def\xffault"},"spec":{"color":"Red"}}`},
		{"label key", `{"metadata":{"name":"u","labels":{"a\xff":"b"}},"spec":{"color":"Red"}}`},
		{"label value", `{"metadata":{"name":"u","labels":{"a":"b\xff"}},"spec":{"color":"Red"}}`},
		{"annotation key", `{"metadata":{"name":"u","annotations":{"\xc0\xaf":"b"}},"spec":{"color":"Red"}}`},
		{"color", `{"metadata":{"name":"u"},"spec":{"color":"Red\xff"}}`},
		{"key", `{"metadata":{"name":"u"},"spec":{"color":"Red","\xff":1}}`},
	} {
		add("utf8/json/"+f.name, http.MethodPost, coll, []byte(f.body), 0, ct(mtJSON)...)
		add("utf8/json-strict/"+f.name, http.MethodPost, coll+"?fieldValidation=Strict", []byte(f.body), 0, ct(mtJSON)...)
		add("utf8/merge-patch/"+f.name, http.MethodPatch, corpusItem, []byte(strings.Replace(f.body, `"name":"u"`, `"name":"a"`, 1)), 0, ct(ctMergePatch)...)
	}
	for _, f := range []struct {
		name, body string
	}{
		{"name", "metadata: {name: \"a\xffb\"}\nspec: {color: Red}\n"},
		{"label", "metadata: {name: u, labels: {a: \"\xff\"}}\nspec: {color: Red}\n"},
	} {
		add("utf8/yaml/"+f.name, http.MethodPost, coll, []byte(f.body), 0, ct(mtYAML)...)
	}
	add("utf8/cbor/label key", http.MethodPost, coll, apiservertest.CBORBody(apiservertest.CBORPairs{"metadata", apiservertest.CBORPairs{"name", "u", "labels", apiservertest.CBORPairs{apiservertest.CBORRaw{0x61, 0xff}, "b"}}, "spec", apiservertest.CBORPairs{"color", "Red"}}, apiservertest.CBOROptions{}), 0, ct(mtCBOR)...)
	add("utf8/cbor/byte-string name", http.MethodPost, coll, apiservertest.CBORBody(apiservertest.CBORPairs{"metadata", apiservertest.CBORPairs{"name", apiservertest.CBORRaw{0x42, 0xff, 0xfe}}, "spec", apiservertest.CBORPairs{"color", "Red"}}, apiservertest.CBOROptions{}), 0, ct(mtCBOR)...)
	add("utf8/protobuf/name", http.MethodPost, coll, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "a\xffb")), 2, apiservertest.AppendProtoString(nil, 1, "Red"))), 0, ct(mtProtobuf)...)
	add("utf8/protobuf/label", http.MethodPost, coll, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoMessage(apiservertest.AppendProtoString(nil, 1, "u"), 11, apiservertest.AppendProtoString(apiservertest.AppendProtoString(nil, 1, "a"), 2, "\xff"))), 2, apiservertest.AppendProtoString(nil, 1, "Red"))), 0, ct(mtProtobuf)...)
	add("utf8/path/get", http.MethodGet, coll+"/%FF%FE", nil, 404)
	add("utf8/path/put", http.MethodPut, coll+"/%FF", encJSON(widgetDoc("\xff")), 0, ct(mtJSON)...)
	add("utf8/path/delete", http.MethodDelete, coll+"/%C0%AF", nil, 404)
	add("utf8/path/namespace", http.MethodPost, groupVersionPath+"/namespaces/%FF/widgets", encJSON(widgetDoc("u")), 0, ct(mtJSON)...)
	add("utf8/labelSelector", http.MethodGet, coll+"?labelSelector=a%3D%FF", nil, 400)
	add("utf8/labelSelector key", http.MethodGet, coll+"?labelSelector=%FF%3Db", nil, 400)
	add("utf8/fieldManager", http.MethodPatch, corpusItem+"?fieldManager=%FF", []byte(`{"spec":{"color":"purple"}}`), 0, ct(ctMergePatch)...)
	add("utf8/Content-Type", http.MethodPost, coll, encJSON(widgetDoc("u")), 415, "Content-Type", "application/json\xff")
	add("utf8/Accept", http.MethodGet, corpusItem, nil, 406, "Accept", "application/\xff")

	// # Path traversal in names and namespaces.
	for _, name := range []string{"..", ".", "%2E%2E", "%2F", "a%2Fb", "a%2F..%2Fb", "..%2F..%2Fwidgetclasses", "%252F", "a%00b", "a%5Cb", "%2e", "a%20b"} {
		add("path/get/"+name, http.MethodGet, coll+"/"+name, nil, 0)
		add("path/put/"+name, http.MethodPut, coll+"/"+name, encJSON(widgetDoc("a")), 0, ct(mtJSON)...)
		add("path/patch/"+name, http.MethodPatch, coll+"/"+name, []byte(`{"spec":{"color":"Blue"}}`), 0, ct(ctMergePatch)...)
		add("path/delete/"+name, http.MethodDelete, coll+"/"+name, nil, 0)
	}
	for _, p := range []string{
		coll + "/a/../b", coll + "/a/../../other/widgets/c", groupVersionPath + "/namespaces/../widgets/a",
		groupVersionPath + "/namespaces/%2E%2E/widgets/a", groupVersionPath + "/namespaces/default%2Fwidgets/widgets/a",
		corpusItem + "/status/..", corpusItem + "/..", corpusClass + "/../silver", "/apis/example.com/v1/../v1/namespaces/default/widgets/a",
	} {
		add("path/delete "+p, http.MethodDelete, p, nil, 0)
		add("path/put "+p, http.MethodPut, p, encJSON(widgetDoc("a")), 0, ct(mtJSON)...)
	}
	add("path/create in namespace ..", http.MethodPost, groupVersionPath+"/namespaces/../widgets", encJSON(widgetDoc("t")), 400, ct(mtJSON)...)
	add("path/create in namespace with %2F", http.MethodPost, groupVersionPath+"/namespaces/a%2Fb/widgets", encJSON(widgetDoc("t")), 400, ct(mtJSON)...)
	add("path/create with name ..", http.MethodPost, coll, encJSON(widgetDoc("..")), 422, ct(mtJSON)...)
	add("path/create with name a/b", http.MethodPost, coll, encJSON(widgetDoc("a/b")), 422, ct(mtJSON)...)
	add("path/create with name a%2Fb", http.MethodPost, coll, encJSON(widgetDoc("a%2Fb")), 422, ct(mtJSON)...)
	add("path/create class with name ..", http.MethodPost, widgetClasses, encJSON(classDoc("..")), 422, ct(mtJSON)...)
	add("path/deletecollection in namespace with %2F", http.MethodDelete, groupVersionPath+"/namespaces/default%2F..%2Fother/widgets", nil, 400)
	add("path/deletecollection in empty namespace", http.MethodDelete, groupVersionPath+"/namespaces//widgets", nil, 0)
	add("path/create in empty namespace", http.MethodPost, groupVersionPath+"/namespaces//widgets", encJSON(widgetDoc("t")), 0, ct(mtJSON)...)

	// # Bad values of every known query parameter.
	for _, q := range []struct {
		name, query string
		code        int
	}{
		{"limit not a number", "limit=many", 400},
		{"limit 1e400", "limit=1e400", 400},
		{"limit 2^64", "limit=18446744073709551616", 400},
		{"limit fraction", "limit=1.5", 400},
		{"continue garbage", "limit=1&continue=%FF%FE", 400},
		{"continue base64 of garbage", "limit=1&continue=bm90IGpzb24", 400},
		{"continue base64 of a negative revision", "limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYSJ9", 400},
		{"continue with a path", "limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiIuLi8uLi8ifQ", 0},
		{"continue huge", "limit=1&continue=" + strings.Repeat("A", 20000), 400},
		{"resourceVersion abc", "resourceVersion=abc", 400},
		{"resourceVersion negative", "resourceVersion=-1", 400},
		{"resourceVersion 1e400", "resourceVersion=1e400", 400},
		{"resourceVersion 2^64", "resourceVersion=18446744073709551616", 400},
		{"resourceVersion hex", "resourceVersion=0x10", 400},
		{"resourceVersion space", "resourceVersion=%201", 400},
		{"resourceVersionMatch bogus", "resourceVersion=1&resourceVersionMatch=Bogus", 422},
		{"resourceVersionMatch lower case", "resourceVersion=1&resourceVersionMatch=exact", 422},
		{"resourceVersionMatch alone", "resourceVersionMatch=NotOlderThan", 422},
		{"resourceVersionMatch Exact at 0", "resourceVersion=0&resourceVersionMatch=Exact", 422},
		{"resourceVersionMatch with continue", "limit=1&resourceVersionMatch=NotOlderThan&continue=abc", 0},
		{"timeoutSeconds abc", "timeoutSeconds=soon", 400},
		{"timeoutSeconds 1e400", "timeoutSeconds=1e400", 400},
		{"timeoutSeconds 2^64", "timeoutSeconds=18446744073709551616", 400},
		{"labelSelector unclosed", "labelSelector=app%20in%20(a", 400},
		{"labelSelector bad key", "labelSelector=Bad%20Key%3Dx", 400},
		{"labelSelector long value", "labelSelector=a%3D" + strings.Repeat("v", 64), 400},
		{"labelSelector long key", "labelSelector=" + strings.Repeat("k", 300) + "%3Dv", 400},
		{"labelSelector only operators", "labelSelector=%3D%3D%3D", 400},
		{"labelSelector huge", "labelSelector=" + strings.Repeat("a%3Db,", 2000) + "(", 400},
		{"labelSelector gt not a number", "labelSelector=n%3Ex", 400},
		{"fieldSelector unknown field", "fieldSelector=spec.size%3D1", 400},
		{"fieldSelector no operator", "fieldSelector=metadata.name", 400},
		{"fieldSelector set operator", "fieldSelector=metadata.name%20in%20(a)", 400},
		{"fieldSelector empty term", "fieldSelector=metadata.name%3Da,,", 400},
		{"fieldSelector NUL", "fieldSelector=%00%3D%00", 400},
		{"sendInitialEvents on a list", "sendInitialEvents=true", 422},
		{"sendInitialEvents nonsense on a list", "sendInitialEvents=%FF", 422},
		{"includeObject bogus on a Table", "includeObject=Bogus", 0},
		{"pretty and limit", "pretty=%FF&limit=x", 400},
		{"unknown parameters and a bad limit", "bogus=%FF%FE&x=&=y&limit=-5", 400},
		{"unknown parameter with a NUL", "a%00b=%00&resourceVersion=x", 400},
		{"limit with continue and resourceVersion", "limit=1&continue=abc&resourceVersion=5", 400},
		{"watch nonsense and a bad resourceVersion", "watch=%FF&resourceVersion=abc", 400},
		{"watch and timeoutSeconds abc", "watch=true&timeoutSeconds=abc", 400},
		{"watch and resourceVersionMatch without sendInitialEvents", "watch=1&resourceVersionMatch=NotOlderThan", 422},
		{"watch and sendInitialEvents without resourceVersionMatch", "watch=1&sendInitialEvents=true", 422},
		{"watch and sendInitialEvents with Exact", "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact", 422},
		{"watch and a bad labelSelector", "watch=1&labelSelector=(", 400},
		{"watch and a bad fieldSelector", "watch=1&fieldSelector=spec.size%3D1", 400},
		{"watch and allowWatchBookmarks nonsense and a bad resourceVersion", "watch=1&allowWatchBookmarks=maybe&resourceVersion=-1", 400},
		{"watch and resourceVersion 2^64", "watch=1&resourceVersion=18446744073709551616", 400},
	} {
		code := q.code
		add("query/list/"+q.name, http.MethodGet, coll+"?"+q.query, nil, code, "Accept", tableAccept(mtJSON, "v1"))
	}
	add("query/all namespaces/resourceVersion abc", http.MethodGet, allWidgets+"?resourceVersion=abc", nil, 400)
	add("query/class list/limit abc", http.MethodGet, widgetClasses+"?limit=abc", nil, 400)
	add("query/class watch/resourceVersion abc", http.MethodGet, widgetClasses+"?watch=1&resourceVersion=abc", nil, 400)
	add("query/get/resourceVersion abc", http.MethodGet, corpusItem+"?resourceVersion=abc", nil, 400)
	add("query/get/resourceVersion 2^64", http.MethodGet, corpusItem+"?resourceVersion=18446744073709551616", nil, 400)
	add("query/get status/resourceVersion abc", http.MethodGet, corpusStatus+"?resourceVersion=abc", nil, 400)
	add("query/get/unknown parameter on a missing object", http.MethodGet, widgetPath(corpusNS, "missing")+"?bogus=%FF&pretty=%00", nil, 404)
	// Writes: every known parameter with a bad value, on a body that would
	// otherwise be written.
	for _, q := range []struct {
		name, query string
		code        int
	}{
		{"dryRun bogus", "dryRun=Bogus", 400},
		{"dryRun lower case", "dryRun=all", 400},
		{"dryRun All and bogus", "dryRun=All&dryRun=x", 400},
		{"dryRun empty", "dryRun=", 400},
		{"fieldValidation bogus", "fieldValidation=Bogus", 0},
		{"fieldValidation lower case", "fieldValidation=strict", 0},
		{"fieldValidation twice", "fieldValidation=Bogus&fieldValidation=Strict", 0},
		{"fieldManager too long", "fieldManager=" + strings.Repeat("m", 129), 0},
		{"fieldManager control characters", "fieldManager=a%0Ab%00", 0},
	} {
		add("query/create/"+q.name, http.MethodPost, coll+"?"+q.query, encJSON(widgetDoc("q")), q.code, ct(mtJSON)...)
		add("query/update/"+q.name, http.MethodPut, corpusItem+"?"+q.query, encJSON(with(widgetDoc("a"), "Blue", "spec", "color")), q.code, ct(mtJSON)...)
		add("query/merge-patch/"+q.name, http.MethodPatch, corpusItem+"?"+q.query, []byte(`{"spec":{"color":"Green"}}`), q.code, ct(ctMergePatch)...)
		manager := "fieldManager=m&"
		if strings.HasPrefix(q.query, "fieldManager=") {
			manager = "" // the first value is the one read
		}
		add("query/apply/"+q.name, http.MethodPatch, corpusItem+"?"+manager+q.query, encJSON(with(widgetDoc("a"), "Green", "spec", "color")), q.code, ct(ctApplyYAML)...)
	}
	add("query/merge-patch/force", http.MethodPatch, corpusItem+"?force=true", []byte(`{"spec":{"color":"Green"}}`), 0, ct(ctMergePatch)...)
	add("query/json-patch/force", http.MethodPatch, corpusItem+"?force=false", []byte(`[{"op":"replace","path":"/spec/color","value":"Green"}]`), 0, ct(ctJSONPatch)...)
	add("query/apply/force nonsense without fieldManager", http.MethodPatch, corpusItem+"?force=%FF", encJSON(widgetDoc("a")), 422, ct(ctApplyYAML)...)
	for _, q := range []struct {
		name, query string
		code        int
	}{
		{"propagationPolicy bogus", "propagationPolicy=Sideways", 422},
		{"propagationPolicy lower case", "propagationPolicy=orphan", 422},
		{"gracePeriodSeconds abc", "gracePeriodSeconds=abc", 400},
		{"gracePeriodSeconds 1e400", "gracePeriodSeconds=1e400", 400},
		{"gracePeriodSeconds 2^64", "gracePeriodSeconds=18446744073709551616", 400},
		{"dryRun bogus", "dryRun=Bogus", 400},
		{"dryRun bogus after All", "dryRun=All&dryRun=Bogus", 400},
		{"orphanDependents and propagationPolicy", "orphanDependents=true&propagationPolicy=Foreground", 0},
		{"unknown parameter and a bad propagationPolicy", "x=%FF&propagationPolicy=%FF", 422},
		{"unsafe deletion with a propagationPolicy", "ignoreStoreReadErrorWithClusterBreakingPotential=true&propagationPolicy=Orphan", 422},
		{"unsafe deletion with gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential=true&gracePeriodSeconds=0", 422},
		{"unsafe deletion not a boolean", "ignoreStoreReadErrorWithClusterBreakingPotential=%FF&propagationPolicy=Sideways", 422},
	} {
		add("query/delete/"+q.name, http.MethodDelete, corpusItem+"?"+q.query, nil, q.code)
		add("query/delete class/"+q.name, http.MethodDelete, corpusClass+"?"+q.query, nil, q.code)
		add("query/deletecollection/"+q.name, http.MethodDelete, coll+"?"+q.query, nil, q.code)
	}
	// Unsafe deletion of a readable object is refused; of a collection, too.
	add("query/delete/unsafe deletion of a readable object", http.MethodDelete, corpusItem+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil, 409)
	add("query/delete class/unsafe deletion of a readable object", http.MethodDelete, corpusClass+"?ignoreStoreReadErrorWithClusterBreakingPotential=1", nil, 409)
	add("query/deletecollection/unsafe deletion", http.MethodDelete, coll+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil, 422)
	add("query/deletecollection/bad labelSelector", http.MethodDelete, coll+"?labelSelector=app%20in%20(", nil, 400)
	add("query/deletecollection/bad fieldSelector", http.MethodDelete, coll+"?fieldSelector=spec.size%3D1", nil, 400)
	add("query/deletecollection/bad limit", http.MethodDelete, coll+"?limit=abc", nil, 0)
	add("query/deletecollection/bad resourceVersion", http.MethodDelete, coll+"?resourceVersion=abc", nil, 0)

	// # Wrong methods.
	for _, m := range []struct {
		method, path string
	}{
		{http.MethodPost, corpusItem}, {http.MethodPost, corpusStatus}, {http.MethodDelete, corpusStatus},
		{http.MethodPatch, coll}, {http.MethodPut, coll}, {http.MethodPost, allWidgets}, {http.MethodDelete, allWidgets},
		{http.MethodPut, allWidgets}, {http.MethodPost, corpusClass}, {http.MethodPut, widgetClasses},
		{http.MethodOptions, corpusItem}, {http.MethodTrace, coll}, {"PROPFIND", corpusItem}, {"get", corpusItem},
		{http.MethodPost, "/apis"}, {http.MethodDelete, "/apis"}, {http.MethodPut, "/api"}, {http.MethodPost, "/apis/example.com"},
		{http.MethodDelete, "/apis/example.com/v1"}, {http.MethodPost, "/openapi/v3"}, {http.MethodPut, "/openapi/v3/apis/example.com/v1"},
		{http.MethodDelete, "/openapi/v2"}, {http.MethodPost, "/version"}, {http.MethodDelete, "/version"}, {http.MethodPost, "/healthz"},
		{http.MethodPut, "/livez"}, {http.MethodDelete, "/readyz"}, {http.MethodPatch, "/version"},
		{http.MethodPost, "/readyz/storage"}, {http.MethodDelete, "/livez/ping"},
	} {
		add(fmt.Sprintf("method/%s %s", m.method, m.path), m.method, m.path, encJSON(widgetDoc("a")), 405, ct(mtJSON)...)
	}
	// Paths that are not there.
	for _, p := range []string{
		"/apis/example.com/v2", "/apis/example.com/v1/gizmos", "/apis/nope.example/v1", "/api/v1/pods", "/api/v2/pods",
		"/openapi/v3/apis/example.com/v9", "/openapi/v3/apis/nope/v1", "/openapi/v3/apis/example.com/v1/extra",
		"/version/extra", "/healthz/bogus", "/readyz/bogus", "/readyz/storage/extra", "/livez/%2E%2E", "/apis/example.com/v1/namespaces/default/widgets/a/status/extra",
		"/apis/example.com/v1/widgetclasses/gold/status", "/apis/example.com/v1/namespaces/default/widgetclasses",
		"/apis/example.com/v1/namespaces/default", "/apis/example.com/v1/namespaces", "//apis/example.com/v1/widgets",
		"/apis/example.com/v1/namespaces/default/widgets/a/status/extra/more",
	} {
		add("missing/get "+p, http.MethodGet, p, nil, 404)
	}
	// Unknown subresources, with every method (log is the example's: corpus_actions_test.go).
	for _, sub := range []string{"bogus", "attach", "exec", "proxy", "eviction", "binding", "finalize", "Status", "status%2F..", "%2E%2E"} {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodPost, http.MethodDelete} {
			var body []byte
			var h []string
			switch m {
			case http.MethodPut, http.MethodPost:
				body, h = encJSON(widgetDoc("a")), ct(mtJSON)
			case http.MethodPatch:
				body, h = []byte(`{"spec":{"color":"Blue"}}`), ct(ctMergePatch)
			}
			add(fmt.Sprintf("subresource/%s %s", m, sub), m, corpusItem+"/"+sub, body, 0, h...)
		}
	}

	// The scale subresource: what it refuses.
	for _, sc := range []struct {
		name, method, path string
		body               []byte
		code               int
		header             []string
	}{
		{"negative replicas", http.MethodPatch, corpusItem + "/scale", []byte(`{"spec":{"replicas":-1}}`), 422, ct(ctMergePatch)},
		{"replicas a string", http.MethodPatch, corpusItem + "/scale", []byte(`{"spec":{"replicas":"many"}}`), 400, ct(ctMergePatch)},
		{"replicas past int32", http.MethodPatch, corpusItem + "/scale", []byte(`{"spec":{"replicas":4294967296}}`), 400, ct(ctMergePatch)},
		{"apply", http.MethodPatch, corpusItem + "/scale?fieldManager=m", []byte(`{"spec":{"replicas":2}}`), 415, ct(ctApplyYAML)},
		{"a widget for a scale", http.MethodPut, corpusItem + "/scale", encJSON(widgetDoc("a")), 400, ct(mtJSON)},
		{"renamed", http.MethodPut, corpusItem + "/scale", []byte(`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"z"},"spec":{"replicas":2}}`), 400, ct(mtJSON)},
		{"stale", http.MethodPut, corpusItem + "/scale", []byte(`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"a","resourceVersion":"1"},"spec":{"replicas":2}}`), 409, ct(mtJSON)},
		{"POST", http.MethodPost, corpusItem + "/scale", []byte(`{}`), 405, ct(mtJSON)},
		{"DELETE", http.MethodDelete, corpusItem + "/scale", nil, 405, nil},
		{"a missing widget", http.MethodGet, widgetPath(corpusNS, "missing") + "/scale", nil, 404, nil},
		{"classes have none", http.MethodGet, "/apis/example.com/v1/widgetclasses/gold/scale", nil, 404, nil},
	} {
		add("scale/"+sc.name, sc.method, sc.path, sc.body, sc.code, sc.header...)
	}

	// # Headers that lie about the content.
	yamlWidget := encYAML(widgetDoc("lie"))
	cborWidget := encCBOR(widgetDoc("lie"))
	protoWidget := pbWidgetBody(newWidget(corpusNS, "lie"))
	for _, l := range []struct {
		name, contentType string
		body              []byte
		code              int
	}{
		{"JSON with a YAML body", mtJSON, yamlWidget, 400},
		{"JSON with a CBOR body", mtJSON, cborWidget, 400},
		{"JSON with a protobuf body", mtJSON, protoWidget, 400},
		{"YAML with a CBOR body", mtYAML, cborWidget, 400},
		{"YAML with a protobuf body", mtYAML, protoWidget, 400},
		{"CBOR with a YAML body", mtCBOR, yamlWidget, 400},
		{"CBOR with a protobuf body", mtCBOR, protoWidget, 400},
		{"protobuf with a YAML body", mtProtobuf, yamlWidget, 400},
		{"protobuf with a CBOR body", mtProtobuf, cborWidget, 400},
		{"text/plain", "text/plain", encJSON(widgetDoc("lie")), 415},
		{"empty parameters", "application/json;;;", encJSON(widgetDoc("lie")), 415},
		{"no subtype", "application/", encJSON(widgetDoc("lie")), 415},
		{"wildcard", "*/*", encJSON(widgetDoc("lie")), 415},
		{"application wildcard", "application/*", encJSON(widgetDoc("lie")), 415},
		{"a patch type on create", ctMergePatch, encJSON(widgetDoc("lie")), 415},
		{"apply type on create", ctApplyYAML, encJSON(widgetDoc("lie")), 415},
		{"json seq", "application/json-seq", encJSON(widgetDoc("lie")), 415},
		{"multipart", "multipart/form-data; boundary=x", []byte("--x\r\n\r\n{}\r\n--x--"), 415},
	} {
		add("header/create/Content-Type "+l.name, http.MethodPost, coll, l.body, l.code, ct(l.contentType)...)
	}
	for _, l := range []struct {
		name, method, path, contentType string
		body                            []byte
		code                            int
	}{
		{"update JSON with a YAML body", http.MethodPut, corpusItem, mtJSON, encYAML(widgetDoc("a")), 400},
		{"status JSON with a CBOR body", http.MethodPut, corpusStatus, mtJSON, encCBOR(widgetDoc("a")), 400},
		{"merge patch with a YAML body", http.MethodPatch, corpusItem, ctMergePatch, []byte("spec:\n  color: Blue\n"), 400},
		{"JSON patch with a merge patch", http.MethodPatch, corpusItem, ctJSONPatch, []byte(`{"spec":{"color":"Blue"}}`), 0},
		{"merge patch with a JSON patch", http.MethodPatch, corpusItem, ctMergePatch, []byte(`[{"op":"replace","path":"/spec/color","value":"Blue"}]`), 0},
		{"apply CBOR with a JSON body", http.MethodPatch, corpusItem + "?fieldManager=m", ctApplyCBOR, encJSON(widgetDoc("a")), 400},
		{"apply YAML with a CBOR body", http.MethodPatch, corpusItem + "?fieldManager=m", ctApplyYAML, encCBOR(widgetDoc("a")), 400},
		{"patch as application/json", http.MethodPatch, corpusItem, mtJSON, []byte(`{"spec":{"color":"Blue"}}`), 415},
		{"patch as YAML", http.MethodPatch, corpusItem, mtYAML, []byte("spec: {color: Blue}\n"), 415},
		{"patch without a Content-Type", http.MethodPatch, corpusItem, "", []byte(`{"spec":{"color":"Blue"}}`), 415},
		{"delete options as text", http.MethodDelete, corpusItem, "text/plain", []byte(`{}`), 415},
		{"delete options JSON with a YAML body", http.MethodDelete, corpusItem, mtJSON, []byte("propagationPolicy: Background\n"), 400},
	} {
		add("header/"+l.name, l.method, l.path, l.body, l.code, ct(l.contentType)...)
	}
	// A body that claims an encoding it does not have.
	for _, enc := range []string{"gzip", "deflate", "br", "x-bogus", "gzip, gzip"} {
		add("header/Content-Encoding "+enc+" on create", http.MethodPost, coll, encJSON(widgetDoc("enc")), 0, "Content-Type", mtJSON, "Content-Encoding", enc)
		add("header/Content-Encoding "+enc+" on merge patch", http.MethodPatch, corpusItem, []byte(`{"spec":{"color":"Blue"}}`), 0, "Content-Type", ctMergePatch, "Content-Encoding", enc)
	}
	add("header/Content-Encoding gzip on delete", http.MethodDelete, corpusItem, []byte(`{}`), 0, "Content-Type", mtJSON, "Content-Encoding", "gzip")
	// Accept headers nothing answers.
	for _, a := range []string{"text/html", "application/json;q=0", "*/*;q=0", ",,,", "application/json;as=Bogus;g=meta.k8s.io;v=v1",
		"application/json;as=Table;g=meta.k8s.io;v=v9", "application/json;as=PartialObjectMetadata;g=bogus;v=v1", "image/png, text/*",
		strings.Repeat("application/x-nope, ", 2000)} {
		add("header/Accept "+trimName(a)+" on get", http.MethodGet, corpusItem, nil, 406, "Accept", a)
		add("header/Accept "+trimName(a)+" on create", http.MethodPost, coll, encJSON(widgetDoc("acc")), 406, "Content-Type", mtJSON, "Accept", a)
	}
	add("header/Accept Table on create", http.MethodPost, coll, encJSON(widgetDoc("acc")), 406, "Content-Type", mtJSON, "Accept", tableAccept(mtJSON, "v1"))
	add("header/Accept YAML on watch", http.MethodGet, coll+"?watch=1", nil, 406, "Accept", mtYAML)
	add("header/Accept metadata list on get", http.MethodGet, corpusItem, nil, 406, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	// Errors in other formats must still be Status.
	for _, mt := range []string{mtYAML, mtCBOR, mtProtobuf} {
		add("header/Accept "+bareName(mt)+" on a broken body", http.MethodPost, coll, []byte(`{`), 400, "Content-Type", mtJSON, "Accept", mt)
		add("header/Accept "+bareName(mt)+" on a missing object", http.MethodGet, widgetPath(corpusNS, "missing"), nil, 404, "Accept", mt)
	}

	// # Deep nesting.
	const deep = 20000 // past encoding/json's limit (10000) and every other decoder's
	for _, d := range []struct {
		name, contentType string
		body              []byte
	}{
		{"JSON arrays", mtJSON, nest("[", "", "]", deep)},
		{"JSON objects", mtJSON, nest(`{"a":`, "1", "}", deep)},
		{"JSON in spec", mtJSON, []byte(`{"metadata":{"name":"d"},"spec":{"color":"Red","selector":` + string(nest(`{"a":`, `"b"`, "}", deep)) + `}}`)},
		{"JSON in an unknown field", mtJSON, []byte(`{"metadata":{"name":"d"},"spec":{"color":"Red"},"x":` + string(nest("[", "", "]", deep)) + `}`)},
		{"JSON unclosed", mtJSON, []byte(strings.Repeat(`{"a":[`, deep))},
		{"YAML flow", mtYAML, nest("[", "", "]", deep)},
		{"YAML flow maps", mtYAML, nest("{a: ", "b", "}", deep)},
		{"YAML block", mtYAML, yamlBlock(5000)},
		{"CBOR arrays", mtCBOR, append([]byte{0xd9, 0xd9, 0xf7}, nest("\x81", "\x01", "", deep)...)},
		{"CBOR maps", mtCBOR, append([]byte{0xd9, 0xd9, 0xf7}, nest("\xa1\x61a", "\x01", "", deep)...)},
		{"CBOR indefinite", mtCBOR, append([]byte{0xd9, 0xd9, 0xf7}, nest("\x9f", "", "\xff", deep)...)},
		{"CBOR tags", mtCBOR, append([]byte{0xd9, 0xd9, 0xf7}, nest("\xd8\x64", "\x01", "", deep)...)},
		{"protobuf messages", mtProtobuf, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, pbDeep(3000))},
	} {
		add("deep/create/"+d.name, http.MethodPost, coll, d.body, 0, ct(d.contentType)...)
	}
	add("deep/update/JSON arrays", http.MethodPut, corpusItem, nest("[", "", "]", deep), 0, ct(mtJSON)...)
	add("deep/status/YAML flow", http.MethodPut, corpusStatus, nest("[", "", "]", deep), 0, ct(mtYAML)...)
	add("deep/json-patch/value", http.MethodPatch, corpusItem, []byte(`[{"op":"add","path":"/spec/selector/x","value":`+string(nest("[", "", "]", deep))+`}]`), 0, ct(ctJSONPatch)...)
	add("deep/json-patch/path", http.MethodPatch, corpusItem, []byte(`[{"op":"add","path":"`+strings.Repeat("/a", deep)+`","value":1}]`), 0, ct(ctJSONPatch)...)
	add("deep/merge-patch", http.MethodPatch, corpusItem, nest(`{"spec":`, "1", "}", deep), 0, ct(ctMergePatch)...)
	add("deep/merge-patch in spec", http.MethodPatch, corpusItem, []byte(`{"spec":{"selector":`+string(nest(`{"a":`, "null", "}", deep))+`}}`), 0, ct(ctMergePatch)...)
	add("deep/strategic-merge-patch", http.MethodPatch, corpusItem, nest(`{"spec":`, "1", "}", deep), 0, ct(ctSMP)...)
	add("deep/apply YAML", http.MethodPatch, corpusItem+"?fieldManager=m", nest("[", "", "]", deep), 0, ct(ctApplyYAML)...)
	add("deep/apply CBOR", http.MethodPatch, corpusItem+"?fieldManager=m", append([]byte{0xd9, 0xd9, 0xf7}, nest("\x81", "\x01", "", deep)...), 0, ct(ctApplyCBOR)...)
	add("deep/delete options", http.MethodDelete, corpusItem, []byte(`{"preconditions":`+string(nest(`{"a":`, "1", "}", deep))+`}`), 0, ct(mtJSON)...)
	add("deep/delete options CBOR", http.MethodDelete, corpusItem, append([]byte{0xd9, 0xd9, 0xf7}, nest("\x81", "\x01", "", deep)...), 0, ct(mtCBOR)...)

	// # Bodies over the limit, and small bodies that claim to be huge.
	tooBig := func(prefix, fill, suffix string) []byte {
		return []byte(prefix + strings.Repeat(fill, (bodyLimit+1024)/len(fill)) + suffix)
	}
	bigJSON := tooBig(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","annotations":{"x":"`, "x", `"}},"spec":{"color":"Red"}}`)
	for _, h := range []struct {
		name, method, path, contentType string
		body                            []byte
	}{
		{"create JSON", http.MethodPost, coll, mtJSON, bigJSON},
		{"create YAML", http.MethodPost, coll, mtYAML, bigJSON},
		{"create CBOR", http.MethodPost, coll, mtCBOR, append([]byte{0xd9, 0xd9, 0xf7, 0x7a, 0x00, 0x40, 0x00, 0x00}, make([]byte, bodyLimit+1024)...)},
		{"create protobuf", http.MethodPost, coll, mtProtobuf, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, apiservertest.AppendProtoString(nil, 15, strings.Repeat("x", bodyLimit)))},
		{"create whitespace", http.MethodPost, coll, mtJSON, tooBig("", " ", "{}")},
		{"update", http.MethodPut, corpusItem, mtJSON, bigJSON},
		{"status", http.MethodPut, corpusStatus, mtJSON, bigJSON},
		{"class", http.MethodPost, widgetClasses, mtJSON, bigJSON},
		{"json-patch", http.MethodPatch, corpusItem, ctJSONPatch, tooBig("[", `{"op":"test","path":"/spec/color","value":"Red"},`, `{"op":"test","path":"/spec/color","value":"Red"}]`)},
		{"merge-patch", http.MethodPatch, corpusItem, ctMergePatch, bigJSON},
		{"strategic-merge-patch", http.MethodPatch, corpusItem, ctSMP, bigJSON},
		{"apply YAML", http.MethodPatch, corpusItem + "?fieldManager=m", ctApplyYAML, bigJSON},
		{"apply CBOR", http.MethodPatch, corpusItem + "?fieldManager=m", ctApplyCBOR, append([]byte{0xd9, 0xd9, 0xf7, 0x7a, 0x00, 0x40, 0x00, 0x00}, make([]byte, bodyLimit+1024)...)},
		{"delete options", http.MethodDelete, corpusItem, mtJSON, tooBig(`{"propagationPolicy":"Background","x":"`, "x", `"}`)},
		{"deletecollection options", http.MethodDelete, coll, mtJSON, tooBig(`{"propagationPolicy":"Background","x":"`, "x", `"}`)},
	} {
		code := 413
		if h.contentType == ctSMP {
			code = 0 // 415 until strategic merge patch is implemented
		}
		add("huge/"+h.name, h.method, h.path, h.body, code, ct(h.contentType)...)
	}
	manyAnnotations := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"many","annotations":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":"%0100d"`, i, i)
		}
		b.WriteString(`}},"spec":{"color":"Red"}}`)
		return []byte(b.String())
	}
	add("huge/annotations over 256 KiB", http.MethodPost, coll, manyAnnotations(3000), 422, ct(mtJSON)...)
	add("huge/JSON patch of many failing tests", http.MethodPatch, corpusItem, []byte("["+strings.Repeat(`{"op":"test","path":"/spec/color","value":"Red"},`, 1000)+`{"op":"test","path":"/spec/color","value":"Blue"}]`), 422, ct(ctJSONPatch)...)
	add("huge/YAML of many keys", http.MethodPost, coll, []byte("metadata: {name: k}\nspec: {color: purple}\n"+strings.Repeat("x: 1\n", 5000)), 0, ct(mtYAML)...)
	add("huge/protobuf of a length of 2^62", http.MethodPost, coll, append([]byte("k8s\x00\x12"), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40), 400, ct(mtProtobuf)...)
	add("huge/CBOR array of 2^32 items", http.MethodPost, coll, []byte{0xd9, 0xd9, 0xf7, 0x9a, 0xff, 0xff, 0xff, 0xff, 0x01}, 400, ct(mtCBOR)...)
	add("huge/CBOR byte string of 2^32 bytes", http.MethodPost, coll, []byte{0xd9, 0xd9, 0xf7, 0x5a, 0xff, 0xff, 0xff, 0xff, 0x01}, 400, ct(mtCBOR)...)

	// # Billion laughs.
	add("laughs/create", http.MethodPost, coll, []byte(billionLaughs), 0, ct(mtYAML)...)
	add("laughs/status", http.MethodPut, corpusStatus, []byte(billionLaughs), 0, ct(mtYAML)...)
	add("laughs/apply a new object", http.MethodPatch, widgetPath(corpusNS, "laughs")+"?fieldManager=m", []byte(strings.Replace(billionLaughs, "name: a", "name: laughs", 1)), 0, ct(ctApplyYAML)...)
	add("laughs/delete options", http.MethodDelete, corpusItem, []byte(billionLaughs), 0, ct(mtYAML)...)
	add("laughs/merge keys", http.MethodPost, coll, []byte("a: &a {x: 1}\nb: &b {<<: [*a, *a, *a, *a]}\nc: &c {<<: [*b, *b, *b, *b]}\nmetadata: {<<: *c, name: m}\nspec: {color: purple}\n"), 0, ct(mtYAML)...)

	// # Duplicate keys, refused by Strict.
	dupJSON := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"N","name":"N"},"spec":{"color":"Red","color":"Blue"}}`
	dupYAML := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: N}\nspec:\n  color: Red\n  color: Blue\n"
	dupCBOR := func(name string) []byte {
		return apiservertest.CBORBody(apiservertest.CBORPairs{"apiVersion", "example.com/v1", "kind", "Widget", "metadata", apiservertest.CBORPairs{"name", name}, "spec", apiservertest.CBORPairs{"color", "Red", "color", "Blue"}}, apiservertest.CBOROptions{})
	}
	for _, tg := range targets[:3] {
		name := tg.doc["metadata"].(doc)["name"].(string)
		add("duplicate/"+tg.name+"/json", tg.method, tg.path+"?fieldValidation=Strict", []byte(strings.ReplaceAll(dupJSON, `"N"`, `"`+name+`"`)), 400, ct(mtJSON)...)
		add("duplicate/"+tg.name+"/yaml", tg.method, tg.path+"?fieldValidation=Strict", []byte(strings.ReplaceAll(dupYAML, "N", name)), 400, ct(mtYAML)...)
		add("duplicate/"+tg.name+"/cbor", tg.method, tg.path+"?fieldValidation=Strict", dupCBOR(name), 400, ct(mtCBOR)...)
		add("duplicate/"+tg.name+"/top-level metadata", tg.method, tg.path+"?fieldValidation=Strict", []byte(`{"metadata":{"name":"`+name+`"},"metadata":{"name":"`+name+`"},"spec":{"color":"Red"}}`), 400, ct(mtJSON)...)
	}
	add("duplicate/apply/yaml", http.MethodPatch, corpusItem+"?fieldManager=m&fieldValidation=Strict", []byte(strings.ReplaceAll(dupYAML, "N", "a")), 400, ct(ctApplyYAML)...)
	add("duplicate/apply/cbor", http.MethodPatch, corpusItem+"?fieldManager=m&fieldValidation=Strict", dupCBOR("a"), 400, ct(ctApplyCBOR)...)
	add("duplicate/merge-patch/strict", http.MethodPatch, corpusItem+"?fieldValidation=Strict", []byte(`{"spec":{"color":"Blue","color":"Green"}}`), 400, ct(ctMergePatch)...)
	add("duplicate/merge-patch/last wins invalid", http.MethodPatch, corpusItem, []byte(`{"spec":{"color":"Blue","color":"purple"}}`), 422, ct(ctMergePatch)...)
	add("duplicate/json-patch op", http.MethodPatch, corpusItem, []byte(`[{"op":"add","op":"remove","path":"/spec/color"}]`), 0, ct(ctJSONPatch)...)
	add("duplicate/delete options", http.MethodDelete, corpusItem, []byte(`{"propagationPolicy":"Background","propagationPolicy":"Sideways"}`), 0, ct(mtJSON)...)

	// # Patches that cannot apply.
	for _, p := range []struct {
		name string
		body string
		code int
	}{
		{"not an array", `{"op":"replace","path":"/spec/color","value":"Blue"}`, 0},
		{"unknown op", `[{"op":"frobnicate","path":"/spec/color","value":"Blue"}]`, 0},
		{"no op", `[{"path":"/spec/color","value":"Blue"}]`, 0},
		{"no path", `[{"op":"replace","value":"Blue"}]`, 0},
		{"path not a pointer", `[{"op":"replace","path":"spec/color","value":"Blue"}]`, 0},
		{"bad escape", `[{"op":"replace","path":"/spec/~2","value":"Blue"}]`, 0},
		{"index past the end", `[{"op":"add","path":"/spec/ports/99","value":{"name":"x","port":1}}]`, 0},
		{"index 2^64", `[{"op":"add","path":"/spec/ports/18446744073709551616","value":{"name":"x","port":1}}]`, 0},
		{"negative index", `[{"op":"add","path":"/spec/ports/-2","value":{"name":"x","port":1}}]`, 0},
		{"move from nowhere", `[{"op":"move","from":"/spec/nothing","path":"/spec/color"}]`, 0},
		{"move into itself", `[{"op":"move","from":"/spec","path":"/spec/selector/x"}]`, 0},
		{"copy from nowhere", `[{"op":"copy","from":"/nothing","path":"/spec/color"}]`, 0},
		{"remove missing", `[{"op":"remove","path":"/spec/nothing/deeper"}]`, 0},
		{"test fails", `[{"op":"test","path":"/spec/color","value":"Blue"},{"op":"replace","path":"/spec/color","value":"Blue"}]`, 422},
		{"wrong type", `[{"op":"replace","path":"/spec/replicas","value":"three"}]`, 400},
		{"replicas 1e400", `[{"op":"replace","path":"/spec/replicas","value":1e400}]`, 0},
		{"rename", `[{"op":"replace","path":"/metadata/name","value":"z"}]`, 400},
		{"other namespace", `[{"op":"replace","path":"/metadata/namespace","value":"other"}]`, 400},
		{"other kind", `[{"op":"replace","path":"/kind","value":"WidgetClass"}]`, 400},
		{"remove metadata", `[{"op":"remove","path":"/metadata"}]`, 0},
		{"replace the whole document", `[{"op":"replace","path":"","value":[]}]`, 0},
		{"resourceVersion abc", `[{"op":"replace","path":"/metadata/resourceVersion","value":"abc"}]`, 400},
		{"stale resourceVersion", `[{"op":"replace","path":"/metadata/resourceVersion","value":"1"}]`, 409},
		{"invalid color", `[{"op":"replace","path":"/spec/color","value":"purple"}]`, 422},
		{"empty object", `{}`, 0},
		{"array of strings", `["a"]`, 0},
		{"truncated", `[{"op":"replace"`, 400},
	} {
		add("json-patch/"+p.name, http.MethodPatch, corpusItem, []byte(p.body), p.code, ct(ctJSONPatch)...)
	}
	add("json-patch/status/wrong type", http.MethodPatch, corpusStatus, []byte(`[{"op":"add","path":"/status/replicas","value":"x"}]`), 400, ct(ctJSONPatch)...)
	add("json-patch/strict dash on a map", http.MethodPatch, corpusItem+"?fieldValidation=Strict", []byte(`[{"op":"add","path":"/spec/-","value":1}]`), 400, ct(ctJSONPatch)...)
	add("json-patch/class/wrong type", http.MethodPatch, corpusClass, []byte(`[{"op":"replace","path":"/spec/maxReplicas","value":[]}]`), 400, ct(ctJSONPatch)...)
	add("json-patch/missing object", http.MethodPatch, widgetPath(corpusNS, "missing"), []byte(`[]`), 404, ct(ctJSONPatch)...)
	mergeBad := []struct {
		name string
		body string
		code int
	}{
		{"array", `[]`, 0},
		{"string", `"x"`, 0},
		{"number", `5`, 0},
		{"truncated", `{"spec":`, 400},
		{"wrong type", `{"spec":{"replicas":"three"}}`, 400},
		{"replicas 1e400", `{"spec":{"replicas":1e400}}`, 400},
		{"replicas 2^64", `{"spec":{"replicas":18446744073709551616}}`, 400},
		{"spec a string", `{"spec":"x"}`, 400},
		{"labels a list", `{"metadata":{"labels":["a"]}}`, 400},
		{"rename", `{"metadata":{"name":"z"}}`, 400},
		{"other namespace", `{"metadata":{"namespace":"other"}}`, 400},
		{"other apiVersion", `{"apiVersion":"example.com/v2"}`, 400},
		{"other kind", `{"kind":"WidgetClass"}`, 400},
		{"resourceVersion abc", `{"metadata":{"resourceVersion":"abc"}}`, 400},
		{"stale resourceVersion", `{"metadata":{"resourceVersion":"1"}}`, 409},
		{"invalid color", `{"spec":{"color":"purple"}}`, 422},
		{"remove color", `{"spec":{"color":null}}`, 422},
		{"invalid label", `{"metadata":{"labels":{"bad key!":"v"}}}`, 422},
		{"strict unknown field", `{"spec":{"bogus":1}}`, 0},
	}
	for _, p := range mergeBad {
		path := corpusItem
		if p.name == "strict unknown field" {
			path += "?fieldValidation=Strict"
		}
		add("merge-patch/"+p.name, http.MethodPatch, path, []byte(p.body), p.code, ct(ctMergePatch)...)
		// Strategic merge patch: any 4xx until it is implemented.
		add("strategic-merge-patch/"+p.name, http.MethodPatch, path, []byte(p.body), 0, ct(ctSMP)...)
	}
	for _, p := range []struct{ name, body string }{
		{"patch directive bogus", `{"$patch":"bogus"}`},
		{"retainKeys not a list", `{"spec":{"$retainKeys":"x","color":"purple"}}`},
		{"setElementOrder not a list", `{"spec":{"$setElementOrder/ports":"x","color":"purple"}}`},
		{"port without merge key", `{"spec":{"color":"purple","ports":[{"$patch":"delete"}]}}`},
		{"deleteFromPrimitiveList not a list", `{"spec":{"$deleteFromPrimitiveList/x":5,"color":"purple"}}`},
	} {
		add("strategic-merge-patch/"+p.name, http.MethodPatch, corpusItem, []byte(p.body), 0, ct(ctSMP)...)
	}
	add("merge-patch/status/wrong type", http.MethodPatch, corpusStatus, []byte(`{"status":{"replicas":"x"}}`), 400, ct(ctMergePatch)...)
	add("merge-patch/status/invalid", http.MethodPatch, corpusStatus, []byte(`{"status":{"replicas":-1}}`), 422, ct(ctMergePatch)...)
	add("merge-patch/class/invalid", http.MethodPatch, corpusClass, []byte(`{"spec":{"maxReplicas":-1}}`), 422, ct(ctMergePatch)...)
	// Conditions kube-apiserver would refuse.
	for _, bad := range []struct {
		name string
		cond any
	}{
		{"no type", doc{"status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "R"}},
		{"status maybe", doc{"type": "Ready", "status": "Maybe", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "R"}},
		{"no time", doc{"type": "Ready", "status": "True", "reason": "R"}},
		{"reason pattern", doc{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "not a reason"}},
		{"message too long", doc{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "R", "message": strings.Repeat("m", 32769)}},
		{"negative generation", doc{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "R", "observedGeneration": -1}},
		{"type of 300 bytes", doc{"type": strings.Repeat("t", 300), "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "R"}},
	} {
		add("conditions/status/"+bad.name, http.MethodPut, corpusStatus, encJSON(with(widgetDoc("a"), doc{"conditions": []any{bad.cond}}, "status")), 422, ct(mtJSON)...)
		add("conditions/merge-patch/"+bad.name, http.MethodPatch, corpusStatus, encJSON(doc{"status": doc{"conditions": []any{bad.cond}}}), 422, ct(ctMergePatch)...)
	}
	// An unknown field and a fatal type error: the fatal error, whatever fieldValidation says.
	for _, fv := range []string{"", "?fieldValidation=Strict", "?fieldValidation=Warn", "?fieldValidation=Ignore"} {
		bad := encJSON(with(with(widgetDoc("a"), "big", "spec", "size"), 1, "spec", "bogus"))
		add("fatal and unknown/update"+fv, http.MethodPut, corpusItem+fv, bad, 400, ct(mtJSON)...)
		add("fatal and unknown/create"+fv, http.MethodPost, widgetsIn(corpusNS)+fv, encJSON(with(with(widgetDoc("new"), "big", "spec", "size"), 1, "bogus")), 400, ct(mtJSON)...)
		add("fatal and unknown/merge-patch"+fv, http.MethodPatch, corpusItem+fv, []byte(`{"spec":{"size":"big","bogus":1}}`), 400, ct(ctMergePatch)...)
	}
	add("merge-patch/missing object", http.MethodPatch, widgetPath(corpusNS, "missing"), []byte(`{}`), 404, ct(ctMergePatch)...)
	for _, p := range []struct {
		name, query string
		body        []byte
		code        int
		contentType string
	}{
		{"no fieldManager", "", encJSON(widgetDoc("a")), 422, ctApplyYAML},
		{"no fieldManager CBOR", "", encCBOR(widgetDoc("a")), 422, ctApplyCBOR},
		{"broken YAML", "?fieldManager=m", []byte("spec: [\n"), 400, ctApplyYAML},
		{"broken CBOR", "?fieldManager=m", []byte{0xd9, 0xd9, 0xf7, 0xa1}, 400, ctApplyCBOR},
		{"rename", "?fieldManager=m&force=true", encJSON(widgetDoc("z")), 400, ctApplyYAML},
		{"other kind", "?fieldManager=m", encJSON(with(widgetDoc("a"), "WidgetClass", "kind")), 400, ctApplyYAML},
		{"other namespace", "?fieldManager=m", encJSON(with(widgetDoc("a"), "other", "metadata", "namespace")), 400, ctApplyYAML},
		{"wrong type YAML", "?fieldManager=m", encYAML(with(widgetDoc("a"), "three", "spec", "replicas")), 400, ctApplyYAML},
		{"wrong type CBOR", "?fieldManager=m", encCBOR(with(widgetDoc("a"), "three", "spec", "replicas")), 400, ctApplyCBOR},
		{"invalid color", "?fieldManager=m&force=true", encYAML(with(widgetDoc("a"), "purple", "spec", "color")), 422, ctApplyYAML},
		{"conflict", "?fieldManager=m", encYAML(with(widgetDoc("a"), "Green", "spec", "color")), 409, ctApplyYAML},
		{"a list", "?fieldManager=m", []byte("- a\n"), 400, ctApplyYAML},
		{"null", "?fieldManager=m", []byte("null\n"), 400, ctApplyYAML},
		{"empty", "?fieldManager=m", nil, 400, ctApplyYAML},
		{"invalid new object", "?fieldManager=m&force=true", encYAML(with(widgetDoc("a"), "purple", "spec", "color")), 422, ctApplyYAML},
		{"strict unknown field", "?fieldManager=m&fieldValidation=Strict", encYAML(with(widgetDoc("a"), 1, "spec", "bogus")), 400, ctApplyYAML},
		{"dryRun bogus", "?fieldManager=m&dryRun=x", encYAML(with(widgetDoc("a"), "Blue", "spec", "color")), 400, ctApplyYAML},
	} {
		add("apply/"+p.name, http.MethodPatch, corpusItem+p.query, p.body, p.code, ct(p.contentType)...)
	}
	add("apply/new object with an invalid color", http.MethodPatch, widgetPath(corpusNS, "fresh")+"?fieldManager=m", encYAML(with(widgetDoc("fresh"), "purple", "spec", "color")), 422, ct(ctApplyYAML)...)
	add("apply/new object named otherwise", http.MethodPatch, widgetPath(corpusNS, "fresh")+"?fieldManager=m", encYAML(widgetDoc("other")), 400, ct(ctApplyYAML)...)
	add("apply/status wrong type", http.MethodPatch, corpusStatus+"?fieldManager=m", encYAML(with(widgetDoc("a"), "x", "status", "replicas")), 400, ct(ctApplyYAML)...)

	// # DeleteOptions that must not delete.
	for _, d := range []struct {
		name, body string
		code       int
	}{
		{"truncated", `{"propagationPolicy":`, 400},
		{"array", `[]`, 400},
		{"string", `"Background"`, 400},
		{"gracePeriodSeconds string", `{"gracePeriodSeconds":"x"}`, 400},
		{"gracePeriodSeconds 1e400", `{"gracePeriodSeconds":1e400}`, 400},
		{"gracePeriodSeconds 2^64", `{"gracePeriodSeconds":18446744073709551616}`, 400},
		{"propagationPolicy number", `{"propagationPolicy":5}`, 400},
		{"propagationPolicy bogus", `{"propagationPolicy":"Sideways"}`, 422},
		{"orphanDependents string", `{"orphanDependents":"yes"}`, 400},
		{"dryRun string", `{"dryRun":"All"}`, 400},
		{"dryRun bogus", `{"dryRun":["Bogus"]}`, 400},
		{"preconditions string", `{"preconditions":"x"}`, 400},
		{"preconditions uid number", `{"preconditions":{"uid":5}}`, 400},
		{"preconditions uid other", `{"preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`, 409},
		{"preconditions resourceVersion stale", `{"preconditions":{"resourceVersion":"1"}}`, 409},
		{"preconditions resourceVersion abc", `{"preconditions":{"resourceVersion":"abc"}}`, 0},
		{"invalid UTF-8", "{\"propagationPolicy\":\"\xff\"}", 0},
		{"unsafe deletion string", `{"ignoreStoreReadErrorWithClusterBreakingPotential":"yes"}`, 400},
		{"unsafe deletion of a readable object", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`, 409},
		{"unsafe deletion with preconditions", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"preconditions":{"uid":"x"}}`, 422},
		{"unsafe deletion with orphanDependents", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"orphanDependents":true,"gracePeriodSeconds":0}`, 422},
		{"NUL", "\x00", 400},
	} {
		add("delete/"+d.name, http.MethodDelete, corpusItem, []byte(d.body), d.code, ct(mtJSON)...)
		add("delete class/"+d.name, http.MethodDelete, corpusClass, []byte(d.body), d.code, ct(mtJSON)...)
		if d.code != 409 {
			add("deletecollection/"+d.name, http.MethodDelete, coll, []byte(d.body), d.code, ct(mtJSON)...)
		}
	}
	for _, f := range textFormats[1:] {
		add("delete/"+f.name+" propagationPolicy bogus", http.MethodDelete, corpusItem, f.encode(doc{"propagationPolicy": "Sideways"}), 422, ct(f.contentType)...)
		add("delete/"+f.name+" gracePeriodSeconds string", http.MethodDelete, corpusItem, f.encode(doc{"gracePeriodSeconds": "x"}), 400, ct(f.contentType)...)
	}
	add("delete/protobuf garbage", http.MethodDelete, corpusItem, []byte("k8s\x00\xff\xff"), 400, ct(mtProtobuf)...)
	add("delete/protobuf without magic", http.MethodDelete, corpusItem, []byte{0x0a, 0x01}, 400, ct(mtProtobuf)...)
	add("delete/missing object with a broken body", http.MethodDelete, widgetPath(corpusNS, "missing"), []byte(`{`), 400, ct(mtJSON)...)
	add("delete/status", http.MethodDelete, corpusStatus, nil, 405)

	// # Times no RFC 3339 string can hold once in UTC: stored, they could
	// not be read back.
	for _, tm := range []string{"9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"} {
		cond := with(widgetDoc("a"), []any{doc{"type": "Ready", "status": "True", "lastTransitionTime": tm, "reason": "R", "message": "m"}}, "status", "conditions")
		add("time/status "+tm, http.MethodPut, corpusStatus, encJSON(cond), 400, ct(mtJSON)...)
		add("time/status YAML "+tm, http.MethodPut, corpusStatus, encYAML(cond), 400, ct(mtYAML)...)
		add("time/status merge-patch "+tm, http.MethodPatch, corpusStatus, encJSON(doc{"status": cond["status"]}), 400, ct(ctMergePatch)...)
	}
	for _, sec := range []uint64{253402300800, 1 << 62, 1 << 63} {
		cond := apiservertest.AppendProtoMessage(apiservertest.AppendProtoString(apiservertest.AppendProtoString(nil, 1, "Ready"), 2, "True"), 4, apiservertest.AppendProtoVarint(nil, 1, sec))
		raw := apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(apiservertest.AppendProtoMessage(nil, 1, apiservertest.AppendProtoString(nil, 1, "a")), 2, apiservertest.AppendProtoString(nil, 1, "Red")), 3, apiservertest.AppendProtoMessage(nil, 4, cond))
		add(fmt.Sprintf("time/status protobuf %d", sec), http.MethodPut, corpusStatus, apiservertest.ProtoWrap(kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, raw), 400, ct(mtProtobuf)...)
	}

	// # Requests as written on the wire, with lying framing.
	body := string(encJSON(widgetDoc("wire")))
	rawReq := func(headers, body string) []byte {
		return []byte("POST " + coll + " HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\n" + headers + "\r\n" + body)
	}
	for _, r := range []struct {
		name string
		raw  []byte
		code int
	}{
		{"Content-Length longer than the body", rawReq(fmt.Sprintf("Content-Length: %d\r\n", len(body)+100), body), 400},
		{"Content-Length shorter than the body", rawReq("Content-Length: 10\r\n", body), 400},
		{"Content-Length zero with a body", rawReq("Content-Length: 0\r\n", body), 400},
		{"chunked with a bad chunk size", rawReq("Transfer-Encoding: chunked\r\n", "zz\r\n"+body+"\r\n0\r\n\r\n"), 400},
		{"chunked cut short", rawReq("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s", len(body)+50, body)), 400},
		{"chunked without the last chunk", rawReq("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", len(body), body)), 400},
		{"chunked over the limit", rawReq("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", bodyLimit+10, strings.Repeat(" ", bodyLimit+10))), 413},
	} {
		cases = append(cases, corpusCase{name: "wire/" + r.name, method: http.MethodPost, path: coll, raw: r.raw, code: r.code})
	}

	// # The deprecated v1beta1, converted to v1 on the way in: what a client
	// puts in the annotation that keeps v1's other ports is input too.
	beta := func(port any, annotation any) []byte {
		meta := doc{"name": "new"}
		if annotation != nil {
			meta["annotations"] = doc{widgetapi.PortsAnnotation: annotation}
		}
		return encJSON(doc{"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": meta, "spec": doc{"color": "Red", "port": port}})
	}
	betaColl := "/apis/example.com/v1beta1/namespaces/" + corpusNS + "/widgets"
	for _, c := range []struct {
		name string
		body []byte
		code int
	}{
		{"annotation not JSON", beta(80, "{"), 400},
		{"annotation of another shape", beta(80, `{"name":"x"}`), 400},
		{"annotation with wrong types", beta(80, `[{"name":"x","port":"80"}]`), 400},
		{"annotation with a port out of range", beta(80, `[{"name":"x","port":70000,"protocol":"TCP"}]`), 422},
		{"annotation duplicating the port", beta(80, `[{"name":"default","port":81,"protocol":"UDP"}]`), 422},
		{"port a string", beta("80", nil), 400},
		{"port past int32", beta(json.Number("4294967296"), nil), 400},
		{"port out of range", beta(0, nil), 422},
		{"v1 body", encJSON(widgetDoc("new")), 400},
	} {
		add("v1beta1/"+c.name, http.MethodPost, betaColl, c.body, c.code)
	}
	add("v1beta1/update of another version's body", http.MethodPut, betaColl+"/a", encJSON(widgetDoc("a")), 400)
	add("v1beta1/no such version", http.MethodGet, "/apis/example.com/v1alpha1/namespaces/"+corpusNS+"/widgets", nil, 404)
	cases = append(cases, crdCorpus()...)

	// # WebSocket handshakes a watch refuses (websocket.go), with
	// kube-apiserver's codes.
	for _, c := range []struct {
		name, header, value string
		code                int
	}{
		{"no Origin", "Origin", "", 403},
		{"Origin null", "Origin", "null", 403},
		{"Origin not a URL", "Origin", "::", 403},
		{"version 8", "Sec-WebSocket-Version", "8", 400},
		{"no version", "Sec-WebSocket-Version", "", 400},
		{"key too short", "Sec-WebSocket-Key", "AAAA", 400},
		{"key not base64", "Sec-WebSocket-Key", "%%%%", 400},
		{"two subprotocols", "Sec-WebSocket-Protocol", "binary.k8s.io,base64.binary.k8s.io", 400},
	} {
		hs := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
			"Sec-WebSocket-Version": "13", "Origin": "http://console.test"}
		hs[c.header] = c.value
		var header []string
		for k, v := range hs {
			if v != "" {
				header = append(header, k, v)
			}
		}
		add("websocket/"+c.name, http.MethodGet, widgetsIn(corpusNS)+"?watch=true", nil, c.code, header...)
	}
	// # kubectl's question for ApplySet parent types (applyset.go).
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	add("applyset/bad label selector", http.MethodGet, crds+"?labelSelector=a+in+(b", nil, 400)
	add("applyset/a CRD by name", http.MethodGet, crds+"/widgets.example.com", nil, 404)
	// The corpus server serves CRDs: the parent types join its list.
	parents := crds + "?labelSelector=applyset.kubernetes.io%2Fis-parent-type"
	add("applyset/parent types at a bad resourceVersion", http.MethodGet, parents+"&resourceVersion=abc", nil, 400)
	add("applyset/parent types with a bad limit", http.MethodGet, parents+"&limit=x", nil, 400)
	add("applyset/parent types in protobuf", http.MethodGet, parents, nil, 406, "Accept", mtProtobuf)
	add("applyset/parent types and a bad selector", http.MethodGet, parents+",a+in+(b", nil, 400)
	cases = append(cases, actionsCorpus()...)
	cases = append(cases, corsCorpus()...)
	return append(cases, builtinCorpus()...)
}

func bareName(mt string) string {
	switch mt {
	case mtJSON:
		return "json"
	case mtYAML:
		return "yaml"
	case mtCBOR:
		return "cbor"
	case mtProtobuf:
		return "protobuf"
	}
	return mt
}

// trimName shortens a value for a test name.
func trimName(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// yamlBlock is block-style YAML nested n maps deep.
func yamlBlock(n int) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("a:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "b\n")
	return []byte(b.String())
}

// pbDeep is a Widget whose metadata's ownerReferences' ... nest n messages
// deep through unknown field 15.
func pbDeep(n int) []byte {
	var m []byte
	for range n {
		m = apiservertest.AppendProtoMessage(nil, 15, m)
	}
	return apiservertest.AppendProtoMessage(nil, 1, m)
}

// storeSnapshot is every key, value and revision in the store.
func storeSnapshot(t testing.TB, store storage.Interface) ([]storage.KeyValue, int64) {
	t.Helper()
	ctx := context.Background()
	rev, err := store.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.List(ctx, "/", storage.ListOptions{Revision: rev})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(res.Items), rev
}

// corpusTimeout bounds each request: an answer that takes longer is a hang.
const corpusTimeout = 20 * time.Second

// sendCase sends one case and reads the whole response.
func sendCase(ctx context.Context, hc *http.Client, base string, tc corpusCase) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, corpusTimeout)
	defer cancel()
	if tc.raw != nil {
		return sendRaw(ctx, base, tc.raw)
	}
	req, err := http.NewRequestWithContext(ctx, tc.method, base+tc.path, bytes.NewReader(tc.body))
	if err != nil {
		return nil, err
	}
	if tc.body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for i := 0; i+1 < len(tc.header); i += 2 {
		req.Header.Set(tc.header[i], tc.header[i+1])
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", mtJSON)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 { // a success may be a watch that never ends
		return &response{Code: resp.StatusCode, Header: resp.Header}, nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return &response{Code: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// sendRaw writes a request as it is, half-closes the connection, and reads
// the first response.
func sendRaw(ctx context.Context, base string, raw []byte) (*response, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(raw); err != nil {
		return nil, err
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return &response{Code: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// statusProblem says what is wrong with an error response, or "" when it
// is a 4xx Status whose code matches (any 4xx when want is 0).
func statusProblem(r *response, want int) string {
	if r.Code < 400 || r.Code >= 500 || want != 0 && r.Code != want {
		w := "a 4xx"
		if want != 0 {
			w = fmt.Sprint(want)
		}
		return fmt.Sprintf("HTTP %d, want %s; body: %.300q", r.Code, w, r.Body)
	}
	var st kapi.Status
	err := apiservertest.Collect(func(t testing.TB) {
		mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
		apiservertest.DecodeJSON(t, formats.JSON(t, strings.TrimSpace(mt), r.Body), &st)
	})
	if err != nil {
		return fmt.Sprintf("HTTP %d with a body that is not a Status (%v): %.300q", r.Code, err, r.Body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != kapi.StatusFailure || int(st.Code) != r.Code || st.Reason == "" {
		return fmt.Sprintf("HTTP %d with Status {kind %q apiVersion %q status %q code %d reason %q}", r.Code, st.Kind, st.APIVersion, st.Status, st.Code, st.Reason)
	}
	return ""
}

// TestBadInputCorpus sends every case of the corpus concurrently.
func TestBadInputCorpus(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv := apiservertest.New(t, corpusRegister, append(corpusBuiltins, apiserver.WithStorage(store), apiserver.WithMaxRequestBodyBytes(bodyLimit))...)
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	corpusSeed(c)
	corpusSeedCRDs(c)
	beforeItems, beforeRev := storeSnapshot(t, store)
	beforeList := c.get(allWidgets).mustCode(t, http.StatusOK).Body

	cases := badInputCorpus()
	if len(cases) < 300 {
		t.Errorf("the corpus has %d cases, want at least 300", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("two cases are named %q", tc.name)
		}
		seen[tc.name] = true
	}
	hc := srv.Client()
	t.Run("case", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r, err := sendCase(t.Context(), hc, srv.URL, tc)
				if err != nil {
					t.Fatalf("%s %.100s: no answer: %v", tc.method, tc.path, err)
				}
				if p := statusProblem(r, tc.code); p != "" {
					t.Errorf("%s %.100s: %s", tc.method, tc.path, p)
				}
			})
		}
	})

	afterItems, afterRev := storeSnapshot(t, store)
	if afterRev != beforeRev || !reflect.DeepEqual(beforeItems, afterItems) {
		t.Errorf("the corpus changed the store: revision %d, then %d", beforeRev, afterRev)
		for _, kv := range afterItems {
			t.Logf("after: %s@%d %s", kv.Key, kv.ModRevision, kv.Value)
		}
	}
	if afterList := c.get(allWidgets).mustCode(t, http.StatusOK).Body; !bytes.Equal(beforeList, afterList) {
		t.Errorf("the widget list changed:\nbefore %s\nafter  %s", beforeList, afterList)
	}
}
