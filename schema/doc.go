// Package schema is kapi's schema engine for kinds defined at run time: it
// reads the OpenAPI v3 schema of a CustomResourceDefinition version (an
// apiextensions.k8s.io/v1 JSONSchemaProps, its openAPIV3Schema) and does
// to objects what kube-apiserver does to custom resources with it —
// pruning, defaulting, validation — with Kubernetes' rules, cause types,
// field paths and messages. It works on objects decoded without a Go type
// (map[string]any, []any, string, bool, int64, float64, nil: what
// DecodeJSON makes, and what package patch decodes), so the kinds of
// CustomResourceDefinitions and kinds registered from configuration share
// it.
//
// # Reading a schema
//
// Parse (JSON) and FromValue (a decoded value, as a CustomResourceDefinition
// held without a Go type carries it) make a *Schema: every keyword of
// Kubernetes' JSONSchemaProps, x-kubernetes-* extensions and
// x-kubernetes-validations included. An unknown keyword is an error, as in
// a CustomResourceDefinition decoded strictly. A Schema is read-only once
// made and safe for concurrent use.
//
// # Checking a schema
//
// Check is what kube-apiserver requires of a CustomResourceDefinition's
// schema, with its messages: a structural schema (a type wherever a value
// is specified; allOf, anyOf, oneOf and not only restricting what
// properties and items specify; metadata restricted to name and
// generateName; the int-or-string, preserve-unknown-fields and
// embedded-resource rules), defaults that are pruned and valid, consistent
// list types, list-map keys and map types, and none of the keywords
// Kubernetes does not support (id, $ref, patternProperties, uniqueItems...).
//
//	spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields
//
// # Writing an object
//
// On a write, kube-apiserver prunes the object, defaults it, then
// validates it; so do Prune, SetDefaults and Validate:
//
//   - Prune drops the fields the schema does not specify and returns their
//     paths (kube-apiserver warns `unknown field "spec.foo"`, or refuses
//     them under fieldValidation=Strict). x-kubernetes-preserve-unknown-fields
//     keeps a subtree's unknown fields; an embedded resource
//     (x-kubernetes-embedded-resource) keeps its apiVersion and kind, and its
//     metadata keeps what an ObjectMeta holds. The object's own apiVersion,
//     kind and metadata are the request path's.
//   - SetDefaults sets the defaults of absent fields, and of null ones where
//     the schema does not allow null, nested defaults and those of list items
//     and map values included. Use the schema's PrunedDefaults copy, made
//     once, as kube-apiserver prunes defaults when it serves a
//     CustomResourceDefinition. kube-apiserver also defaults objects read
//     from storage; SetDefaults on a read does the same.
//   - Validate checks every keyword as apiextensions-apiserver has
//     kube-openapi check it, then the apiVersion, kind and metadata names of
//     embedded resources, then the uniqueness of list-type set and map items.
//
// # Errors
//
// Each failure is a validation.Error with kube-apiserver's cause type and
// words, so the request path turns them into the same 422 Invalid:
//
//	spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
//	spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"
//	spec.name: Too long: may not be more than 63 bytes
//	spec.ports[1]: Duplicate value: {"port":80}
//	<nil>: Invalid value: "": "spec.size" must validate at least one schema (anyOf)
//
// The quirks are Kubernetes' and kept on purpose, because clients and
// tests match these texts: kube-openapi names fields "in body", a type
// error shows the JSON type found as its value, anyOf, oneOf, allOf and not
// failures name no field (the nil path prints as <nil>), and a failing anyOf
// or oneOf reports the errors of the branch that matched best. Errors are
// sorted by field path, where kube-apiserver's order follows Go's random
// map order.
//
// # Merging
//
// At, Field, ListStrategy and MapStrategy give what server-side apply and
// strategic merge need per path: x-kubernetes-list-type (atomic, set, map)
// with its list-map keys, and x-kubernetes-map-type (granular, atomic).
//
// # Rules
//
// x-kubernetes-validations rules are parsed and their messages, reasons and
// field paths checked here (ValidFieldPath, FieldPath), but compiled and
// evaluated through RuleCompiler, whose CEL implementation lives in the
// validation/cel module so that this module does not require cel-go. The
// seam is two calls: CheckRules(s, path) when a CustomResourceDefinition
// is validated (after Check), and CompileRules(s) once per served schema,
// whose rules ValidateRules(rules, errs, obj, old) runs on every write
// after Validate or ValidateUpdate, as kube-apiserver does (not when
// their errors leave the object unfit for rules). The engine given to
// apiserver.WithRuleEngine (validation/cel's Engine) is also a
// RuleCompiler; package kinds finds it by type assertion. Correlate
// exposes the pairing of new and old values that ValidateUpdate ratchets
// with, so that rules ratchet alike.
//
// # Not here
//
// The metadata of an embedded resource is checked for its name,
// generateName and namespace, not its labels, annotations or owner
// references.
//
// # Updates
//
// ValidateUpdate is Validate with kube-apiserver's validation ratcheting:
// a value an update leaves as it was keeps no errors, so an object stored
// before its schema tightened can still be updated elsewhere.
//
// The differential test in internal/test/schemadiff holds every function here
// to k8s.io/apiextensions-apiserver's on hand-written, generated and
// real-world schemas and objects.
package schema
