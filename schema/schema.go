package schema

import ()

// Schema is one node of an apiextensions.k8s.io/v1 JSONSchemaProps: every
// keyword Kubernetes' type has, held compactly. A nil *Schema is "no
// schema". Parse and FromValue make one; Check says whether it is a
// structural schema a CustomResourceDefinition may carry; Validate, Prune
// and Default apply it to an object.
//
// A Schema is not changed by any method and may be shared by goroutines.
type Schema struct {
	Type        string
	Format      string
	Title       string
	Description string
	// Default is the default value (int64 or float64 for numbers); nil
	// when there is none (a null default is none, as in Kubernetes).
	Default any
	Example any
	// Nullable allows null where the type is not null.
	Nullable bool

	Maximum, Minimum                   *float64
	ExclusiveMaximum, ExclusiveMinimum bool
	MultipleOf                         *float64
	MaxLength, MinLength               *int64
	Pattern                            string
	MaxItems, MinItems                 *int64
	UniqueItems                        bool
	MaxProperties, MinProperties       *int64
	Enum                               []any
	Required                           []string

	// Items is the schema of a list's items; ItemsList is the array form
	// of items, which a CustomResourceDefinition refuses.
	Items     *Schema
	ItemsList []*Schema
	// Properties are an object's known fields.
	Properties map[string]*Schema
	// AdditionalProperties is the schema of an object's other fields
	// (a map's values); HasAdditionalProperties with a nil
	// AdditionalProperties is the boolean form, AllowsAdditional its value.
	AdditionalProperties    *Schema
	HasAdditionalProperties bool
	AllowsAdditional        bool

	AllOf, OneOf, AnyOf []*Schema
	Not                 *Schema

	// Keywords JSON Schema has that a CustomResourceDefinition refuses;
	// parsed so that Check can name them.
	ID                 string
	SchemaURI          string
	Ref                *string
	PatternProperties  map[string]*Schema
	Dependencies       map[string]Dependency
	AdditionalItems    *Schema
	HasAdditionalItems bool
	Definitions        map[string]*Schema

	ExternalDocs *ExternalDocs

	// PreserveUnknownFields is x-kubernetes-preserve-unknown-fields; nil
	// when not given (false is given, and refused by Check).
	PreserveUnknownFields *bool
	// EmbeddedResource is x-kubernetes-embedded-resource.
	EmbeddedResource bool
	// IntOrString is x-kubernetes-int-or-string.
	IntOrString bool
	// ListType is x-kubernetes-list-type, nil when not given.
	ListType *string
	// ListMapKeys is x-kubernetes-list-map-keys.
	ListMapKeys []string
	// MapType is x-kubernetes-map-type, nil when not given.
	MapType *string
	// Validations are the x-kubernetes-validations (CEL) rules.
	Validations []Rule

	// set records which keywords were given, for the structural check of
	// nested (allOf, anyOf, oneOf, not) schemas and of metadata.
	set keywords
	// asStructural marks a copy that validates as kube-apiserver validates
	// defaults: from the structural schema, where int-or-string is no type
	// and every format is kept.
	asStructural bool
	// walk says which walks over an object this schema's subtree needs;
	// Parse sets it, and 0 (a schema made otherwise) means all.
	walk walkNeeds
}

// walkNeeds are the checks beyond the keywords that a subtree of a schema
// calls for.
type walkNeeds uint8

const (
	walkKnown    walkNeeds = 1 << iota // the other bits are set
	walkEmbedded                       // an embedded resource is in it
	walkLists                          // a list-type set or map is in it
)

// walks says whether the subtree needs the walk w.
func (s *Schema) walks(w walkNeeds) bool {
	return s != nil && (s.walk&walkKnown == 0 || s.walk&w != 0)
}

// setWalks sets the walk bits of a parsed schema from its own and its
// children's (as kube-apiserver walks them: properties, additional
// properties, items).
func (s *Schema) setWalks() {
	w := walkKnown
	if s.EmbeddedResource {
		w |= walkEmbedded
	}
	if s.ListType != nil && (*s.ListType == ListSet || *s.ListType == ListMap) {
		w |= walkLists
	}
	for _, sub := range s.Properties {
		w |= sub.walk &^ walkKnown
	}
	for _, sub := range []*Schema{s.Items, s.AdditionalProperties} {
		if sub != nil {
			w |= sub.walk &^ walkKnown
		}
	}
	s.walk = w
}

// Dependency is one entry of the dependencies keyword: a schema or a list
// of property names.
type Dependency struct {
	Schema   *Schema
	Property []string
}

// ExternalDocs is the externalDocs keyword.
type ExternalDocs struct {
	Description string
	URL         string
}

// Rule is one x-kubernetes-validations entry.
type Rule struct {
	Rule              string
	Message           string
	MessageExpression string
	// Reason is nil when not given.
	Reason          *string
	FieldPath       string
	OptionalOldSelf *bool
}

// keywords is a bit set of the keywords a schema node was given.
type keywords uint64

const (
	kwType keywords = 1 << iota
	kwDefault
	kwTitle
	kwDescription
	kwNullable
	kwExample
	kwExternalDocs
)

// PreservesUnknownFields says whether x-kubernetes-preserve-unknown-fields
// is true.
func (s *Schema) PreservesUnknownFields() bool {
	return s != nil && s.PreserveUnknownFields != nil && *s.PreserveUnknownFields
}
