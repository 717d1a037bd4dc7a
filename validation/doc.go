// Package validation reads the constraints a Go type declares on its fields
// in struct tags — enum, bounds, lengths, counts, pattern, format, required,
// defaults, immutability — and enforces them with Kubernetes' error types
// and words. Package apiserver compiles them when a resource is registered,
// applies them on every write and shows them in the OpenAPI schema, so that
// `kubectl explain` lists a field's enum and a client can check an object
// before sending it.
//
// # Tags
//
// The tags mirror kubebuilder's markers and Kubernetes' declarative
// validation tags (validation-gen's +k8s:...), as far as a struct tag can:
//
//	type WidgetSpec struct {
//		Color    string       `json:"color" validate:"required,enum=red;green;blue" description:"Color of the widget."`
//		Replicas *int32       `json:"replicas,omitempty" validate:"minimum=0" default:"1"`
//		Weight   float64      `json:"weight,omitempty" validate:"minimum=0,exclusiveMinimum"`
//		Name     string       `json:"name" validate:"maxLength=63,immutable" pattern:"^[a-z]([-a-z0-9]*[a-z0-9])?$"`
//		Address  string       `json:"address,omitempty" validate:"format=ipv4"`
//		Ports    []WidgetPort `json:"ports,omitempty" validate:"minItems=1,maxItems=8"`
//	}
//
// The validate tag is a comma-separated list of OpenAPI keywords:
//
//	keyword               applies to          kubebuilder marker
//	required, optional    any field           +required, +optional (+k8s:required, +k8s:optional)
//	enum=a;b;c            strings, numbers    +kubebuilder:validation:Enum=a;b;c (+k8s:enum)
//	minimum=N, maximum=N  numbers             +kubebuilder:validation:Minimum=N (+k8s:minimum)
//	exclusiveMinimum      with minimum        +kubebuilder:validation:ExclusiveMinimum=true
//	exclusiveMaximum      with maximum        +kubebuilder:validation:ExclusiveMaximum=true
//	minLength=N           strings             +kubebuilder:validation:MinLength=N
//	maxLength=N           strings             +kubebuilder:validation:MaxLength=N (+k8s:maxLength)
//	minItems=N            lists               +kubebuilder:validation:MinItems=N
//	maxItems=N            lists               +kubebuilder:validation:MaxItems=N (+k8s:maxItems)
//	format=F              strings             +kubebuilder:validation:Format=F (+k8s:format, other names)
//	immutable             any field           +kubebuilder:validation:XValidation:rule="self == oldSelf" (+k8s:immutable)
//	items:KEYWORD=V       lists of scalars    +kubebuilder:validation:items:Enum=a;b (+k8s:eachVal=+k8s:enum)
//
// The items: keywords (enum, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minLength, maxLength, format) constrain each item of a
// list of strings, numbers or booleans: validate:"maxItems=8,items:maxLength=63".
//
// Two constraints have tags of their own, because their values may hold
// commas: pattern (a Go regular expression, +kubebuilder:validation:Pattern)
// and default (+kubebuilder:default). A default is JSON, except for a
// string field, where it is the string itself: default:"TCP", default:"1",
// default:"{\"a\":1}". The description tag, which package apiserver already
// reads, describes the field.
//
// Formats checked: byte, cidr, date, date-time, email, hostname, ipv4, ipv6,
// mac, password, uri, uuid — those of a CustomResourceDefinition's schema an
// API commonly needs, parsed as a CRD parses them.
//
// Every tag is parsed once, by For (apiserver.Register calls it): an
// unknown keyword, a keyword on a type it does not apply to, an empty or
// contradictory range, a bad pattern, an unknown format, or a default that
// fails the field's own checks is an error naming the field.
//
// # What "not given" means
//
// A Go struct cannot tell a missing field from a zero one, so: required
// refuses an empty value (a nil pointer, an empty list or map, a zero value;
// as +k8s:required does); a default fills an empty value (as defaulter-gen
// does for +default); and the other checks skip a field that would not be
// in the object's JSON — a nil pointer, list or map, or a zero value with
// omitempty — as a schema skips a property that is absent.
//
// # Errors
//
// Each failure is one Error with the cause type a CustomResourceDefinition
// with the same schema gives (apiextensions-apiserver), worded as
// Kubernetes' own declarative validation words it
// (k8s.io/apimachinery/pkg/api/validate):
//
//	required          FieldValueRequired     spec.color: Required value
//	enum              FieldValueNotSupported spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"
//	minimum           FieldValueInvalid      spec.replicas: Invalid value: -1: must be greater than or equal to 0
//	maximum           FieldValueInvalid      ...: must be less than or equal to 10
//	both, inclusive   FieldValueInvalid      spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive
//	exclusiveMinimum  FieldValueInvalid      ...: must be greater than 0
//	exclusiveMaximum  FieldValueInvalid      ...: must be less than 1
//	minLength         FieldValueInvalid      spec.name: Invalid value: "a": must be at least 2 characters
//	maxLength         FieldValueTooLong      spec.name: Too long: may not be more than 63 bytes
//	minItems          FieldValueInvalid      spec.ports: Invalid value: 0: must have at least 1 item
//	maxItems          FieldValueTooMany      spec.ports: Too many: 9: must have at most 8 items
//	pattern           FieldValueInvalid      spec.name: Invalid value: "A": must match '^[a-z]+$'
//	format            FieldValueTypeInvalid  spec.address: Invalid value: "x": must be of type ipv4
//	immutable         FieldValueInvalid      spec.name: Invalid value: null: field is immutable
//
// # Updates
//
// On an update a field whose value is what it was is not checked again,
// as a CRD's validation ratchets (and Kubernetes' declarative validation
// skips unchanged fields): an object stored before a constraint was
// declared can still be updated while that field is left alone. Fields
// inside a list or map ratchet with the whole list or map; required is
// checked whenever the struct that holds the field changed.
//
// Lengths count characters, as a CRD's maxLength does (whose message says
// bytes). Immutable, like +k8s:immutable, refuses any change after creation,
// setting and clearing included; it applies to fields reached through
// structs and pointers, not to those inside lists or maps, which have no
// old counterpart to compare with.
//
// # Rules across fields
//
// A rule tag holds an expression that must hold of the field's value, self,
// and for a transition rule of its value before an update, oldSelf: a CRD's
// x-kubernetes-validations, shown as such in OpenAPI. The ruleMessage tag
// says what a failure means:
//
//	Range Range `json:"range" rule:"self.min <= self.max" ruleMessage:"min must not exceed max"`
//
// Package validation parses rules but does not evaluate them: a RuleEngine
// given to For (apiserver.WithRuleEngine) does. Package
// github.com/kapi-dev/kapi/validation/cel, a module of its own so that the
// root module does not require cel-go, is one for CEL. Without an engine a
// rule tag is an error. A failed rule is worded as a CRD's: "Invalid value:
// min must not exceed max" (no value shown for an object or a list), or
// "failed rule: RULE" without a message. A transition rule is skipped on
// create and where the old value is absent, and refused inside lists and
// maps, where no old value corresponds.
//
// # Conditions
//
// A field of type []kapi.Condition needs no tag: For's schema checks it as
// kube-apiserver checks a list of metav1.Condition (Conditions): type set,
// unique and a qualified name; status True, False or Unknown;
// observedGeneration not negative; lastTransitionTime set; reason set, of
// Kubernetes' pattern and at most 1 KiB; message at most 32 KiB. Each
// failure is worded as apimachinery's ValidateConditions words it, and an
// update that leaves the conditions as they were is not refused for them.
package validation
