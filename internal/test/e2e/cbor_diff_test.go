package e2e

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8scbor "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// The CBOR differential test: kapi's CBOR codec against the serializer
// client-go uses (apimachinery pkg/runtime/serializer/cbor, on
// fxamacker/cbor/v2 with Kubernetes' options). For an object (a JSON
// document as kapi stores it):
//
//   - the CBOR kapi writes, Kubernetes' serializer reads as the object;
//   - the CBOR Kubernetes' serializer writes, kapi reads as the object;
//
// and for arbitrary bytes: what Kubernetes' serializer reads as an object,
// kapi reads as the same object, but for the documented differences (codec
// cbor.go): tags other than 55799 and 21-23, which kapi refuses.

// k8sCBOR is the serializer client-go decodes and encodes CBOR with.
var k8sCBOR = k8scbor.NewSerializer(runtime.NewScheme(), runtime.NewScheme())

var kapiCBOR = codec.ByMediaType(codec.MediaTypeCBOR)

// cborDiffSeeds are objects with every kind of JSON value a Kubernetes
// object holds.
var cborDiffSeeds = []string{
	`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"default","labels":{"app":"shop"},"creationTimestamp":"2026-01-02T03:04:05Z","generation":2},"spec":{"color":"Red","size":3,"ratio":0.25,"on":true,"off":false,"none":null,"tags":["a","b"],"data":"aGVsbG8="}}`,
	`{"apiVersion":"v1","kind":"Thing","n":[-1,0,1,23,24,255,256,65535,65536,4294967296,-9223372036854775808,9223372036854775807],"f":[1.5,-0.5,1e-7,3.4028234663852886e38,1.7976931348623157e308,5e-324,0.1]}`,
	`{"apiVersion":"v1","kind":"Thing","s":"\u003chtml\u003e \u0026 \"quotes\" \\ \n\t\u0000 \u2028 é 日本 😀","":"empty key","nested":{"a":{"b":{"c":[[],{},[{}]]}}}}`,
	`{"apiVersion":"v1","kind":"Thing","big":18446744073709551615,"neg":-18446744073709551616,"float":1.0,"exp":1e21}`,
	`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"long","annotations":{"x":"` + strings.Repeat("y", 300) + `"}},"items":[` + strings.Repeat(`1,`, 40) + `2]}`,
}

// FuzzCBORMatchesKubernetes holds kapi's CBOR to the differential test's
// rule, on a JSON object and on the same bytes read as CBOR.
func FuzzCBORMatchesKubernetes(f *testing.F) {
	for _, s := range cborDiffSeeds {
		f.Add([]byte(s))
		body, err := kapiCBOR.AppendBody(nil, kapi.TypeMeta{}, mustTranscode(f, []byte(s)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareCBORObject(t, data)
		compareCBORBytes(t, data)
	})
}

// TestCBORMatchesKubernetes runs the seeds in every test run.
func TestCBORMatchesKubernetes(t *testing.T) {
	for _, s := range cborDiffSeeds {
		compareCBORObject(t, []byte(s))
		body, err := kapiCBOR.AppendBody(nil, kapi.TypeMeta{}, mustTranscode(t, []byte(s)))
		if err != nil {
			t.Fatal(err)
		}
		compareCBORBytes(t, body)
	}
}

func mustTranscode(t testing.TB, doc []byte) []byte {
	t.Helper()
	out, err := kapiCBOR.Transcode(doc)
	if err != nil {
		t.Fatalf("transcode %s: %v", doc, err)
	}
	return out
}

// compareCBORObject: data, if a JSON object, both ways.
func compareCBORObject(t *testing.T, data []byte) {
	var obj map[string]any
	if k8sjson.Unmarshal(data, &obj) != nil || obj == nil {
		return
	}
	// Kubernetes' serializer reads an object only with its type, and an
	// apiVersion it can parse into a group and a non-empty version.
	if v, ok := obj["apiVersion"].(string); !ok || !validAPIVersion(v) {
		obj["apiVersion"] = "example.com/v1"
	}
	if k, ok := obj["kind"].(string); !ok || k == "" {
		obj["kind"] = "Widget"
	}
	// The JSON kapi would store, and the object it is to both sides (the
	// ints and floats of sigs.k8s.io/json, as Kubernetes reads JSON).
	stored, err := json.Marshal(obj)
	if err != nil {
		return // NaN or infinity cannot be stored
	}
	want := map[string]any{}
	if err := k8sjson.Unmarshal(stored, &want); err != nil {
		t.Fatalf("reading back %s: %v", stored, err)
	}
	if hasUnsignedBeyondInt64(want) {
		// kapi writes an integral float64 of 2^63 or more (JSON "1e19"
		// is such) as a CBOR unsigned integer; Kubernetes refuses one
		// beyond int64 into interface{} (IntDecConvertSignedOrFail). A
		// documented difference (codec cbor.go).
		return
	}

	// kapi writes, Kubernetes reads.
	element, err := kapiCBOR.Transcode(stored)
	if err != nil {
		t.Fatalf("kapi cannot write %s: %v", stored, err)
	}
	body, err := kapiCBOR.AppendBody(nil, kapi.TypeMeta{}, element)
	if err != nil {
		t.Fatal(err)
	}
	var u unstructured.Unstructured
	if _, _, err := k8sCBOR.Decode(body, nil, &u); err != nil {
		t.Fatalf("Kubernetes cannot read kapi's CBOR of %s: %v\n% x", stored, err, body)
	}
	if !reflect.DeepEqual(u.Object, want) {
		t.Fatalf("Kubernetes reads kapi's CBOR of %s as\n%#v\nwant\n%#v", stored, u.Object, want)
	}

	// Kubernetes writes, kapi reads.
	var buf bytes.Buffer
	if err := k8sCBOR.Encode(&unstructured.Unstructured{Object: want}, &buf); err != nil {
		t.Fatalf("Kubernetes cannot write %s: %v", stored, err)
	}
	got, ok, err := kapiCBOR.ToJSON(buf.Bytes())
	if err != nil || !ok {
		t.Fatalf("kapi cannot read Kubernetes' CBOR of %s: %v\n% x", stored, err, buf.Bytes())
	}
	var back map[string]any
	if err := k8sjson.Unmarshal(got, &back); err != nil {
		t.Fatalf("kapi's JSON %s: %v", got, err)
	}
	if !sameObject(back, want) {
		t.Fatalf("kapi reads Kubernetes' CBOR of %s as\n%s", stored, got)
	}
}

// compareCBORBytes: what Kubernetes reads from data as an object, kapi reads
// as the same object.
func compareCBORBytes(t *testing.T, data []byte) {
	var u unstructured.Unstructured
	if _, _, err := k8sCBOR.Decode(data, nil, &u); err != nil {
		return
	}
	// A byte string of invalid UTF-8 Kubernetes keeps as a Go string of
	// those bytes; kapi reads bodies into JSON, with U+FFFD for each such
	// byte, as encoding/json writes that Go string: a documented difference
	// (codec cbor.go) that meets Kubernetes again wherever it writes the
	// string as JSON.
	if keysCollide(u.Object) {
		// Two keys of invalid UTF-8 that are one key once each byte is
		// U+FFFD: the same documented difference, in keys.
		return
	}
	want := jsonStrings(u.Object)
	got, _, err := kapiCBOR.ToJSON(data)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "tag ") && strings.Contains(msg, "is not supported") {
			return // tags kapi refuses and Kubernetes takes: documented
		}
		t.Fatalf("Kubernetes reads % x as %v; kapi fails: %v", data, want, err)
	}
	var back map[string]any
	if err := k8sjson.Unmarshal(got, &back); err != nil {
		t.Fatalf("kapi's JSON %s of % x: %v", got, data, err)
	}
	if !sameObject(back, want) {
		t.Fatalf("% x:\nKubernetes reads %#v\nkapi reads       %s", data, want, got)
	}
}

// sameObject compares what kapi's JSON reads as (sigs.k8s.io/json numbers)
// with what Kubernetes' serializer read: a float Kubernetes holds as
// float64 kapi writes as a JSON float literal ("1.0"), which reads back as
// float64, so numbers compare by type and value.
func sameObject(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok || !sameObject(gv, v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameObject(g[i], w[i]) {
				return false
			}
		}
		return true
	case float64:
		g, ok := got.(float64)
		return ok && (g == w || math.IsNaN(g) && math.IsNaN(w))
	}
	return reflect.DeepEqual(got, want)
}

// hasUnsignedBeyondInt64 finds an integral float64 at or beyond 2^63 and
// below 1e21, which encoding/json writes as an integer literal.
func hasUnsignedBeyondInt64(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if hasUnsignedBeyondInt64(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasUnsignedBeyondInt64(e) {
				return true
			}
		}
	case float64:
		return v == math.Trunc(v) && math.Abs(v) >= 0x1p63 && math.Abs(v) < 1e21
	}
	return false
}

// jsonStrings is v with every string, keys too, as encoding/json writes it:
// each byte of invalid UTF-8 made U+FFFD.
func jsonStrings(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[jsonString(k)] = jsonStrings(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = jsonStrings(e)
		}
		return a
	case string:
		return jsonString(v)
	}
	return v
}

// keysCollide says whether two keys of a map in v are one key once each
// byte of invalid UTF-8 is U+FFFD.
func keysCollide(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		seen := make(map[string]bool, len(v))
		for k, e := range v {
			if seen[jsonString(k)] || keysCollide(e) {
				return true
			}
			seen[jsonString(k)] = true
		}
	case []any:
		for _, e := range v {
			if keysCollide(e) {
				return true
			}
		}
	}
	return false
}

func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte, size 1
		i += size
	}
	return b.String()
}

// TestCBORTypedMatchesKubernetes decodes each side's CBOR into Kubernetes'
// own Go types, those with every kind of field (a []byte, quantities, int32
// and int64, *bool, times, maps, nested slices): kapi's CBOR of an object's
// JSON reads in Kubernetes' serializer as the object, and Kubernetes' CBOR of
// it reads in kapi as its JSON.
func TestCBORTypedMatchesKubernetes(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	yes, grace := true, int64(30)
	objects := []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", UID: "u-1", ResourceVersion: "7", CreationTimestamp: created, Labels: map[string]string{"a": "b"}},
			Data:       map[string]string{"text": "<hello> & \"world\"\n", "empty": ""},
			BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xfe, 0xff}, "none": {}},
			Immutable:  &yes,
		},
		&corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Generation: 3, CreationTimestamp: created, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-2", Controller: &yes}}},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{
					Name: "app", Image: "example.com/app:1",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1.5Gi"),
					}},
				}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created}}},
		},
	}
	k8sTyped := k8scbor.NewSerializer(clientscheme.Scheme, clientscheme.Scheme)
	for _, obj := range objects {
		gvk := obj.GetObjectKind().GroupVersionKind()
		t.Run(gvk.Kind, func(t *testing.T) {
			stored, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			// kapi writes, Kubernetes reads.
			body, err := kapiCBOR.AppendBody(nil, kapi.TypeMeta{}, mustTranscode(t, stored))
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := k8sTyped.Decode(body, nil, nil)
			if err != nil {
				t.Fatalf("Kubernetes cannot read kapi's CBOR: %v", err)
			}
			if !apiequality.Semantic.DeepEqual(got, obj) {
				t.Errorf("Kubernetes reads kapi's CBOR as\n%#v\nwant\n%#v", got, obj)
			}
			// Kubernetes writes, kapi reads.
			var buf bytes.Buffer
			if err := k8sTyped.Encode(obj, &buf); err != nil {
				t.Fatal(err)
			}
			doc, _, err := kapiCBOR.ToJSON(buf.Bytes())
			if err != nil {
				t.Fatalf("kapi cannot read Kubernetes' CBOR: %v", err)
			}
			back := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
			if err := json.Unmarshal(doc, back); err != nil {
				t.Fatalf("kapi's JSON %s: %v", doc, err)
			}
			if !apiequality.Semantic.DeepEqual(back, obj) {
				t.Errorf("kapi reads Kubernetes' CBOR as %s\nwant %s", doc, stored)
			}
		})
	}
}

// validAPIVersion says whether Kubernetes reads v as a group version with
// a version ("example.com/" and "a/b/c" it does not).
func validAPIVersion(v string) bool {
	gv, err := schema.ParseGroupVersion(v)
	return err == nil && gv.Version != ""
}
