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
// The environment has CEL's standard functions with its strings, lists and
// sets extensions, and compares numbers across int and double; it lacks the
// Kubernetes-specific libraries of kube-apiserver (quantity, url, ip). Each
// evaluation is limited to a cost of 1,000,000, kube-apiserver's limit for
// one expression.
//
// # Use
//
//	engine, err := cel.New()
//	srv, err := apiserver.New(apiserver.WithRuleEngine(engine))
//
// A failed rule is a 422 cause worded as a CRD's: the rule's message, or
// "failed rule: RULE".
package cel
