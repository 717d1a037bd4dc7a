// Package cel evaluates the rule tags of package validation as CEL, the
// language of a CustomResourceDefinition's x-kubernetes-validations. It is
// a module of its own so that kapi's root module does not require cel-go.
//
// # Rules
//
// A field's rule tag is an expression that must hold of the field's value,
// self, in its JSON form: an object is a map, a list a list, a number an
// int or a double. A rule that reads oldSelf is a transition rule: it runs
// on updates only, with oldSelf the value before the update, as a CRD's:
//
//	type ReplicaRange struct {
//		Min int32 `json:"min"`
//		Max int32 `json:"max"`
//	}
//
//	type Spec struct {
//		Range ReplicaRange `json:"range" rule:"self.min <= self.max" ruleMessage:"min must not exceed max"`
//		Class string       `json:"class" rule:"self == oldSelf" ruleMessage:"class is immutable"`
//	}
//
// The environment of rule tags has CEL's standard functions with its
// strings, lists and sets extensions, and compares numbers across int and
// double. Each evaluation is limited to a cost of 1,000,000,
// kube-apiserver's limit for one expression.
//
// # Schemas
//
// Engine is also the schema.RuleCompiler of package schema: it compiles
// the x-kubernetes-validations rules of a CustomResourceDefinition's
// schema as apiextensions-apiserver does, and the differential test in
// internal/test/schemadiff holds it to that code (messages, field paths,
// cause types) on hand-written, generated and real rules (Gateway API's,
// cert-manager's). At each node with rules, self has the node's type
// derived from the schema: an object type with the declared properties
// (self.spec.replicas type-checks, self.spec.replicaz is a compile
// error), a map for additionalProperties, a list, or a scalar (a
// date-time string is a timestamp, a duration string a duration, a byte
// string bytes, int-or-string dyn); names CEL cannot spell are escaped as
// kube escapes them (x-y is x__dash__y). A resource (the root, an
// embedded one) also has apiVersion, kind and metadata.name and
// generateName.
//
// CheckRules is what kube-apiserver requires of a CRD's rules, with its
// messages under spec.validation.openAPIV3Schema...x-kubernetes-validations[i].rule:
// they compile to a bool (a messageExpression to a string), their
// estimated cost, from the schema's maxLength, maxItems and maxProperties
// and times the most times a rule may run, is within 10,000,000 each and
// 100,000,000 for the schema, oldSelf is read only where an old value can
// be found, and optionalOldSelf only by rules that read oldSelf.
//
// CompileRules compiles a schema's rules once; its Validate runs them on a
// write as kube-apiserver does: transition rules (those reading oldSelf)
// only on updates where the old value exists, unless optionalOldSelf
// makes oldSelf an optional; messageExpression, message, reason and
// fieldPath shape the error; each evaluation is limited to a cost of
// 1,000,000 and all those on one object to 10,000,000. On an update, a
// rule that does not read oldSelf and fails on a value the update left
// unchanged is no error (kube's CRDValidationRatcheting).
//
// The environment is CEL's with the extensions kube-apiserver enables
// (strings, sets, lists, two-variable comprehensions, optional types) and
// Kubernetes' own libraries written again here on the standard library:
// the list functions (isSorted, sum, min, max, indexOf, lastIndexOf),
// regex (find, findAll), url (url, isURL, getScheme...), ip and cidr
// (ip, isIP, cidr, containsIP...), quantity (quantity, isQuantity,
// isLessThan, add...), semver (semver, isSemver, major...) and named
// formats (format.dns1123Label() and the like, validate, format.named),
// with kube's cost for each. The authorizer and JSON patch libraries,
// admission policies' own, are not here: a rule calling them does not
// compile. Depending on
// k8s.io/apiserver's libraries instead would bring k8s.io/api,
// apimachinery and kube-openapi into every program using this module; the
// differential test is what keeps the two alike.
//
// # Use
//
//	engine, err := cel.New()
//	srv, err := apiserver.New(apiserver.WithRuleEngine(engine))
//
// The same engine serves kinds defined at run time: kinds.Register finds
// the schema.RuleCompiler by type assertion on the server's RuleEngine,
// compiles each kind's schema once with CompileRules, and runs the rules
// on every write after the schema's validation (schema.ValidateRules). A
// kind registered from Go can have its rules checked as a
// CustomResourceDefinition's are, failing registration:
//
//	kinds.Register(srv, def, kinds.WithRules(func(s *schema.Schema) (kinds.Rules, error) {
//		return engine.RulesFor(s)
//	}))
//
// A failed rule is a 422 cause worded as a CRD's: the rule's message, or
// "failed rule: RULE".
package cel
