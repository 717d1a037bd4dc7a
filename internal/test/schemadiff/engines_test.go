package schemadiff_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// schemaPath is where both engines are told the schema is.
const schemaPath = "openAPIV3Schema"

// kubeCheck is apiextensions-apiserver's validation of a
// CustomResourceDefinition whose one version has this schema, its errors
// about the schema named from openAPIV3Schema.
func kubeCheck(t testing.TB, schemaJSON []byte) []string {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(schemaJSON, &props); err != nil {
		t.Fatalf("kube cannot read the schema: %v", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &props},
			}},
		},
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
		t.Fatalf("kube cannot convert the CRD: %v", err)
	}
	var out []string
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal) {
		i := strings.Index(e.Field, schemaPath)
		if i < 0 {
			continue
		}
		// A one-version CRD's schema is held as spec.validation inside
		// kube-apiserver; details name it so.
		e.Field = e.Field[i:]
		e.Detail = strings.ReplaceAll(e.Detail, "spec.validation."+schemaPath, schemaPath)
		out = append(out, kubeText(e))
	}
	slices.Sort(out)
	return out
}

func kubeText(e *field.Error) string { return string(e.Type) + " | " + e.Error() }

func ourText(errs []*validation.Error) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, string(e.Type)+" | "+e.Error())
	}
	slices.Sort(out)
	return out
}

// kubeEngine is apiextensions-apiserver's engine for one schema.
type kubeEngine struct {
	structural *structuralschema.Structural
	defaults   *structuralschema.Structural // with pruned defaults, as served
	validator  apiservervalidation.SchemaValidator
}

func newKubeEngine(t testing.TB, schemaJSON []byte) *kubeEngine {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(schemaJSON, &props); err != nil {
		t.Fatalf("kube cannot read the schema: %v", err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
		t.Fatalf("kube cannot convert the schema: %v", err)
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatalf("kube: not structural: %v", err)
	}
	defaults := ss.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(defaults); err != nil {
		t.Fatalf("kube cannot prune defaults: %v", err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatalf("kube cannot build a validator: %v", err)
	}
	return &kubeEngine{structural: ss, defaults: defaults, validator: validator}
}

// decode is how the request path holds an object, for both engines.
func decode(t testing.TB, data []byte) any {
	t.Helper()
	v, err := schema.DecodeJSON(data)
	if err != nil {
		t.Fatalf("bad test object %s: %v", data, err)
	}
	return v
}

// outcome is what an engine did to one object: fields pruned, the object
// after pruning and defaulting, and the validation errors of that.
type outcome struct {
	pruned []string
	object any
	errors []string
}

func (k *kubeEngine) run(obj any) outcome {
	obj = runtime.DeepCopyJSONValue(obj)
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	pruned := structuralpruning.PruneWithOptions(obj, k.structural, true, opts)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	_, coerced := schemaobjectmeta.CoerceWithOptions(nil, obj, k.structural, false, schemaobjectmeta.CoerceOptions{
		DropInvalidFields: true, ReturnUnknownFieldPaths: true,
	})
	pruned = append(pruned, coerced...)
	slices.Sort(pruned)
	structuraldefaulting.Default(obj, k.defaults)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, k.validator)
	if m, ok := obj.(map[string]any); ok {
		errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, m, k.structural, false)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, k.structural, m)...)
	}
	var texts []string
	for _, e := range errs {
		texts = append(texts, kubeText(e))
	}
	slices.Sort(texts)
	return outcome{pruned: pruned, object: obj, errors: texts}
}

// update is kube-apiserver's validation of an update from old to obj,
// both already pruned and defaulted: ratcheting schema validation, the
// embedded resources, and list uniqueness unless old had duplicates.
func (k *kubeEngine) update(obj, old any) []string {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: k.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, k.validator, apiservervalidation.WithRatcheting(correlated))
	m, ok := obj.(map[string]any)
	if ok {
		errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, m, k.structural, false)...)
		if oldMap, ok := old.(map[string]any); ok && len(listtype.ValidateListSetsAndMaps(nil, k.structural, oldMap)) == 0 {
			errs = append(errs, listtype.ValidateListSetsAndMaps(nil, k.structural, m)...)
		}
	}
	var texts []string
	for _, e := range errs {
		texts = append(texts, kubeText(e))
	}
	slices.Sort(texts)
	return texts
}

type ourEngine struct {
	schema, defaults *schema.Schema
}

func newOurEngine(t testing.TB, schemaJSON []byte) *ourEngine {
	t.Helper()
	s, err := schema.Parse(schemaJSON)
	if err != nil {
		t.Fatalf("schema.Parse: %v", err)
	}
	return &ourEngine{schema: s, defaults: s.PrunedDefaults()}
}

func (o *ourEngine) run(obj any) outcome {
	obj = runtime.DeepCopyJSONValue(obj)
	pruned := o.schema.Prune(obj)
	o.defaults.SetDefaults(obj)
	return outcome{pruned: pruned, object: obj, errors: ourText(o.schema.Validate(obj))}
}

// counts tallies what the differential tests compared.
var counts struct {
	schemas, pairs, updates  int
	invalid, pruned, refused int
	ratcheted                int
}

// compareSchema compares the check of a schema and, if both engines
// accept it, their treatment of each object. It returns whether the
// schema was accepted.
func compareSchema(t *testing.T, schemaJSON []byte, objects [][]byte) bool {
	t.Helper()
	counts.schemas++
	ours, err := schema.Parse(schemaJSON)
	if err != nil {
		t.Fatalf("schema.Parse(%s): %v", schemaJSON, err)
	}
	want := kubeCheck(t, schemaJSON)
	got := ourText(ours.Check(schemaPath))
	// Where a default has several embedded-resource faults kube-apiserver
	// reports the first it meets in Go's random map order; Check reports
	// one of them too, so kube gets a few tries to meet the same.
	for try := 0; try < 50 && !slices.Equal(got, want); try++ {
		want = kubeCheck(t, schemaJSON)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Check of %s:\n only ours: %q\n only kube's: %q", schemaJSON, missing(got, want), missing(want, got))
		return false
	}
	if len(want) > 0 {
		counts.refused++
		return false
	}
	k := newKubeEngine(t, schemaJSON)
	o := newOurEngine(t, schemaJSON)
	var stored []any
	for _, data := range objects {
		stored = append(stored, compareObject(t, k, o, schemaJSON, decode(t, data)))
	}
	// Updates: from each stored object to the next, to itself, and to
	// itself with the next one's spec members mixed in.
	for i, old := range stored {
		next := stored[(i+1)%len(stored)]
		compareUpdate(t, k, o, schemaJSON, old, next)
		compareUpdate(t, k, o, schemaJSON, old, old)
		compareUpdate(t, k, o, schemaJSON, old, mix(old, next))
	}
	return true
}

// mix is a copy of a whose spec has every other member of b's spec.
func mix(a, b any) any {
	out := runtime.DeepCopyJSONValue(a)
	am, _ := out.(map[string]any)
	bm, _ := b.(map[string]any)
	as, _ := am["spec"].(map[string]any)
	bs, _ := bm["spec"].(map[string]any)
	if as == nil || bs == nil {
		return out
	}
	keys := slices.Sorted(maps.Keys(bs))
	for i, k := range keys {
		if i%2 == 0 {
			as[k] = runtime.DeepCopyJSONValue(bs[k])
		}
	}
	return out
}

func compareUpdate(t *testing.T, k *kubeEngine, o *ourEngine, schemaJSON []byte, old, obj any) {
	t.Helper()
	counts.updates++
	want := k.update(runtime.DeepCopyJSONValue(obj), runtime.DeepCopyJSONValue(old))
	got := ourText(o.schema.ValidateUpdate(obj, old))
	if len(want) < len(ourText(o.schema.Validate(obj))) {
		counts.ratcheted++
	}
	if !slices.Equal(got, want) {
		o, _ := json.Marshal(old)
		n, _ := json.Marshal(obj)
		t.Errorf("update from %s to %s under %s:\n got  %s\n want %s", o, n, schemaJSON,
			strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// compareObject compares the engines' writes of obj and returns it as
// kube-apiserver would store it.
func compareObject(t *testing.T, k *kubeEngine, o *ourEngine, schemaJSON []byte, obj any) any {
	t.Helper()
	counts.pairs++
	want, got := k.run(obj), o.run(obj)
	if len(want.errors) > 0 {
		counts.invalid++
	}
	if len(want.pruned) > 0 {
		counts.pruned++
	}
	objText, _ := json.Marshal(obj)
	if !slices.Equal(got.pruned, want.pruned) {
		t.Errorf("pruned fields of %s under %s:\n got  %q\n want %q", objText, schemaJSON, got.pruned, want.pruned)
	}
	if !reflect.DeepEqual(got.object, want.object) {
		g, _ := json.Marshal(got.object)
		w, _ := json.Marshal(want.object)
		t.Errorf("pruned and defaulted %s under %s:\n got  %s\n want %s", objText, schemaJSON, g, w)
	}
	if !slices.Equal(got.errors, want.errors) {
		t.Errorf("validation of %s under %s:\n got  %s\n want %s", objText, schemaJSON, strings.Join(got.errors, "\n      "), strings.Join(want.errors, "\n      "))
	}
	return want.object
}

// reportCEL prints what the CEL differential test compared.
var reportCEL = func() {}

func TestMain(m *testing.M) {
	code := m.Run()
	reportCEL()
	if counts.pairs > 0 {
		fmt.Printf("schemadiff: %d schemas checked (%d refused), %d (schema, object) pairs compared (%d invalid, %d with pruned fields), %d updates (%d with errors ratcheted away)\n",
			counts.schemas, counts.refused, counts.pairs, counts.invalid, counts.pruned, counts.updates, counts.ratcheted)
	}
	os.Exit(code)
}

// missing is what a has that b does not.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
