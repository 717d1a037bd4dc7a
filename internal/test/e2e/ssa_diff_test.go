package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The differential test drives kapi's server-side apply (patch.Schema.Apply
// and Update) and Kubernetes' own field manager
// (managedfields.NewDefaultFieldManager over structured-merge-diff) through
// the same sequences of applies and updates, and requires the same objects,
// the same managedFields and the same conflicts.

type diffWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            diffSpec   `json:"spec,omitempty"`
	Status          diffStatus `json:"status,omitempty"`
}

type diffSpec struct {
	Replicas *int32            `json:"replicas,omitempty"`
	Color    string            `json:"color,omitempty"`
	Ports    []diffPort        `json:"ports,omitempty" listType:"map" listMapKey:"name"`
	Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Args     []string          `json:"args,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	Extra    any               `json:"extra,omitempty"`
	Template *diffTemplate     `json:"template,omitempty" structType:"atomic"`
	// Containers nest a map list keyed by two fields in a map list.
	Containers []diffContainer `json:"containers,omitempty" listType:"map" listMapKey:"name"`
	Numbers    []int64         `json:"numbers,omitempty" listType:"set"`
}

type diffContainer struct {
	Name  string            `json:"name"`
	Image string            `json:"image,omitempty"`
	Ports []diffCPort       `json:"ports,omitempty" listType:"map" listMapKey:"containerPort,protocol"`
	Env   map[string]string `json:"env,omitempty"`
}

type diffCPort struct {
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
	HostPort      int32  `json:"hostPort,omitempty"`
}

type diffPort struct {
	Name     string `json:"name"`
	Port     int32  `json:"port,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

type diffTemplate struct {
	Image string `json:"image,omitempty"`
	Pull  string `json:"pull,omitempty"`
}

type diffStatus struct {
	Phase      string           `json:"phase,omitempty"`
	Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
}

// diffSchemaYAML is diffWidget's schema as structured-merge-diff reads it.
const diffSchemaYAML = `types:
- name: widget
  map:
    fields:
    - name: apiVersion
      type: {scalar: string}
    - name: kind
      type: {scalar: string}
    - name: metadata
      type: {namedType: objectmeta}
    - name: spec
      type: {namedType: spec}
    - name: status
      type: {namedType: status}
- name: objectmeta
  map:
    fields:
    - {name: name, type: {scalar: string}}
    - {name: generateName, type: {scalar: string}}
    - {name: namespace, type: {scalar: string}}
    - {name: uid, type: {scalar: string}}
    - {name: resourceVersion, type: {scalar: string}}
    - {name: generation, type: {scalar: numeric}}
    - {name: creationTimestamp, type: {scalar: string}}
    - {name: deletionTimestamp, type: {scalar: string}}
    - {name: deletionGracePeriodSeconds, type: {scalar: numeric}}
    - name: labels
      type: {map: {elementType: {scalar: string}}}
    - name: annotations
      type: {map: {elementType: {scalar: string}}}
    - name: finalizers
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: ownerReferences
      type: {list: {elementType: {namedType: ownerref}, elementRelationship: associative, keys: [uid]}}
    - name: managedFields
      type: {list: {elementType: {namedType: __untyped_atomic_}, elementRelationship: atomic}}
- name: ownerref
  map:
    fields:
    - {name: apiVersion, type: {scalar: string}}
    - {name: kind, type: {scalar: string}}
    - {name: name, type: {scalar: string}}
    - {name: uid, type: {scalar: string}}
    - {name: controller, type: {scalar: boolean}}
    - {name: blockOwnerDeletion, type: {scalar: boolean}}
- name: spec
  map:
    fields:
    - {name: replicas, type: {scalar: numeric}}
    - {name: color, type: {scalar: string}}
    - name: ports
      type: {list: {elementType: {namedType: port}, elementRelationship: associative, keys: [name]}}
    - name: tags
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: args
      type: {list: {elementType: {scalar: string}, elementRelationship: atomic}}
    - name: selector
      type: {map: {elementType: {scalar: string}}}
    - name: extra
      type: {namedType: __untyped_atomic_}
    - name: template
      type: {namedType: template}
    - name: containers
      type: {list: {elementType: {namedType: container}, elementRelationship: associative, keys: [name]}}
    - name: numbers
      type: {list: {elementType: {scalar: numeric}, elementRelationship: associative}}
- name: container
  map:
    fields:
    - {name: name, type: {scalar: string}}
    - {name: image, type: {scalar: string}}
    - name: ports
      type: {list: {elementType: {namedType: cport}, elementRelationship: associative, keys: [containerPort, protocol]}}
    - name: env
      type: {map: {elementType: {scalar: string}}}
- name: cport
  map:
    fields:
    - {name: containerPort, type: {scalar: numeric}}
    - {name: protocol, type: {scalar: string}}
    - {name: hostPort, type: {scalar: numeric}}
- name: port
  map:
    fields:
    - {name: name, type: {scalar: string}}
    - {name: port, type: {scalar: numeric}}
    - {name: protocol, type: {scalar: string}}
- name: template
  map:
    elementRelationship: atomic
    fields:
    - {name: image, type: {scalar: string}}
    - {name: pull, type: {scalar: string}}
- name: status
  map:
    fields:
    - {name: phase, type: {scalar: string}}
    - name: conditions
      type: {list: {elementType: {namedType: condition}, elementRelationship: associative, keys: [type]}}
- name: condition
  map:
    fields:
    - {name: type, type: {scalar: string}}
    - {name: status, type: {scalar: string}}
    - {name: observedGeneration, type: {scalar: numeric}}
    - {name: lastTransitionTime, type: {scalar: string}}
    - {name: reason, type: {scalar: string}}
    - {name: message, type: {scalar: string}}
- name: __untyped_atomic_
  scalar: untyped
  list:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
  map:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
`

var diffGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

const diffAPIVersion = "example.com/v1"

// smdConverter is a managedfields.TypeConverter over diffSchemaYAML.
type smdConverter struct{ widget typed.ParseableType }

func (c smdConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return c.widget.FromUnstructured(obj.(*unstructured.Unstructured).UnstructuredContent(), opts...)
}

func (c smdConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	m, _ := v.AsValue().Unstructured().(map[string]any)
	return &unstructured.Unstructured{Object: m}, nil
}

type diffConvertor struct{}

func (diffConvertor) Convert(in, out, context any) error { return errors.New("not implemented") }
func (diffConvertor) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}
func (diffConvertor) ConvertFieldLabel(schema.GroupVersionKind, string, string) (string, string, error) {
	return "", "", errors.New("not implemented")
}

type diffDefaulter struct{}

func (diffDefaulter) Default(runtime.Object) {}

type diffCreater struct{}

func (diffCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// diffHarness holds both implementations' view of one object.
type diffHarness struct {
	t          *testing.T
	kube       map[string]*managedfields.FieldManager // by subresource
	schema     *patch.Schema
	live       []byte // normalized object, without managedFields; nil before create
	kubeFields []metav1.ManagedFieldsEntry
	kapiFields []kapi.ManagedFieldsEntry
	step       int
	log        []string
	ignore     bool // as a registry with a status subresource: status is not the main resource's, spec not /status's
	conflicts  int  // steps that both sides refused with conflicts
	changes    int  // steps whose result differs from the live object
}

var diffBaseTime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// ignoredField is the top-level field a write through subresource does not
// touch, when the harness ignores fields.
func ignoredField(subresource string) string {
	if subresource == "status" {
		return "spec"
	}
	return "status"
}

func newDiffHarness(t *testing.T, ignore bool) *diffHarness {
	t.Helper()
	parser, err := typed.NewParser(typed.YAMLObject(diffSchemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	conv := smdConverter{widget: parser.Type("widget")}
	h := &diffHarness{t: t, kube: map[string]*managedfields.FieldManager{}, ignore: ignore}
	for _, sub := range []string{"", "status"} {
		var reset map[fieldpath.APIVersion]fieldpath.Filter
		if ignore {
			reset = map[fieldpath.APIVersion]fieldpath.Filter{
				diffAPIVersion: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie(ignoredField(sub)))),
			}
		}
		fm, err := managedfields.NewDefaultFieldManager(conv, diffConvertor{}, diffDefaulter{}, diffCreater{}, diffGVK, diffGVK.GroupVersion(), sub, reset)
		if err != nil {
			t.Fatal(err)
		}
		h.kube[sub] = fm
	}
	if h.schema, err = patch.SchemaOf(reflect.TypeFor[diffWidget]()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *diffHarness) now() time.Time { return diffBaseTime.Add(time.Duration(h.step) * time.Second) }

// kubeObject is the live object with kube's managedFields, as kube stores it.
func (h *diffHarness) kubeObject(b []byte, fields []metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	if b == nil {
		u, _ := diffCreater{}.New(diffGVK)
		return u.(*unstructured.Unstructured)
	}
	u := mustUnstructured(h.t, b)
	u.SetManagedFields(fields)
	return u
}

func mustUnstructured(t *testing.T, b []byte) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// outcome is what one step produced on one side.
type outcome struct {
	object []byte // raw result, without managedFields
	fields string // managedFields, times normalized, as JSON
	err    string
	causes []string
}

// apply runs one apply on both sides and requires the same outcome.
func (h *diffHarness) apply(manager, subresource string, config string, force bool) bool {
	h.step++
	h.log = append(h.log, fmt.Sprintf("apply %s/%s force=%v %s", manager, subresource, force, config))
	var k outcome
	out, err := h.kube[subresource].Apply(h.kubeObject(h.live, h.kubeFields), mustUnstructured(h.t, []byte(config)), manager, force)
	if err != nil {
		k.err = err.Error()
		var se *apierrors.StatusError
		if errors.As(err, &se) && se.ErrStatus.Details != nil {
			for _, c := range se.ErrStatus.Details.Causes {
				k.causes = append(k.causes, fmt.Sprintf("%s|%s|%s", c.Type, c.Message, c.Field))
			}
		}
	} else {
		if h.ignore {
			// kube-apiserver's strategy resets what the subresource does
			// not own after the field manager merged it.
			u := out.(*unstructured.Unstructured)
			f := ignoredField(subresource)
			if old, ok := h.kubeObject(h.live, nil).Object[f]; ok && h.live != nil {
				u.Object[f] = old
			} else {
				delete(u.Object, f)
			}
		}
		k = h.kubeOutcome(out)
	}
	var ignore []string
	if h.ignore {
		ignore = []string{ignoredField(subresource)}
	}

	var p outcome
	obj, fields, err := h.schema.Apply(h.live, []byte(config), h.kapiFields, patch.ApplyOptions{
		Manager: manager, APIVersion: diffAPIVersion, Subresource: subresource, Force: force, Now: kapi.NewTime(h.now()), Ignore: ignore,
	})
	if err != nil {
		p.err = err.Error()
		var ce *patch.ConflictError
		if errors.As(err, &ce) {
			for _, c := range ce.Causes() {
				p.causes = append(p.causes, fmt.Sprintf("%s|%s|%s", c.Type, c.Message, c.Field))
			}
		}
	} else {
		p = h.kapiOutcome(obj, fields)
	}
	return h.settle(k, p, out, obj, fields)
}

// update runs one ordinary write (new is the whole new object) on both sides.
func (h *diffHarness) update(manager, subresource string, newObj []byte) bool {
	h.step++
	h.log = append(h.log, fmt.Sprintf("update %s/%s %s", manager, subresource, newObj))
	var k outcome
	out, err := h.kube[subresource].Update(h.kubeObject(h.live, h.kubeFields), mustUnstructured(h.t, newObj), manager)
	if err != nil {
		k.err = err.Error()
	} else {
		k = h.kubeOutcome(out)
	}
	var ignore []string
	if h.ignore {
		ignore = []string{ignoredField(subresource)}
	}
	var p outcome
	fields, err := h.schema.Update(h.live, newObj, h.kapiFields, patch.UpdateOptions{
		Manager: manager, APIVersion: diffAPIVersion, Subresource: subresource, Now: kapi.NewTime(h.now()), Ignore: ignore,
	})
	if err != nil {
		p.err = err.Error()
	} else {
		p = h.kapiOutcome(newObj, fields)
	}
	return h.settle(k, p, out, newObj, fields)
}

func (h *diffHarness) kubeOutcome(out runtime.Object) outcome {
	u := out.(*unstructured.Unstructured).DeepCopy()
	fields := u.GetManagedFields()
	for i := range fields {
		// kube stamps real time; steps stand in for seconds.
		if fields[i].Time != nil && fields[i].Time.Time.After(diffBaseTime.Add(time.Hour)) {
			fields[i].Time = &metav1.Time{Time: h.now()}
		}
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	b, err := json.Marshal(u.Object)
	if err != nil {
		h.t.Fatal(err)
	}
	fb, _ := json.Marshal(sortedFieldsV1(fields))
	return outcome{object: b, fields: string(fb)}
}

// sortedFieldsV1 writes each entry's set with its keys sorted as strings.
// kube-apiserver keeps a custom resource's managedFields as unstructured
// maps, so its JSON comes out in that order; kapi writes structured-merge-
// diff's own order (numbers by value), as kube does for built-in kinds. The
// sets are the same; only the key order of the JSON differs.
func sortedFieldsV1(fields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	out := make([]metav1.ManagedFieldsEntry, len(fields))
	for i, f := range fields {
		out[i] = f
		if f.FieldsV1 != nil {
			var m map[string]any
			if err := json.Unmarshal(f.FieldsV1.GetRawBytes(), &m); err == nil {
				raw, _ := json.Marshal(m)
				out[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
			}
		}
	}
	return out
}

func (h *diffHarness) kapiOutcome(obj []byte, fields []kapi.ManagedFieldsEntry) outcome {
	for _, f := range fields {
		// kapi's FieldsV1 is byte for byte what structured-merge-diff
		// writes for the same set.
		var set fieldpath.Set
		if err := set.FromJSON(bytes.NewReader(f.FieldsV1.Raw)); err != nil {
			h.fail("kapi's fieldsV1 does not parse: %v: %s", err, f.FieldsV1.Raw)
		}
		if smd, _ := set.ToJSON(); !bytes.Equal(smd, f.FieldsV1.Raw) {
			h.fail("kapi's fieldsV1 is not in structured-merge-diff's form:\nkapi: %s\nsmd:  %s", f.FieldsV1.Raw, smd)
		}
	}
	fb, _ := json.Marshal(fields)
	// Both sides' entries go through the same JSON, so the same set is
	// the same text.
	var generic []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(fb, &generic); err != nil {
		h.t.Fatal(err)
	}
	for i := range generic {
		if generic[i].Time != nil {
			generic[i].Time = &metav1.Time{Time: generic[i].Time.Time.UTC()}
		}
	}
	fb, _ = json.Marshal(sortedFieldsV1(generic))
	return outcome{object: obj, fields: string(fb)}
}

// settle compares the outcomes and, when they agree, makes the result the
// next live object on both sides (through the Go type, as kapi stores it).
func (h *diffHarness) settle(k, p outcome, kubeOut runtime.Object, obj []byte, fields []kapi.ManagedFieldsEntry) bool {
	h.t.Helper()
	if (k.err == "") != (p.err == "") {
		h.fail("errors differ:\nkube: %s\nkapi: %s", k.err, p.err)
		return false
	}
	if k.err != "" {
		if k.causes != nil || p.causes != nil {
			h.conflicts++
			sort.Strings(k.causes)
			sort.Strings(p.causes)
			if !reflect.DeepEqual(k.causes, p.causes) {
				h.fail("conflict causes differ:\nkube: %q\nkapi: %q", k.causes, p.causes)
				return false
			}
			if k.err != p.err {
				h.fail("conflict messages differ:\nkube: %s\nkapi: %s", k.err, p.err)
				return false
			}
		}
		return true
	}
	if !jsonSame(k.object, p.object) {
		h.fail("objects differ:\nkube: %s\nkapi: %s", k.object, p.object)
		return false
	}
	if k.fields != p.fields {
		h.fail("managedFields differ:\nkube: %s\nkapi: %s", k.fields, p.fields)
		return false
	}
	if h.live == nil || !jsonSame(h.live, p.object) {
		h.changes++
	}
	var w diffWidget
	if err := json.Unmarshal(p.object, &w); err != nil {
		h.fail("result does not decode: %v", err)
		return false
	}
	if w.UID == "" {
		w.UID = "uid-1" // the server gives every created object one
	}
	w.ManagedFields = nil
	h.live, _ = json.Marshal(w)
	h.kubeFields = nil // Unmarshal into old entries would keep their times
	json.Unmarshal([]byte(k.fields), &h.kubeFields)
	h.kapiFields = fields
	return true
}

func (h *diffHarness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Errorf("step %d: "+format+"\nsteps:\n  %s", append([]any{h.step}, append(args, strings.Join(h.log, "\n  "))...)...)
}

func jsonSame(a, b []byte) bool {
	var va, vb any
	if utiljson.Unmarshal(a, &va) != nil || utiljson.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(normalizeNumbers(va), normalizeNumbers(vb))
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeNumbers(x[k])
		}
	case []any:
		for i := range x {
			x[i] = normalizeNumbers(x[i])
		}
	}
	return v
}

const diffHead = `"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"`

// diffStep is one step of a scripted sequence.
type diffStep struct {
	apply       string // a manager applies config
	update      string // a manager writes the object
	subresource string
	config      string // apply: the config's spec (JSON object members after metadata)
	object      string // update: the new object's members after metadata
	force       bool
}

func TestSSADifferentialTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []diffStep
	}{
		{"create by apply", []diffStep{
			{apply: "alice", config: `,"labels":{"a":"1"}},"spec":{"replicas":1,"color":"Red","ports":[{"name":"http","port":80}],"tags":["x"],"args":["a"],"selector":{"k":"v"}}`},
		}},
		{"conflict then force", []diffStep{
			{apply: "alice", config: `},"spec":{"replicas":1,"color":"Red"}`},
			{apply: "bob", config: `},"spec":{"replicas":2,"color":"Blue"}`},
			{apply: "bob", config: `},"spec":{"replicas":2,"color":"Blue"}`, force: true},
			{apply: "alice", config: `},"spec":{"replicas":1}`},
		}},
		{"shared ownership and removal", []diffStep{
			{apply: "alice", config: `},"spec":{"replicas":1,"color":"Red"}`},
			{apply: "bob", config: `},"spec":{"color":"Red"}`},
			{apply: "alice", config: `},"spec":{"replicas":1}`},
			{apply: "bob", config: `}`},
		}},
		{"map list items", []diffStep{
			{apply: "alice", config: `},"spec":{"ports":[{"name":"http","port":80},{"name":"grpc","port":9000}]}`},
			{apply: "bob", config: `},"spec":{"ports":[{"name":"https","port":443},{"name":"http","port":8080}]}`},
			{apply: "bob", config: `},"spec":{"ports":[{"name":"https","port":443},{"name":"http","port":8080}]}`, force: true},
			{apply: "alice", config: `},"spec":{"ports":[{"name":"grpc","port":9000}]}`},
		}},
		{"update then apply", []diffStep{
			{update: "creator", object: `,"uid":"u1"},"spec":{"replicas":1,"color":"Red","tags":["x","y"]}`},
			{apply: "alice", config: `},"spec":{"replicas":3,"tags":["y","z"]}`},
			{apply: "alice", config: `},"spec":{"replicas":3,"tags":["y","z"]}`, force: true},
			{update: "editor", object: `,"uid":"u1"},"spec":{"replicas":4,"color":"Red","tags":["x","y","z"]}`},
			{apply: "alice", config: `},"spec":{"tags":["z"]}`},
		}},
		{"status subresource", []diffStep{
			{apply: "alice", config: `},"spec":{"color":"Red"}`},
			{update: "controller", subresource: "status", object: `,"uid":"u1"},"spec":{"color":"Red"},"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True","lastTransitionTime":null,"reason":"","message":""}]}`},
			{apply: "ctl", subresource: "status", config: `},"status":{"phase":"Done"}`},
		}},
		{"atomic and untyped", []diffStep{
			{apply: "alice", config: `},"spec":{"args":["a","b"],"extra":{"x":[1,2]},"template":{"image":"i"}}`},
			{apply: "bob", config: `},"spec":{"args":["a"],"extra":{"x":[1,2]},"template":{"image":"i","pull":"p"}}`},
			{apply: "alice", config: `},"spec":{}`},
		}},
		{"numbers as kube reads them", []diffStep{
			{apply: "alice", config: `},"spec":{"replicas":2.0,"extra":{"f":1.50,"e":1e3},"numbers":[1.0,3e0],"containers":[{"name":"c","ports":[{"containerPort":80.0}]}]}`},
			{apply: "bob", config: `},"spec":{"replicas":2,"numbers":[3]}`},
		}},
		{"duplicate key in config", []diffStep{
			{apply: "alice", config: `},"spec":{"ports":[{"name":"a"},{"name":"a"}]}`},
		}},
		{"many updaters capped", func() []diffStep {
			s := []diffStep{{apply: "alice", config: `},"spec":{"color":"Red"}`}}
			for i := 0; i < 13; i++ {
				s = append(s, diffStep{update: fmt.Sprintf("u%02d", i), object: fmt.Sprintf(`,"uid":"u1","labels":{"l%d":"x"}},"spec":{"color":"Red","replicas":%d}`, i, i+1)})
			}
			return s
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newDiffHarness(t, false)
			for _, s := range tc.steps {
				var ok bool
				if s.apply != "" {
					ok = h.apply(s.apply, s.subresource, "{"+diffHead+s.config+"}", s.force)
				} else {
					ok = h.update(s.update, s.subresource, []byte("{"+diffHead+s.object+"}"))
				}
				if !ok {
					return
				}
			}
		})
	}
}

// TestSSADifferentialRandom runs random sequences of applies (three
// managers, on the main resource and /status, with and without force) and
// updates (a dozen managers, so the cap on Update entries is reached)
// through both implementations.
func TestSSADifferentialRandom(t *testing.T) {
	// 600 sequences (seeds 1 to 600), 200 under the race detector, whose
	// build runs them 5 times slower (53 s for 600 alone under the heavy
	// lock). Mutants of patch's apply are caught by seeds 1 (conflicts
	// only of modified fields), 36 (other managers keep fields the apply
	// removed) and 78 (no new time for an apply touching only ignored
	// fields); the race build runs seeds 1 to 200 of the same sequence.
	sequences := 600
	if testing.Short() {
		sequences = 100
	} else if race.Enabled {
		sequences = 200
	}
	steps, conflicts, changes := 0, 0, 0
	for seed := 1; seed <= sequences; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		h := newDiffHarness(t, seed%2 == 0)
		n := 4 + r.Intn(12)
		for i := 0; i < n; i++ {
			var ok bool
			status := r.Intn(5) == 0
			sub := ""
			if status {
				sub = "status"
			}
			if h.live == nil || r.Intn(3) > 0 {
				manager := []string{"alice", "bob", "carol"}[r.Intn(3)]
				ok = h.apply(manager, sub, randomConfig(r, status, h.ignore), r.Intn(3) == 0)
			} else {
				ok = h.update(fmt.Sprintf("u%d", r.Intn(13)), sub, randomUpdate(t, r, h.live, status))
			}
			steps++
			if !ok {
				t.Fatalf("seed %d differs", seed)
			}
		}
		conflicts += h.conflicts
		changes += h.changes
	}
	t.Logf("%d sequences, %d steps agree: %d changed the object, %d were conflicts", sequences, steps, changes, conflicts)
	if conflicts == 0 || changes == 0 {
		t.Errorf("the sequences never conflict or never change the object: they test too little")
	}
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// subset is a random selection of names in random order.
func subset(r *rand.Rand, names ...string) []string {
	var out []string
	for _, i := range r.Perm(len(names)) {
		if r.Intn(2) == 0 {
			out = append(out, names[i])
		}
	}
	return out
}

// randomConfig is an apply configuration of the spec, or of the status;
// with ignore, sometimes of the other too, which the write must ignore.
func randomConfig(r *rand.Rand, status, ignore bool) string {
	meta := map[string]any{"name": "w"}
	if labels := subset(r, "l1", "l2"); len(labels) > 0 {
		m := map[string]any{}
		for _, l := range labels {
			m[l] = pick(r, "a", "b")
		}
		meta["labels"] = m
	}
	obj := map[string]any{"apiVersion": diffAPIVersion, "kind": "Widget", "metadata": meta}
	if status {
		st := map[string]any{}
		if r.Intn(2) == 0 {
			st["phase"] = pick(r, "Ready", "Done")
		}
		if types := subset(r, "Ready", "Synced"); len(types) > 0 {
			var conds []any
			for _, ty := range types {
				conds = append(conds, map[string]any{"type": ty, "status": pick(r, "True", "False")})
			}
			st["conditions"] = conds
		}
		obj["status"] = st
		if ignore && r.Intn(3) == 0 {
			obj["spec"] = map[string]any{"color": pick(r, "Red", "Blue")}
		}
		return diffJSON(obj)
	}
	if r.Intn(10) == 0 {
		return diffJSON(obj)
	}
	spec := map[string]any{}
	if r.Intn(2) == 0 {
		spec["replicas"] = 1 + r.Intn(3)
	}
	if r.Intn(2) == 0 {
		spec["color"] = pick(r, "Red", "Blue")
	}
	if r.Intn(2) == 0 {
		var ports []any
		for _, name := range subset(r, "http", "https", "grpc") {
			p := map[string]any{"name": name}
			if r.Intn(4) > 0 {
				p["port"] = pick(r, 80, 443, 8080)
			}
			if r.Intn(3) == 0 {
				p["protocol"] = pick(r, "TCP", "UDP")
			}
			ports = append(ports, p)
		}
		spec["ports"] = ports
	}
	if r.Intn(2) == 0 {
		spec["tags"] = subset(r, "x", "y", "z")
	}
	if r.Intn(3) == 0 {
		var cs []any
		for _, name := range subset(r, "app", "sidecar") {
			c := map[string]any{"name": name}
			if r.Intn(2) == 0 {
				c["image"] = pick(r, "img:1", "img:2")
			}
			if r.Intn(2) == 0 {
				var ports []any
				for _, p := range subset(r, "80", "443", "53") {
					port := map[string]any{"containerPort": map[string]int{"80": 80, "443": 443, "53": 53}[p]}
					if r.Intn(2) == 0 {
						port["protocol"] = pick(r, "TCP", "UDP") // a key that may be missing
					}
					if r.Intn(2) == 0 {
						port["hostPort"] = pick(r, 8080, 9090)
					}
					ports = append(ports, port)
				}
				c["ports"] = ports
			}
			if r.Intn(3) == 0 {
				env := map[string]any{}
				for _, k := range subset(r, "A", "B") {
					env[k] = pick(r, "1", "2")
				}
				c["env"] = env
			}
			cs = append(cs, c)
		}
		spec["containers"] = cs
	}
	if r.Intn(4) == 0 {
		var ns []any
		for _, n := range subset(r, "1", "2", "30") {
			ns = append(ns, map[string]int{"1": 1, "2": 2, "30": 30}[n])
		}
		spec["numbers"] = ns
	}
	// Empty lists and objects, and nulls, own differently from values.
	switch r.Intn(12) {
	case 0:
		spec["tags"] = []any{}
	case 1:
		spec["selector"] = map[string]any{}
	case 2:
		spec["color"] = nil
	case 3:
		meta["labels"] = map[string]any{}
	case 4:
		spec["ports"] = []any{}
	case 5:
		spec["template"] = nil
	}
	if r.Intn(3) == 0 {
		spec["args"] = subset(r, "a", "b")
	}
	if r.Intn(3) == 0 {
		m := map[string]any{}
		for _, k := range subset(r, "k1", "k2") {
			m[k] = pick(r, "v1", "v2")
		}
		spec["selector"] = m
	}
	if r.Intn(4) == 0 {
		spec["extra"] = pick[any](r, 1, "s", []any{1, 2}, map[string]any{"a": 1})
	}
	if r.Intn(4) == 0 {
		tpl := map[string]any{"image": pick(r, "i1", "i2")}
		if r.Intn(2) == 0 {
			tpl["pull"] = "Always"
		}
		spec["template"] = tpl
	}
	obj["spec"] = spec
	if ignore && r.Intn(3) == 0 {
		obj["status"] = map[string]any{"phase": pick(r, "Ready", "Done")}
	}
	return diffJSON(obj)
}

// randomUpdate changes a few fields of the live object (only status when
// status is set), as a controller's PUT would.
func randomUpdate(t *testing.T, r *rand.Rand, live []byte, status bool) []byte {
	var w diffWidget
	if err := json.Unmarshal(live, &w); err != nil {
		t.Fatal(err)
	}
	for n := 1 + r.Intn(3); n > 0; n-- {
		if status {
			switch r.Intn(3) {
			case 0:
				w.Status.Phase = pick(r, "", "Ready", "Failed")
			case 1:
				w.Status.Conditions = append(w.Status.Conditions, kapi.Condition{Type: fmt.Sprintf("C%d", r.Intn(100)), Status: "True"})
			case 2:
				if len(w.Status.Conditions) > 0 {
					w.Status.Conditions[r.Intn(len(w.Status.Conditions))].Status = pick(r, "True", "False", "Unknown")
				}
			}
			continue
		}
		switch r.Intn(13) {
		case 9:
			if len(w.Spec.Containers) > 0 {
				c := &w.Spec.Containers[r.Intn(len(w.Spec.Containers))]
				switch r.Intn(3) {
				case 0:
					c.Image = pick(r, "", "img:3")
				case 1:
					c.Ports = append(c.Ports, diffCPort{ContainerPort: int32(pick(r, 80, 8000)), Protocol: pick(r, "", "TCP")})
				case 2:
					if c.Env == nil {
						c.Env = map[string]string{}
					}
					c.Env[pick(r, "A", "C")] = "9"
				}
			} else {
				w.Spec.Containers = append(w.Spec.Containers, diffContainer{Name: "init", Image: "busybox"})
			}
		case 10:
			w.Spec.Numbers = append(w.Spec.Numbers, int64(r.Intn(4)))
		case 11:
			// kube keeps what a write gives it, duplicates included.
			if len(w.Spec.Tags) > 0 {
				w.Spec.Tags = append(w.Spec.Tags, w.Spec.Tags[0])
			}
		case 12:
			if len(w.Spec.Ports) > 0 {
				w.Spec.Ports = append(w.Spec.Ports, diffPort{Name: w.Spec.Ports[0].Name, Port: 7})
			}
		case 0:
			w.Spec.Color = pick(r, "", "Red", "Green")
		case 1:
			v := int32(r.Intn(5))
			w.Spec.Replicas = pick(r, nil, &v)
		case 2:
			name := pick(r, "http", "admin", "grpc")
			found := false
			for i := range w.Spec.Ports {
				if w.Spec.Ports[i].Name == name {
					found = true
					if r.Intn(2) == 0 {
						w.Spec.Ports = append(w.Spec.Ports[:i], w.Spec.Ports[i+1:]...)
					} else {
						w.Spec.Ports[i].Port = int32(1 + r.Intn(9000))
					}
					break
				}
			}
			if !found {
				w.Spec.Ports = append(w.Spec.Ports, diffPort{Name: name, Port: 1234})
			}
		case 3:
			w.Spec.Tags = subset(r, "x", "y", "w")
		case 4:
			w.Spec.Args = subset(r, "a", "c")
		case 5:
			if w.Labels == nil {
				w.Labels = map[string]string{}
			}
			k := pick(r, "l1", "l3")
			if _, ok := w.Labels[k]; ok && r.Intn(2) == 0 {
				delete(w.Labels, k)
			} else {
				w.Labels[k] = pick(r, "a", "c")
			}
		case 6:
			if w.Spec.Selector == nil {
				w.Spec.Selector = map[string]string{}
			}
			w.Spec.Selector[pick(r, "k1", "k3")] = "v9"
		case 7:
			w.Spec.Extra = pick[any](r, nil, "t", []any{3.0})
		case 8:
			w.Spec.Template = pick(r, nil, &diffTemplate{Image: "i3"})
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func diffJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
