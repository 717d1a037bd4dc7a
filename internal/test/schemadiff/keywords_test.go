package schemadiff_test

import (
	"testing"
)

// wrap puts a spec schema into a root schema as a CRD has it.
func wrap(spec string) string {
	return `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},"spec":` + spec + `}}`
}

// objs makes objects whose spec is each of specs.
func objs(specs ...string) [][]byte {
	out := make([][]byte, len(specs))
	for i, s := range specs {
		out[i] = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":` + s + `}`)
	}
	return out
}

// keywordCases are hand-written (schema, objects) cases, per keyword.
var keywordCases = []struct {
	name, spec string
	objects    [][]byte
}{
	{"type string", `{"type":"string"}`, objs(`"a"`, `1`, `1.5`, `true`, `null`, `[]`, `{}`)},
	{"type integer", `{"type":"integer"}`, objs(`1`, `1.0`, `1.5`, `"1"`, `true`, `null`, `[1]`, `{"a":1}`, `9007199254740993`, `1e20`)},
	{"type number", `{"type":"number"}`, objs(`1`, `1.5`, `"1"`, `null`, `-0.0`)},
	{"type boolean", `{"type":"boolean"}`, objs(`true`, `"true"`, `0`)},
	{"type array", `{"type":"array","items":{"type":"string"}}`, objs(`[]`, `["a",1,null]`, `"a"`, `{}`)},
	{"type object", `{"type":"object","properties":{"a":{"type":"string"}}}`, objs(`{}`, `{"a":"x"}`, `{"a":1}`, `[]`, `"x"`, `{"b":1}`)},
	{"nullable", `{"type":"object","properties":{"a":{"type":"string","nullable":true},"b":{"type":"string"}}}`, objs(`{"a":null,"b":null}`, `{"a":null}`, `{"b":"x"}`)},
	{"format int32", `{"type":"integer","format":"int32"}`, objs(`1`, `2147483648`, `-2147483649`, `1.5`, `"x"`, `true`)},
	{"format int64", `{"type":"integer","format":"int64"}`, objs(`1`, `1.0`, `true`)},
	{"format float", `{"type":"number","format":"float"}`, objs(`1.5`, `1e39`, `3`)},
	{"format double", `{"type":"number","format":"double"}`, objs(`1.5`, `1e300`)},
	{"format unknown dropped", `{"type":"string","format":"bogus"}`, objs(`"a"`)},
	{"format on integer dropped", `{"type":"integer","format":"date"}`, objs(`1`, `"x"`)},
	{"format date-time", `{"type":"string","format":"date-time"}`, objs(`"2024-01-02T03:04:05Z"`, `"2024-01-02T25:04:05Z"`, `"2024-01-02"`, `"x"`, `1`)},
	{"format date", `{"type":"string","format":"date"}`, objs(`"2024-01-02"`, `"2024-13-02"`)},
	{"format datetime", `{"type":"string","format":"datetime"}`, objs(`"2024-01-02T03:04:05.5+01:00"`, `"nope"`)},
	{"format byte", `{"type":"string","format":"byte"}`, objs(`"aGVsbG8="`, `"!!"`)},
	{"format ipv4", `{"type":"string","format":"ipv4"}`, objs(`"10.0.0.1"`, `"010.0.0.1"`, `"::1"`, `"x"`)},
	{"format ipv6", `{"type":"string","format":"ipv6"}`, objs(`"::1"`, `"10.0.0.1"`)},
	{"format cidr", `{"type":"string","format":"cidr"}`, objs(`"10.0.0.0/8"`, `"10.0.0.0"`, `"::/0"`)},
	{"format mac", `{"type":"string","format":"mac"}`, objs(`"01:23:45:67:89:ab"`, `"x"`)},
	{"format uuid", `{"type":"string","format":"uuid"}`, objs(`"123e4567-e89b-12d3-a456-426614174000"`, `"x"`)},
	{"format uuid3", `{"type":"string","format":"uuid3"}`, objs(`"123e4567-e89b-32d3-a456-426614174000"`, `"123e4567-e89b-12d3-a456-426614174000"`)},
	{"format uuid4", `{"type":"string","format":"uuid4"}`, objs(`"123e4567-e89b-42d3-a456-426614174000"`, `"123e4567-e89b-42d3-c456-426614174000"`)},
	{"format uuid5", `{"type":"string","format":"uuid5"}`, objs(`"123e4567-e89b-52d3-8456-426614174000"`, `"x"`)},
	{"format hostname", `{"type":"string","format":"hostname"}`, objs(`"example.com"`, `"-x"`, `"a_b"`)},
	{"format email", `{"type":"string","format":"email"}`, objs(`"a@example.com"`, `"x"`)},
	{"format uri", `{"type":"string","format":"uri"}`, objs(`"https://example.com/x"`, `"x"`, `"/path"`)},
	{"format duration", `{"type":"string","format":"duration"}`, objs(`"1h"`, `"3 days"`, `"x"`, `"5 parsecs"`)},
	{"format isbn", `{"type":"string","format":"isbn"}`, objs(`"0321751043"`, `"978-0321751041"`, `"123"`)},
	{"format creditcard", `{"type":"string","format":"creditcard"}`, objs(`"4111 1111 1111 1111"`, `"4111111111111112"`)},
	{"format ssn", `{"type":"string","format":"ssn"}`, objs(`"123-45-6789"`, `"123456789"`)},
	{"format hexcolor", `{"type":"string","format":"hexcolor"}`, objs(`"#fff"`, `"#ffff"`)},
	{"format rgbcolor", `{"type":"string","format":"rgbcolor"}`, objs(`"rgb(1, 2, 3)"`, `"rgb(256,0,0)"`)},
	{"format bsonobjectid", `{"type":"string","format":"bsonobjectid"}`, objs(`"507f1f77bcf86cd799439011"`, `"507f"`)},
	{"format k8s-short-name", `{"type":"string","format":"k8s-short-name"}`, objs(`"abc"`, `"Abc"`, `"a.b"`)},
	{"format k8s-long-name", `{"type":"string","format":"k8s-long-name"}`, objs(`"a.b"`, `"a..b"`)},
	{"format password", `{"type":"string","format":"password"}`, objs(`"x"`)},
	{"enum strings", `{"type":"string","enum":["red","green"]}`, objs(`"red"`, `"blue"`, `1`, `null`)},
	{"enum numbers", `{"type":"integer","enum":[1,2]}`, objs(`1`, `3`, `1.0`, `"1"`)},
	{"enum floats", `{"type":"number","enum":[1.5,2]}`, objs(`1.5`, `2`, `1.7`)},
	{"enum mixed", `{"x-kubernetes-preserve-unknown-fields":true,"enum":["a",1,true,{"b":1},[1]]}`, objs(`"a"`, `1`, `true`, `{"b":1}`, `[1]`, `false`, `{"b":2}`)},
	{"minimum", `{"type":"integer","minimum":0}`, objs(`0`, `-1`, `-0.5`)},
	{"exclusiveMinimum", `{"type":"integer","minimum":0,"exclusiveMinimum":true}`, objs(`0`, `1`)},
	{"maximum", `{"type":"number","maximum":10}`, objs(`10`, `10.5`, `11`)},
	{"exclusiveMaximum", `{"type":"number","maximum":10,"exclusiveMaximum":true}`, objs(`10`, `9.99`)},
	{"maximum large", `{"type":"number","maximum":1000000}`, objs(`1000001`, `1000000.5`)},
	{"minimum fraction on integer", `{"type":"integer","minimum":0.5}`, objs(`0`, `1`)},
	{"multipleOf", `{"type":"integer","multipleOf":3}`, objs(`9`, `10`, `0`)},
	{"multipleOf fraction", `{"type":"number","multipleOf":0.1}`, objs(`0.3`, `0.35`, `1`)},
	{"multipleOf number", `{"type":"number","multipleOf":2.5}`, objs(`5`, `6`, `7.5`)},
	{"minLength maxLength", `{"type":"string","minLength":2,"maxLength":3}`, objs(`"ab"`, `"a"`, `"abcd"`, `"äöü"`, `"äöüß"`)},
	{"maxLength 1", `{"type":"string","maxLength":1}`, objs(`"ab"`)},
	{"pattern", `{"type":"string","pattern":"^[a-z]+$"}`, objs(`"abc"`, `"ABC"`, `""`)},
	{"pattern and length", `{"type":"string","pattern":"^[a-z]+$","maxLength":2}`, objs(`"ABC"`, `"A"`)},
	{"minItems maxItems", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2}`, objs(`[]`, `[1]`, `[1,2,3]`)},
	{"maxItems 1", `{"type":"array","items":{"type":"integer"},"maxItems":1}`, objs(`[1,2]`)},
	{"minProperties maxProperties", `{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":2}`, objs(`{}`, `{"a":"x"}`, `{"a":"x","b":"y","c":"z"}`)},
	{"maxProperties 1", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"maxProperties":1}`, objs(`{"a":1,"b":2}`)},
	{"required", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`, objs(`{}`, `{"a":"x"}`, `{"a":"x","b":"y"}`)},
	{"required at root", ``, nil},
	{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer","minimum":1}}`, objs(`{"a":1,"b":0,"c":"x"}`)},
	{"additionalProperties true", `{"type":"object","additionalProperties":true}`, objs(`{"a":1,"b":{"c":1}}`)},
	{"additionalProperties false", `{"type":"object","additionalProperties":false}`, objs(`{"a":1}`, `{}`)},
	{"nested objects", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"integer"}}}}}}}}`,
		objs(`{"a":{"b":[{"c":1},{"c":"x"},{"d":1}]}}`, `{"a":{"b":[null]}}`)},
	{"int-or-string", `{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}`, objs(`1`, `"1"`, `1.5`, `true`, `null`, `[]`)},
	{"int-or-string pattern", `{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],"pattern":"^[0-9]+%$"}`, objs(`1`, `"10%"`, `"x"`)},
	{"int-or-string allOf", `{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"anyOf":[{"minimum":0},{"pattern":"^x"}]}]}`, objs(`1`, `-1`, `"xa"`, `"a"`)},
	{"int-or-string bare", `{"x-kubernetes-int-or-string":true}`, objs(`1`, `"a"`, `true`)},
	{"anyOf", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`, objs(`{"a":"x"}`, `{"b":1}`, `{}`)},
	{"anyOf best failure", `{"type":"string","anyOf":[{"maxLength":1},{"pattern":"^a","minLength":3}]}`, objs(`"ab"`, `"a"`, `"abc"`, `"bcd"`)},
	{"oneOf", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`, objs(`{"a":"x"}`, `{"a":"x","b":1}`, `{}`)},
	{"allOf", `{"type":"integer","allOf":[{"minimum":0},{"maximum":10}]}`, objs(`5`, `-1`, `11`)},
	{"allOf none", `{"type":"integer","allOf":[{"minimum":100},{"maximum":-10}]}`, objs(`5`)},
	{"not", `{"type":"string","not":{"enum":["x"]}}`, objs(`"x"`, `"y"`)},
	{"allOf nested properties", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}},"allOf":[{"properties":{"a":{"properties":{"b":{"maxLength":2}}}}}]}`,
		objs(`{"a":{"b":"abc"}}`, `{"a":{"b":"ab"}}`)},
	{"preserve unknown", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}`,
		objs(`{"x":1,"a":{"b":"y","c":2}}`)},
	{"preserve unknown list", `{"type":"array","x-kubernetes-preserve-unknown-fields":true,"items":{"type":"object","properties":{"a":{"type":"string"}}}}`,
		objs(`[{"a":"x","b":1}]`)},
	{"preserve unknown no type", `{"x-kubernetes-preserve-unknown-fields":true}`, objs(`1`, `{"a":[1,{"b":2}]}`, `null`)},
	{"embedded resource", `{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`,
		objs(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","foo":1},"spec":{}}`, `{"kind":"Pod"}`, `{"apiVersion":"a/b/c","kind":"Pod_x"}`,
			`{"apiVersion":"","kind":""}`, `{"apiVersion":1,"kind":true}`, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a/b","namespace":"Bad_NS"}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":".."}}`, `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"x%"}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{},"name":"","generation":0,"creationTimestamp":null}}`)},
	{"embedded resource with properties", `{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
		objs(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"a":"x","b":1},"status":{}}`)},
	{"list-type set", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}`, objs(`["a","b"]`, `["a","b","a","a"]`)},
	{"list-type set numbers", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"number"}}`, objs(`[1,1.0,2,2]`)},
	{"list-type map", `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"v":{"type":"integer"}}}}`,
		objs(`[{"name":"a"},{"name":"b"}]`, `[{"name":"a"},{"name":"a","v":1}]`, `[{"v":1},{"v":2}]`)},
	{"list-type map two keys", `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],"items":{"type":"object","required":["name","port"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}`,
		objs(`[{"name":"a","port":1},{"name":"a","port":2}]`, `[{"name":"a","port":1},{"name":"a","port":1}]`)},
	{"list-type atomic", `{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}}`, objs(`["a","a"]`)},
	{"map-type", `{"type":"object","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"string"}}}`, objs(`{"a":"x"}`)},
	{"default", `{"type":"object","properties":{"a":{"type":"string","default":"x"},"b":{"type":"integer","default":1},"c":{"type":"object","default":{},"properties":{"d":{"type":"string","default":"e"}}}}}`,
		objs(`{}`, `{"a":"y"}`, `{"a":null}`, `{"c":{"d":null}}`)},
	{"default nullable", `{"type":"object","properties":{"a":{"type":"string","nullable":true,"default":"x"}}}`, objs(`{}`, `{"a":null}`)},
	{"default under items", `{"type":"array","items":{"type":"object","properties":{"a":{"type":"string","default":"x"}}}}`, objs(`[{},{"a":"y"},null]`)},
	{"default items null", `{"type":"array","items":{"type":"string","default":"d"}}`, objs(`["a",null]`)},
	{"default additionalProperties", `{"type":"object","additionalProperties":{"type":"object","default":{"k":1},"properties":{"k":{"type":"integer","default":2}}}}`,
		objs(`{"a":{},"b":null}`)},
	{"default pruned", `{"type":"object","properties":{"a":{"type":"object","default":{"b":"x"},"properties":{"b":{"type":"string"}}}}}`, objs(`{}`)},
	{"null dropped", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"string"}}}}`, objs(`{"a":null,"b":[null]}`)},
	{"unknown fields", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}},"l":{"type":"array","items":{"type":"object"}}}}`,
		objs(`{"x":1,"a":{"y":2,"b":"z"},"l":[{"q":1},{}]}`)},
	{"metadata nested", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"x":{"type":"string"}}}}}`, objs(`{"metadata":{"x":"y","z":1}}`)},
	{"many errors", `{"type":"object","properties":{"a":{"type":"string","maxLength":1},"b":{"type":"integer","minimum":5},"c":{"type":"array","items":{"type":"string","enum":["x"]}}},"required":["d"]}`,
		objs(`{"a":"long","b":1,"c":["y","z",1]}`)},
}

func TestKeywords(t *testing.T) {
	for _, c := range keywordCases {
		if c.spec == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			compareSchema(t, []byte(wrap(c.spec)), c.objects)
		})
	}
}

// schemaCases are schemas a CustomResourceDefinition refuses (or accepts
// narrowly), for the check's messages.
var schemaCases = []struct{ name, schema string }{
	{"root not object", `{"type":"string"}`},
	{"root no type", `{"properties":{"a":{"type":"string"}}}`},
	{"root nullable", `{"type":"object","nullable":true}`},
	{"root additionalProperties", `{"type":"object","additionalProperties":{"type":"string"}}`},
	{"field without type", wrap(`{"properties":{"a":{}}}`)},
	{"items without type", wrap(`{"type":"array","items":{}}`)},
	{"array without items", wrap(`{"type":"array"}`)},
	{"items array", wrap(`{"type":"array","items":[{"type":"string"}]}`)},
	{"bad type", wrap(`{"type":"strin"}`)},
	{"null type", wrap(`{"type":"null"}`)},
	{"uniqueItems", wrap(`{"type":"array","items":{"type":"string"},"uniqueItems":true}`)},
	{"properties and additionalProperties", wrap(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`)},
	{"properties and additionalProperties false", wrap(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)},
	{"id", wrap(`{"type":"string","id":"x"}`)},
	{"$ref", wrap(`{"type":"string","$ref":"#/x"}`)},
	{"$schema", wrap(`{"type":"string","$schema":"x"}`)},
	{"patternProperties", wrap(`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`)},
	{"definitions", wrap(`{"type":"object","definitions":{"a":{"type":"string"}}}`)},
	{"dependencies", wrap(`{"type":"object","dependencies":{"a":["b"]}}`)},
	{"additionalItems", wrap(`{"type":"array","items":{"type":"string"},"additionalItems":false}`)},
	{"nested type", wrap(`{"type":"string","anyOf":[{"type":"string"}]}`)},
	{"nested default title description nullable", wrap(`{"type":"string","allOf":[{"default":"x","title":"t","description":"d","nullable":true}]}`)},
	{"nested extensions", wrap(`{"type":"object","oneOf":[{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-embedded-resource":true,"x-kubernetes-int-or-string":true,"x-kubernetes-map-type":"atomic"}]}`)},
	{"nested list extensions", wrap(`{"type":"array","items":{"type":"string"},"not":{"x-kubernetes-list-type":"set","x-kubernetes-list-map-keys":["a"]}}`)},
	{"nested validations", wrap(`{"type":"string","allOf":[{"x-kubernetes-validations":[{"rule":"self.size() > 1"}]}]}`)},
	{"nested additionalProperties", wrap(`{"type":"object","allOf":[{"additionalProperties":{"maxLength":1}}]}`)},
	{"nested metadata", wrap(`{"type":"object","properties":{"metadata":{"type":"object"}},"allOf":[{"properties":{"metadata":{"required":["a"]}}}]}`)},
	{"incomplete", wrap(`{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"properties":{"b":{"maxLength":1}}},{"required":["a"]}]}`)},
	{"incomplete at root", `{"type":"object","properties":{"spec":{"type":"object"}},"allOf":[{"properties":{"spec":{"properties":{"x":{"type":"string"}}},"status":{"minProperties":1}}}]}`},
	{"incomplete items", `{"type":"object","properties":{"spec":{"type":"object"}},"allOf":[{"properties":{"spec":{"items":{"maxLength":1}}}}]}`},
	{"metadata restricted", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":5},"labels":{"type":"object"}}}}}`},
	{"metadata name only", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":5},"generateName":{"type":"string"}}}}}`},
	{"metadata not object", `{"type":"object","properties":{"metadata":{"type":"string"}}}`},
	{"metadata description", `{"type":"object","properties":{"metadata":{"type":"object","description":"m"}}}`},
	{"metadata default", `{"type":"object","properties":{"metadata":{"type":"object","default":{}}}}`},
	{"kind not string", `{"type":"object","properties":{"kind":{"type":"integer"},"apiVersion":{"type":"object"}}}`},
	{"embedded not object", wrap(`{"type":"object","properties":{"e":{"x-kubernetes-embedded-resource":true,"type":"string"}}}`)},
	{"embedded no type", wrap(`{"type":"object","properties":{"e":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}`)},
	{"embedded no properties", wrap(`{"type":"object","properties":{"e":{"x-kubernetes-embedded-resource":true,"type":"object"}}}`)},
	{"embedded additionalProperties", wrap(`{"type":"object","properties":{"e":{"x-kubernetes-embedded-resource":true,"type":"object","additionalProperties":{"type":"string"}}}}`)},
	{"embedded kind", wrap(`{"type":"object","properties":{"e":{"x-kubernetes-embedded-resource":true,"type":"object","properties":{"kind":{"type":"integer"},"metadata":{"type":"string"}}}}}`)},
	{"int-or-string and preserve", wrap(`{"x-kubernetes-int-or-string":true,"x-kubernetes-preserve-unknown-fields":true}`)},
	{"int-or-string and embedded", wrap(`{"type":"object","x-kubernetes-int-or-string":true,"x-kubernetes-embedded-resource":true,"properties":{"a":{"type":"string"}}}`)},
	{"int-or-string other anyOf", wrap(`{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"string"},{"type":"integer"}]}`)},
	{"preserve false", wrap(`{"type":"object","x-kubernetes-preserve-unknown-fields":false}`)},
	{"map-type on string", wrap(`{"type":"string","x-kubernetes-map-type":"atomic"}`)},
	{"map-type bad", wrap(`{"type":"object","x-kubernetes-map-type":"bogus"}`)},
	{"list-type on object", wrap(`{"type":"object","x-kubernetes-list-type":"set"}`)},
	{"list-type no type", wrap(`{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-list-type":"set"}`)},
	{"list-type bad", wrap(`{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"bogus"}`)},
	{"list-type set of objects", wrap(`{"type":"array","items":{"type":"object"},"x-kubernetes-list-type":"set"}`)},
	{"list-type set of lists", wrap(`{"type":"array","items":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"},"x-kubernetes-list-type":"set"}`)},
	{"list-type set nullable items", wrap(`{"type":"array","items":{"type":"string","nullable":true},"x-kubernetes-list-type":"set"}`)},
	{"list-map-keys without type", wrap(`{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},"x-kubernetes-list-map-keys":["a"]}`)},
	{"list-map-keys with set", wrap(`{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set","x-kubernetes-list-map-keys":["a"]}`)},
	{"list-type map without keys", wrap(`{"type":"array","items":{"type":"object"},"x-kubernetes-list-type":"map"}`)},
	{"list-type map of strings", wrap(`{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a"]}`)},
	{"list-type map bad keys", wrap(`{"type":"array","items":{"type":"object","properties":{"a":{"type":"object"},"b":{"type":"string","nullable":true}}},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a","b","c","a"]}`)},
	{"validations messages", wrap(`{"type":"string","x-kubernetes-validations":[{"rule":""},{"rule":"self.size() > 1","message":" "},{"rule":"self.size() > 1","message":"a\nb"},{"rule":"self.size()\n > 1"},{"rule":"self.size() > 1","messageExpression":" "},{"rule":"self.size() > 1","reason":"Bogus"},{"rule":"self.size() > 1","fieldPath":" "}]}`)},
	{"default invalid", wrap(`{"type":"object","properties":{"a":{"type":"string","maxLength":1,"default":"xyz"},"b":{"type":"integer","default":"x"}}}`)},
	{"default unpruned", wrap(`{"type":"object","properties":{"a":{"type":"object","default":{"b":1,"c":2},"properties":{"b":{"type":"integer"}}}}}`)},
	{"default under additionalProperties", wrap(`{"type":"object","additionalProperties":{"type":"string","default":1}}`)},
	{"default embedded", wrap(`{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"apiVersion":1}}}}`)},
	{"default embedded kind", wrap(`{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"apiVersion":"v1"}}}}`)},
	{"default embedded metadata", wrap(`{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","default":"x"}}}}}}}`)},
	{"bad pattern", wrap(`{"type":"string","pattern":"a("}`)},
	{"default in apiVersion", `{"type":"object","properties":{"apiVersion":{"type":"string","default":"v1"}}}`},
	{"embedded inside metadata", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}}`},
}

func TestSchemas(t *testing.T) {
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			compareSchema(t, []byte(c.schema), objs(`{}`))
		})
	}
}

func TestWrapIsAcceptedByBoth(t *testing.T) {
	if !compareSchema(t, []byte(wrap(`{"type":"object"}`)), objs(`{}`)) {
		t.Fatal("the wrapper schema is refused")
	}
}
