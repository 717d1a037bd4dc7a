package schemadiff_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	kubecel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
	kapicel "github.com/kapi-dev/kapi/validation/cel"
)

// The CEL half of the differential test: for (schema with rules, old,
// new) triples, kapi's rule errors (validation/cel through
// schema.RuleCompiler) against apiextensions-apiserver's CEL validator, in
// field path, cause type and message; and the check of a
// CustomResourceDefinition's rules (compile errors, cost) against
// ValidateCustomResourceDefinition.

// unstructuredTyper types every object as what it says it is, as
// kube-apiserver's unstructured scheme does.
type unstructuredTyper struct{}

func (unstructuredTyper) ObjectKinds(obj runtime.Object) ([]kubeschema.GroupVersionKind, bool, error) {
	return []kubeschema.GroupVersionKind{obj.GetObjectKind().GroupVersionKind()}, false, nil
}
func (unstructuredTyper) Recognizes(kubeschema.GroupVersionKind) bool { return true }

var celEngine = func() *kapicel.Engine {
	e, err := kapicel.New()
	if err != nil {
		panic(err)
	}
	return e
}()

var celCounts struct {
	schemas, refused, triples, failing, ratcheted, writes, mismatches int
}

// selfTypeName is the name kube-apiserver gives a rule's object types,
// made unique with the clock; messages naming them are compared without
// the number.
var selfTypeName = regexp.MustCompile(`selfType[0-9]+`)

func normalizeCEL(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = selfTypeName.ReplaceAllString(s, "selfType")
	}
	slices.Sort(out)
	return out
}

// kubeValidators are the CEL validators of the kube engines, compiled
// once per schema as kube-apiserver does.
var kubeValidators = map[*kubeEngine]*kubecel.Validator{}

// kubeStrategies are their registry strategies, made once per schema.
var kubeStrategies = map[*kubeEngine]interface {
	Validate(context.Context, runtime.Object) field.ErrorList
	ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
}{}

// kubeRules is apiextensions-apiserver's CEL validation of obj (old on
// update, nil on create), with ratcheting as kube-apiserver runs it.
func (k *kubeEngine) rules(obj, old any) []string {
	v, ok := kubeValidators[k]
	if !ok {
		v = kubecel.NewValidator(k.structural, true, celconfig.PerCallLimit)
		kubeValidators[k] = v
	}
	if v == nil {
		return nil
	}
	var opts []kubecel.Option
	if old != nil {
		opts = append(opts, kubecel.WithRatcheting(common.NewCorrelatedObject(obj, old, &model.Structural{Structural: k.structural})))
	}
	errs, _ := v.Validate(context.Background(), nil, k.structural, obj, old, celconfig.RuntimeCELCostBudget, opts...)
	var texts []string
	for _, e := range errs {
		texts = append(texts, kubeText(e))
	}
	return normalizeCEL(texts)
}

// kubeWrite is all of kube-apiserver's validation of a custom resource
// write (its registry strategy: schema, embedded resources, list
// invariants, then the rules unless the schema's errors block them),
// without the errors about metadata, which kapi's request path checks
// apart.
func (k *kubeEngine) write(obj, old any) []string {
	st, ok := kubeStrategies[k]
	if !ok {
		st = customresource.NewStrategy(unstructuredTyper{}, false, kubeschema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			k.validator, nil, k.structural, nil, nil, nil)
		kubeStrategies[k] = st
	}
	withVersion := func(v any) *unstructured.Unstructured {
		m := runtime.DeepCopyJSONValue(v).(map[string]any)
		if meta, ok := m["metadata"].(map[string]any); ok {
			meta["resourceVersion"] = "1"
		}
		return &unstructured.Unstructured{Object: m}
	}
	var errs field.ErrorList
	if old == nil {
		errs = st.Validate(context.Background(), withVersion(obj))
	} else {
		errs = st.ValidateUpdate(context.Background(), withVersion(obj), withVersion(old))
	}
	var texts []string
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, "metadata") {
			texts = append(texts, kubeText(e))
		}
	}
	return normalizeCEL(texts)
}

// compareRuleCheck compares the check of a schema with rules: Check then
// CheckRules against ValidateCustomResourceDefinition. It returns whether
// both accept the schema.
func compareRuleCheck(t *testing.T, schemaJSON []byte) (*schema.Schema, bool) {
	t.Helper()
	celCounts.schemas++
	ours, err := schema.Parse(schemaJSON)
	if err != nil {
		t.Fatalf("schema.Parse(%s): %v", schemaJSON, err)
	}
	want := normalizeCEL(kubeCheck(t, schemaJSON))
	errs := ours.Check(schemaPath)
	if len(errs) == 0 {
		errs = celEngine.CheckRules(ours, schemaPath)
	}
	got := normalizeCEL(ourText(errs))
	if !slices.Equal(got, want) {
		celCounts.mismatches++
		t.Errorf("check of the rules of %s:\n only ours:   %q\n only kube's: %q", schemaJSON, missing(got, want), missing(want, got))
		return nil, false
	}
	if len(want) > 0 {
		celCounts.refused++
		return nil, false
	}
	return ours, true
}

// compareRules compares the rule errors of the objects (made by kube's
// pruning and defaulting first) on create, and of updates between them.
// It returns whether both engines accept the schema.
func compareRules(t *testing.T, schemaJSON []byte, objects [][]byte) bool {
	t.Helper()
	ours, ok := compareRuleCheck(t, schemaJSON)
	if !ok {
		return false
	}
	k := newKubeEngine(t, schemaJSON)
	set := celEngine.CompileRules(ours)
	defer delete(kubeValidators, k)
	defer delete(kubeStrategies, k)
	var stored []any
	for _, data := range objects {
		stored = append(stored, k.run(decode(t, data)).object)
	}
	// Each (object, old) pair is compared once, and kube's errors on an
	// object created are counted once: the pairs below repeat (mix of two
	// objects with one field is one of them), and an evaluation of a
	// rule at its cost limit ("runtime cost limits") takes ~10 s under
	// the race detector; the answers are the same each time.
	compared := map[string]bool{}
	createErrs := map[string]int{}
	key := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	one := func(obj, old any) {
		pair := key(obj) + "\x00" + key(old)
		if compared[pair] {
			return
		}
		compared[pair] = true
		celCounts.triples++
		want := k.rules(runtime.DeepCopyJSONValue(obj), runtime.DeepCopyJSONValue(old))
		var got []string
		if set != nil {
			got = normalizeCEL(ourText(set.Validate(obj, old)))
		}
		if len(want) > 0 {
			celCounts.failing++
		}
		if old == nil {
			createErrs[key(obj)] = len(want)
		} else {
			n, ok := createErrs[key(obj)]
			if !ok {
				n = len(k.rules(runtime.DeepCopyJSONValue(obj), nil))
				createErrs[key(obj)] = n
			}
			if len(want) < n {
				celCounts.ratcheted++
			}
		}
		if m, ok := obj.(map[string]any); ok && m["kind"] == "Widget" {
			celCounts.writes++
			var errs []*validation.Error
			if old == nil {
				errs = ours.Validate(obj)
			} else {
				errs = ours.ValidateUpdate(obj, old)
			}
			gotWrite := normalizeCEL(ourText(schema.ValidateRules(set, errs, obj, old)))
			if wantWrite := k.write(obj, old); !slices.Equal(gotWrite, wantWrite) {
				celCounts.mismatches++
				o, _ := json.Marshal(old)
				n, _ := json.Marshal(obj)
				t.Errorf("write of %s (old %s) under %s:\n got  %s\n want %s", n, o, schemaJSON,
					strings.Join(gotWrite, "\n      "), strings.Join(wantWrite, "\n      "))
			}
		}
		if !slices.Equal(got, want) {
			celCounts.mismatches++
			o, _ := json.Marshal(old)
			n, _ := json.Marshal(obj)
			t.Errorf("rules on %s (old %s) under %s:\n got  %s\n want %s", n, o, schemaJSON,
				strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
	}
	// Creates first, so that each object's create errors are kube's
	// answer of its create pair, not evaluated again for an update before
	// it (an evaluation at the cost limit takes seconds under -race).
	for _, obj := range stored {
		one(obj, nil)
	}
	for i, obj := range stored {
		next := stored[(i+1)%len(stored)]
		one(next, obj)
		one(obj, obj)
		one(mix(obj, next), obj)
	}
	return true
}

// ruleCases are hand-written schemas with rules, each with objects.
var ruleCases = []struct {
	name, spec string
	objects    [][]byte
}{
	{"cross-field", `{"type":"object","properties":{"min":{"type":"integer"},"max":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"!has(self.min) || !has(self.max) || self.min <= self.max","message":"min must not exceed max"}]}`,
		objs(`{"min":1,"max":2}`, `{"min":3,"max":2}`, `{"min":5}`, `{}`)},
	{"default message", `{"type":"object","properties":{"a":{"type":"string","maxLength":10}},"x-kubernetes-validations":[{"rule":"self.a.startsWith('x')"}]}`,
		objs(`{"a":"xy"}`, `{"a":"yy"}`, `{}`)},
	{"reasons and field paths", `{"type":"object","properties":{"a":{"type":"string","maxLength":10},"m":{"type":"object","additionalProperties":{"type":"string","maxLength":5},"maxProperties":4}},"x-kubernetes-validations":[
		{"rule":"self.a != 'forbidden'","reason":"FieldValueForbidden","fieldPath":".a","message":"a may not be forbidden"},
		{"rule":"has(self.a)","reason":"FieldValueRequired","message":"a is required"},
		{"rule":"!has(self.m) || size(self.m) < 3","reason":"FieldValueDuplicate","fieldPath":".m"},
		{"rule":"!has(self.m) || !('k' in self.m) || self.m.k != 'v'","fieldPath":".m['k']","message":"m.k must not be v"}]}`,
		objs(`{"a":"forbidden"}`, `{}`, `{"a":"b","m":{"k":"v","x":"y","z":"w"}}`, `{"a":"ok","m":{"k":"w"}}`)},
	{"messageExpression", `{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string","maxLength":20}},"x-kubernetes-validations":[
		{"rule":"self.n < 10","messageExpression":"'n is ' + string(self.n) + ', want below 10'"},
		{"rule":"self.n > 0","messageExpression":"self.s"},
		{"rule":"self.n != 5","messageExpression":"''","message":"n must not be five"}]}`,
		objs(`{"n":3,"s":"x"}`, `{"n":12,"s":"hello"}`, `{"n":-1,"s":"s is the message"}`, `{"n":-1,"s":"  "}`, `{"n":5,"s":"a"}`, `{"n":0}`)},
	{"oldSelf in a messageExpression only", `{"type":"object","properties":{"n":{"type":"integer"}},
		"x-kubernetes-validations":[{"rule":"self.n < 5","message":"n below 5","messageExpression":"'n was ' + (oldSelf.n > 3 ? 'big' : 'small')"}]}`,
		objs(`{"n":7}`, `{"n":9}`, `{"n":1}`)},
	{"transition rules", `{"type":"object","properties":{"class":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf","message":"class is immutable"}]},
		"size":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf","message":"size may only grow"}]},
		"opt":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"oldSelf.hasValue() ? self == oldSelf.value() : self == 'initial'","optionalOldSelf":true,"message":"opt starts as initial and never changes"}]}}}`,
		objs(`{"class":"a","size":3,"opt":"initial"}`, `{"class":"b","size":2,"opt":"other"}`, `{"class":"a","size":4}`, `{"opt":"x"}`)},
	{"ratcheting", `{"type":"object","properties":{"name":{"type":"string","maxLength":20,"x-kubernetes-validations":[{"rule":"self.size() <= 3","message":"too long"}]},"other":{"type":"integer"}}}`,
		objs(`{"name":"abcdef","other":1}`, `{"name":"abcdef","other":2}`, `{"name":"ab"}`, `{"name":"abcdefg"}`)},
	{"map list items", `{"type":"object","properties":{"ports":{"type":"array","maxItems":8,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":10},"port":{"type":"integer"}},
		"x-kubernetes-validations":[{"rule":"self.port > 0","message":"port must be positive"},{"rule":"self.port == oldSelf.port","message":"port is immutable"}]}}}}`,
		objs(`{"ports":[{"name":"a","port":1},{"name":"b","port":0}]}`, `{"ports":[{"name":"b","port":0},{"name":"a","port":2}]}`, `{"ports":[{"name":"c","port":-1}]}`)},
	{"set and map list equality", `{"type":"object","properties":{
		"s":{"type":"array","maxItems":5,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":5}},
		"t":{"type":"array","maxItems":5,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":5}},
		"m":{"type":"array","maxItems":5,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":5},"v":{"type":"integer"}}}}},
		"x-kubernetes-validations":[{"rule":"!has(self.s) || !has(self.t) || self.s == self.t","message":"s and t differ"},
		{"rule":"!has(self.s) || (self.s + ['z']).size() <= 3","message":"union too big"},
		{"rule":"!has(self.m) || self.m == oldSelf.m","message":"m changed"},
		{"rule":"!has(self.m) || (self.m + [{'k': 'a', 'v': 9}]).size() <= 2","message":"merged map list too big"}]}`,
		objs(`{"s":["a","b"],"t":["b","a"]}`, `{"s":["a","b"],"t":["a","c"]}`, `{"s":["z","y"],"m":[{"k":"a","v":1},{"k":"b","v":2}]}`, `{"m":[{"k":"b","v":2},{"k":"a","v":1}]}`, `{"m":[{"k":"b","v":2},{"k":"c","v":1}]}`)},
	{"int-or-string and formats", `{"type":"object","properties":{
		"ios":{"x-kubernetes-int-or-string":true,"maxLength":10},
		"d":{"type":"string","format":"duration","maxLength":20},
		"t":{"type":"string","format":"date-time","maxLength":40},
		"b":{"type":"string","format":"byte","maxLength":40}},
		"x-kubernetes-validations":[{"rule":"!has(self.ios) || type(self.ios) == int ? true : self.ios.endsWith('%')","message":"a string must be a percentage"},
		{"rule":"!has(self.d) || self.d < duration('1h')","message":"d under an hour"},
		{"rule":"!has(self.t) || self.t > timestamp('2020-01-01T00:00:00Z')","message":"t after 2020"},
		{"rule":"!has(self.b) || size(self.b) < 4","message":"b is short"}]}`,
		objs(`{"ios":3}`, `{"ios":"50%"}`, `{"ios":"50"}`, `{"d":"30m","t":"2021-05-01T10:00:00Z","b":"YWI="}`, `{"d":"2h","t":"2019-05-01T10:00:00Z","b":"YWJjZGVm"}`)},
	{"duration and date-time forms", `{"type":"object","properties":{"d":{"type":"string","format":"duration","maxLength":20},"t":{"type":"string","format":"date-time","maxLength":40},"day":{"type":"string","format":"date","maxLength":20}},
		"x-kubernetes-validations":[{"rule":"!has(self.d) || self.d < duration('48h')","messageExpression":"self.d > duration('100h') ? 'd over 100h' : 'd over 48h'"},
		{"rule":"!has(self.t) || self.t < timestamp('2022-01-01T00:00:00Z')","messageExpression":"self.t.getFullYear() > 2022 ? 't after 2022' : 't in 2022'"},
		{"rule":"!has(self.day) || self.day.getDayOfWeek() != 0","message":"not on Sundays"}]}`,
		objs(`{"d":"3 days"}`, `{"d":"1h30m"}`, `{"d":"2 weeks 1 hour"}`, `{"d":"5 seconds"}`, `{"d":"bogus"}`, `{"d":"10 minutes"}`,
			`{"t":"2021-05-01T10:00:00"}`, `{"t":"2021-05-01T10:00:00.123Z"}`, `{"t":""}`, `{"t":"2023-05-01T10:00:00.123456+02:00"}`, `{"t":"2021-05-01"}`,
			`{"day":"2024-06-02"}`, `{"day":"2024-06-03"}`, `{"day":"June"}`)},
	{"byte strings", `{"type":"object","properties":{"b":{"type":"string","format":"byte","maxLength":40}},
		"x-kubernetes-validations":[{"rule":"size(self.b) < 3","message":"short"}]}`,
		objs(`{"b":"YWI="}`, `{"b":"YWJjZA=="}`, `{"b":"+/8="}`, `{"b":"-_8="}`, `{"b":"YWJj"}`, `{"b":"YW"}`, `{"b":"!!"}`)},
	{"libraries", `{"type":"object","properties":{
		"l":{"type":"array","maxItems":10,"items":{"type":"integer"}},
		"h":{"type":"string","maxLength":64},
		"names":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":63}}},
		"x-kubernetes-validations":[{"rule":"!has(self.l) || self.l.isSorted()","message":"l sorted"},
		{"rule":"!has(self.l) || self.l.size() == 0 || self.l.sum() < 100","message":"l sums below 100"},
		{"rule":"!has(self.l) || self.l.size() == 0 || self.l.max() - self.l.min() < 50","message":"l spans under 50"},
		{"rule":"!has(self.l) || self.l.indexOf(7) == self.l.lastIndexOf(7)","message":"7 at most once"},
		{"rule":"!has(self.h) || !isIP(self.h)","message":"h is a name"},
		{"rule":"!has(self.h) || self.h.find('[0-9]+') != '13'","message":"no 13"},
		{"rule":"!has(self.h) || self.h.findAll('a').size() < 3","message":"few a"},
		{"rule":"!has(self.names) || self.names.all(n, !format.dns1123Label().validate(n).hasValue())","message":"names are labels"},
		{"rule":"!has(self.h) || self.h.lowerAscii() == self.h","message":"h lower case"},
		{"rule":"!has(self.h) || self.h.split('.').size() < 4","message":"h has few dots"},
		{"rule":"!has(self.names) || self.names.all(i, n, i < 3 || n != 'x')","message":"no late x"},
		{"rule":"!has(self.names) || sets.contains(['a','b','c','x'], self.names)","message":"names from the set"}]}`,
		objs(`{"l":[1,2,3],"h":"example.com","names":["a","b"]}`, `{"l":[3,1,7,7],"h":"10.1.2.3","names":["A_b"]}`, `{"l":[90,20],"h":"aaaa13.B","names":["a","b","c","x"]}`, `{"l":[],"h":"::1"}`)},
	{"url, ip, cidr and quantity", `{"type":"object","properties":{
		"u":{"type":"string","maxLength":100},"ip":{"type":"string","maxLength":50},"net":{"type":"string","maxLength":50},"mem":{"type":"string","maxLength":20}},
		"x-kubernetes-validations":[{"rule":"!has(self.u) || isURL(self.u)","message":"u is a URL"},
		{"rule":"!has(self.u) || !isURL(self.u) || url(self.u).getScheme() == 'https'","message":"https only"},
		{"rule":"!has(self.u) || !isURL(self.u) || url(self.u).getHostname() != 'localhost' && url(self.u).getPort() != '8080'","message":"no local 8080"},
		{"rule":"!has(self.u) || !isURL(self.u) || !('debug' in url(self.u).getQuery())","messageExpression":"url(self.u).getEscapedPath() == '/p' ? 'no debug on /p' : 'no debug'"},
		{"rule":"!has(self.ip) || ip(self.ip).family() == 4","message":"IPv4 only"},
		{"rule":"!has(self.ip) || !isIP(self.ip) || !ip(self.ip).isLoopback()","message":"no loopback"},
		{"rule":"!has(self.ip) || !isIP(self.ip) || ip.isCanonical(self.ip)","message":"canonical"},
		{"rule":"!has(self.net) || !has(self.ip) || !isCIDR(self.net) || !isIP(self.ip) || cidr(self.net).containsIP(self.ip)","message":"ip in net"},
		{"rule":"!has(self.net) || !isCIDR(self.net) || cidr(self.net).prefixLength() >= 8 && cidr(self.net).containsCIDR(cidr(self.net).masked()) && cidr(self.net).containsCIDR(self.net)","message":"net at least /8"},
		{"rule":"!has(self.net) || !isCIDR(self.net) || cidr(self.net) == cidr(self.net).masked()","message":"net is masked"},
		{"rule":"!has(self.mem) || quantity(self.mem).isLessThan(quantity('1Gi'))","message":"under 1Gi"},
		{"rule":"!has(self.mem) || !isQuantity(self.mem) || quantity(self.mem).add(quantity('1k')).sub(1000).compareTo(quantity(self.mem)) == 0","message":"arith"},
		{"rule":"!has(self.mem) || !isQuantity(self.mem) || quantity(self.mem).isInteger() && quantity(self.mem).asInteger() % 2 == 0","message":"even bytes"},
		{"rule":"!has(self.mem) || !isQuantity(self.mem) || quantity(self.mem).asApproximateFloat() > 0.5 && sign(quantity(self.mem)) == 1","message":"positive"}]}`,
		objs(`{"u":"https://example.com/a?x=1","ip":"10.0.0.1","net":"10.0.0.0/8","mem":"512Mi"}`,
			`{"u":"http://localhost:8080/p?debug=1","ip":"::1","net":"10.0.0.1/4","mem":"2Gi"}`,
			`{"u":"not a url","ip":"127.000.0.1","net":"bad","mem":"1.5"}`,
			`{"u":"/relative/path","ip":"2001:db8::0:1","net":"2001:db8::/32","mem":"100m"}`,
			`{"mem":"1e3"}`, `{"mem":"3Ki"}`, `{"mem":"-1"}`, `{"mem":"12x"}`, `{"mem":"0.1n"}`)},
	{"unbounded sizes from library functions", `{"type":"object","properties":{"u":{"type":"string","maxLength":100},"net":{"type":"string","maxLength":50}},
		"x-kubernetes-validations":[{"rule":"url(self.u).getScheme() == 'https'","messageExpression":"'no debug in ' + url(self.u).getEscapedPath()"},
		{"rule":"cidr(self.net).containsCIDR(string(cidr(self.net).masked()))"}]}`, nil},
	{"named formats", `{"type":"object","properties":{"v":{"type":"string","maxLength":300}},
		"x-kubernetes-validations":[
		{"rule":"!format.dns1123Label().validate(self.v).hasValue()","messageExpression":"'dns1123Label: ' + format.dns1123Label().validate(self.v).value()[0]"},
		{"rule":"!format.dns1123Subdomain().validate(self.v).hasValue()","messageExpression":"'dns1123Subdomain: ' + format.dns1123Subdomain().validate(self.v).value()[0]"},
		{"rule":"!format.dns1035Label().validate(self.v).hasValue()","messageExpression":"'dns1035Label: ' + format.dns1035Label().validate(self.v).value()[0]"},
		{"rule":"!format.qualifiedName().validate(self.v).hasValue()","messageExpression":"'qualifiedName: ' + format.qualifiedName().validate(self.v).value()[0]"},
		{"rule":"!format.labelValue().validate(self.v).hasValue()","messageExpression":"'labelValue: ' + format.labelValue().validate(self.v).value()[0]"},
		{"rule":"!format.dns1123LabelPrefix().validate(self.v).hasValue()","message":"dns1123LabelPrefix"},
		{"rule":"!format.uri().validate(self.v).hasValue()","messageExpression":"'uri: ' + format.uri().validate(self.v).value()[0]"},
		{"rule":"!format.uuid().validate(self.v).hasValue()","messageExpression":"'uuid: ' + format.uuid().validate(self.v).value()[0]"},
		{"rule":"!format.byte().validate(self.v).hasValue()","message":"byte"},
		{"rule":"!format.date().validate(self.v).hasValue()","message":"date"},
		{"rule":"!format.datetime().validate(self.v).hasValue()","message":"datetime"},
		{"rule":"format.named(self.v).hasValue() || self.v.size() > 0","message":"named"},
		{"rule":"!format.named('labelValue').hasValue() || format.named('labelValue').value() == format.labelValue()","message":"named equal"}]}`,
		objs(`{"v":"my-name"}`, `{"v":"My.Name"}`, `{"v":"a.b-"}`, `{"v":"example.com/x"}`, `{"v":"/x"}`, `{"v":"a/b/c"}`, `{"v":"https://x/y"}`,
			`{"v":"0a1b2c3d-0000-4000-8000-123456789abc"}`, `{"v":"YWJj"}`, `{"v":"2024-01-02"}`, `{"v":"2024-01-02T03:04:05Z"}`, `{"v":""}`,
			`{"v":"`+strings.Repeat("a", 70)+`"}`, `{"v":"`+strings.Repeat("a", 64)+`.example.com/`+strings.Repeat("b", 64)+`"}`, `{"v":"1abc"}`)},
	{"semver", `{"type":"object","properties":{"v":{"type":"string","maxLength":40},"w":{"type":"string","maxLength":40}},
		"x-kubernetes-validations":[
		{"rule":"isSemver(self.v)","message":"strict"},
		{"rule":"isSemver(self.v, true)","message":"loose"},
		{"rule":"semver(self.v, true).major() < 2 && semver(self.v, true).minor() < 5 && semver(self.v, true).patch() < 9","message":"small"},
		{"rule":"!has(self.w) || semver(self.v, true).isLessThan(semver(self.w, true)) || semver(self.v, true) == semver(self.w, true)","message":"v at most w"},
		{"rule":"!has(self.w) || semver(self.v).compareTo(semver(self.w)) != 1","message":"compare"},
		{"rule":"!has(self.w) || !semver(self.v, true).isGreaterThan(semver(self.w, true))","message":"greater"}]}`,
		objs(`{"v":"1.2.3"}`, `{"v":"v1.2"}`, `{"v":"01.02.03","w":"1.2.3-alpha"}`, `{"v":"1.2.3-alpha.1","w":"1.2.3-alpha.beta"}`, `{"v":"1.2.3-beta","w":"1.2.3-alpha.1"}`,
			`{"v":"1.2.3+build.5","w":"1.2.3"}`, `{"v":"1.2.3-01"}`, `{"v":"1.2"}`, `{"v":"x.y.z"}`, `{"v":""}`, `{"v":"3.0.0-rc.1","w":"3.0.0"}`, `{"v":"1.2-beta"}`, `{"v":"1.2.3-a..b"}`, `{"v":"1.2.3+"}`)},
	{"escaped names and metadata", `{"type":"object","properties":{"x-y":{"type":"integer"},"namespace":{"type":"string","maxLength":10},"a.b":{"type":"integer"}},
		"x-kubernetes-validations":[{"rule":"!has(self.x__dash__y) || self.x__dash__y > 0","message":"x-y positive"},
		{"rule":"!has(self.__namespace__) || self.namespace != 'kube-system'","message":"not kube-system"},
		{"rule":"!has(self.a__dot__b) || self.a__dot__b < 5","message":"a.b small"}]}`,
		objs(`{"x-y":1,"namespace":"ns","a.b":1}`, `{"x-y":0,"namespace":"kube-system","a.b":9}`)},
	{"embedded resource", `{"type":"object","properties":{"template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
		"x-kubernetes-validations":[{"rule":"self.kind == 'ConfigMap'","message":"only ConfigMaps"},{"rule":"self.metadata.name.startsWith('cm-')","message":"names start with cm-"}]}}}`,
		objs(`{"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-a"}}}`, `{"template":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}}`)},
	{"runtime errors", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"},"maxProperties":5},"l":{"type":"array","maxItems":5,"items":{"type":"integer"}}},
		"x-kubernetes-validations":[{"rule":"self.m['missing'] > 0","message":"missing key"},{"rule":"self.l[3] > 0"},{"rule":"1 / (size(self.l) - 2) > 0"}]}`,
		objs(`{"m":{"a":1},"l":[1,2]}`, `{"m":{"missing":1},"l":[1,2,3,4]}`)},
	{"runtime cost limits", `{"type":"object","properties":{"l":{"type":"array","maxItems":100,"items":{"type":"integer"}}},
		"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))","message":"sums"},{"rule":"size(self.l) < 1000"}]}`,
		objs(`{"l":[1,2,3]}`, `{"l":[`+strings.Repeat("1,", 99)+`1]}`)},
	{"rules blocked by schema errors", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","maxLength":3},"b":{"type":"string","enum":["x","y"]},"n":{"type":"integer","minimum":0},"l":{"type":"array","maxItems":2,"items":{"type":"integer"}}},
		"x-kubernetes-validations":[{"rule":"!has(self.n) || self.n != -1","message":"n is not -1"},{"rule":"!has(self.a) || self.a != 'ab'","message":"a is not ab"}]}`,
		objs(`{}`, `{"a":"toolong"}`, `{"a":"ab","b":"zz"}`, `{"a":"ab","n":-1}`, `{"a":"ab","l":[1,2,3]}`, `{"a":1}`, `{"a":"ok","n":-1}`)},
	{"compile errors", `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.b > 0"}]}`, nil},
	{"not a bool", `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.a"}]}`, nil},
	{"bad messageExpression", `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.a > 0","messageExpression":"self.a"}]}`, nil},
	{"bad syntax", `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.a >"}]}`, nil},
	{"type mismatch", `{"type":"object","properties":{"a":{"type":"integer"},"s":{"type":"string"}},"x-kubernetes-validations":[{"rule":"self.a == self.s"}]}`, nil},
	{"object type in message", `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"integer"}}}},"x-kubernetes-validations":[{"rule":"self.o + 1 > 0"}]}`, nil},
	{"too expensive", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}},"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, x != y + 'a'))"}]}`, nil},
	{"slightly too expensive", `{"type":"object","properties":{"l":{"type":"array","maxItems":2000,"items":{"type":"string","maxLength":100}}},"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, x.size() + y.size() > 0))"}]}`, nil},
	{"total too expensive", `{"type":"object","properties":{"l":{"type":"array","maxItems":100,"items":{"type":"object","properties":{"m":{"type":"array","maxItems":200,"items":{"type":"string","maxLength":300}}},
		"x-kubernetes-validations":[{"rule":"self.m.all(x, x.matches('^a.*b$'))"},{"rule":"self.m.all(x, x.contains('zz'))"}]}}}}`, nil},
	{"oldSelf under a list", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer","x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}`, nil},
	{"optionalOldSelf without oldSelf", `{"type":"object","properties":{"a":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0","optionalOldSelf":true}]}}}`, nil},
	{"unknown function", `{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-validations":[{"rule":"self.a.frobnicate()"}]}`, nil},
}

func TestRuleCases(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			objects := c.objects
			if objects == nil {
				objects = objs(`{}`)
			}
			compareRules(t, []byte(wrap(c.spec)), objects)
		})
	}
}

func TestRealCRDRules(t *testing.T) {
	objects := 30
	if testing.Short() || race.Enabled {
		objects = 4
	}
	for _, m := range crdModules {
		dir := filepath.Join(moduleDir(t, m.module), m.dir)
		for i, c := range crdSchemas(t, dir) {
			if !strings.Contains(string(c.schema), "x-kubernetes-validations") {
				continue
			}
			t.Run(strings.Split(m.module, "@")[0]+"/"+c.name, func(t *testing.T) {
				var root map[string]any
				if err := json.Unmarshal(c.schema, &root); err != nil {
					t.Fatal(err)
				}
				src := randSource{rand.New(rand.NewPCG(uint64(i), 11))}
				var list [][]byte
				for j := range objects {
					if j%3 != 2 {
						list = append(list, genObject(conforming{src}, root))
					} else {
						list = append(list, genObject(src, root))
					}
				}
				if !compareRules(t, c.schema, list) {
					t.Errorf("%s is refused", c.name)
				}
			})
		}
	}
}

// fuzzRuleSchema is the schema FuzzRules puts a rule on: one field of
// each kind a rule meets.
const fuzzRuleSchema = `{"type":"object","properties":{
	"i":{"type":"integer"},"n":{"type":"number"},"s":{"type":"string","maxLength":32},"b":{"type":"boolean"},
	"l":{"type":"array","maxItems":8,"items":{"type":"integer"}},
	"set":{"type":"array","maxItems":8,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":8}},
	"m":{"type":"object","maxProperties":8,"additionalProperties":{"type":"string","maxLength":8}},
	"o":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string","maxLength":8}}},
	"ios":{"x-kubernetes-int-or-string":true,"maxLength":8}},
	"x-kubernetes-validations":[{"rule":%s,"message":"the fuzzed rule"%s}]}`

// FuzzRules compiles a rule (and, as its bytes say, a messageExpression)
// on a fixed schema with both engines, and evaluates it on an object and
// an update.
func FuzzRules(f *testing.F) {
	seeds := []struct{ rule, message, obj, old string }{
		{"self.i > 0", "", `{"i":1}`, `{"i":2}`},
		{"self.s.startsWith('a') || self.l.exists(x, x > 3)", "'got ' + self.s", `{"s":"b","l":[1,5]}`, ``},
		{"self.set == oldSelf.set", "", `{"set":["a","b"]}`, `{"set":["b","a"]}`},
		{"self.m.all(k, self.m[k].size() < 3)", "", `{"m":{"a":"xyz"}}`, ``},
		{"has(self.o.x) && self.o.x == 1", "", `{"o":{"y":"a"}}`, ``},
		{"self.n / 0.0 > 1.0", "", `{"n":1}`, ``},
		{"int(self.s) > 1", "", `{"s":"x"}`, ``},
		{"self.ios == 3 || self.ios == '3'", "", `{"ios":"4"}`, `{"ios":4}`},
		{"self.l.sum() > 1 && self.l.isSorted()", "", `{"l":[3,1]}`, ``},
		{"self.s.matches('^[a-z]+$')", "self.s + ' is not lower case'", `{"s":"aB"}`, ``},
		{"self.i == oldSelf.i", "", `{"i":1}`, `{"i":1}`},
	}
	for _, s := range seeds {
		f.Add(s.rule, s.message, []byte(s.obj), []byte(s.old))
	}
	f.Fuzz(func(t *testing.T, rule, message string, obj, old []byte) {
		if len(rule) > 200 || len(message) > 100 || strings.ContainsAny(rule+message, "\r\n") || strings.TrimSpace(rule) == "" {
			return
		}
		r, _ := json.Marshal(rule)
		extra := ""
		if strings.TrimSpace(message) != "" {
			m, _ := json.Marshal(message)
			extra = `,"messageExpression":` + string(m)
		}
		schemaJSON := []byte(fmt.Sprintf(fuzzRuleSchema, r, extra))
		o, err := schema.DecodeJSON(obj)
		if err != nil {
			return
		}
		if _, isMap := o.(map[string]any); !isMap {
			return
		}
		objects := [][]byte{obj}
		if p, err := schema.DecodeJSON(old); err == nil {
			if _, isMap := p.(map[string]any); isMap {
				objects = append(objects, old)
			}
		}
		compareRules(t, schemaJSON, objects)
	})
}

func init() {
	reportCEL = func() {
		if celCounts.triples > 0 || celCounts.schemas > 0 {
			fmt.Printf("schemadiff CEL: %d schemas with rules checked (%d refused), %d (schema, old, new) triples compared (%d failing a rule, %d with errors ratcheted away; %d also as whole writes), %d mismatches\n",
				celCounts.schemas, celCounts.refused, celCounts.triples, celCounts.failing, celCounts.ratcheted, celCounts.writes, celCounts.mismatches)
		}
	}
}
