package crd

import (
	"encoding/json"

	"github.com/kapi-dev/kapi"
)

// Group and Version are where CustomResourceDefinitions are served:
// apiextensions.k8s.io/v1.
const (
	Group   = "apiextensions.k8s.io"
	Version = "v1"
)

// CustomResourceDefinition is apiextensions.k8s.io/v1
// CustomResourceDefinition: a kind defined by data, named
// <plural>.<group>, whose objects the server serves once it is accepted.
type CustomResourceDefinition struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec"`
	Status Status `json:"status,omitempty"`
}

// Spec is what a CustomResourceDefinition defines.
type Spec struct {
	Group string `json:"group" description:"group is the API group of the defined custom resource."`
	Names Names  `json:"names" description:"names specify the resource and kind names for the custom resource."`
	// Scope is Namespaced or Cluster.
	Scope    string        `json:"scope" description:"scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are Cluster and Namespaced."`
	Versions []SpecVersion `json:"versions" description:"versions is the list of all API versions of the defined custom resource."`
	// Conversion defaults to the strategy None.
	Conversion            *Conversion `json:"conversion,omitempty" description:"conversion defines conversion settings for the CRD."`
	PreserveUnknownFields bool        `json:"preserveUnknownFields,omitempty" description:"preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage."`
}

// Names are the names of a kind and its resource.
type Names struct {
	Plural     string   `json:"plural" description:"plural is the plural name of the resource to serve."`
	Singular   string   `json:"singular,omitempty" description:"singular is the singular name of the resource. Defaults to lowercased kind."`
	ShortNames []string `json:"shortNames,omitempty" description:"shortNames are short names for the resource, exposed in API discovery documents."`
	Kind       string   `json:"kind" description:"kind is the serialized kind of the resource."`
	ListKind   string   `json:"listKind,omitempty" description:"listKind is the serialized kind of the list for this resource. Defaults to kind+List."`
	Categories []string `json:"categories,omitempty" description:"categories is a list of grouped resources this custom resource belongs to (e.g. 'all')."`
}

// SpecVersion is one version of the defined kind.
type SpecVersion struct {
	Name                     string             `json:"name" description:"name is the version name, e.g. v1, v2beta1."`
	Served                   bool               `json:"served" description:"served is a flag enabling/disabling this version from being served via REST APIs."`
	Storage                  bool               `json:"storage" description:"storage indicates this version should be used when persisting custom resources to storage. There must be exactly one version with storage=true."`
	Deprecated               bool               `json:"deprecated,omitempty" description:"deprecated indicates this version of the custom resource API is deprecated."`
	DeprecationWarning       *string            `json:"deprecationWarning,omitempty" description:"deprecationWarning overrides the default warning returned to API clients."`
	Schema                   *Validation        `json:"schema,omitempty" description:"schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource."`
	Subresources             *Subresources      `json:"subresources,omitempty" description:"subresources specify what subresources this version of the defined custom resource have."`
	AdditionalPrinterColumns []ColumnDefinition `json:"additionalPrinterColumns,omitempty" description:"additionalPrinterColumns specifies additional columns returned in Table output."`
	SelectableFields         []SelectableField  `json:"selectableFields,omitempty" description:"selectableFields specifies paths to fields that may be used as field selectors."`
}

// Validation holds a version's schema. OpenAPIV3Schema is kept as the JSON
// it was given (a JSONSchemaProps), so that what a client wrote reads back
// unchanged, numbers and key order included; package schema parses it.
type Validation struct {
	OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema,omitempty" description:"openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning."`
}

// Subresources are a version's status and scale subresources.
type Subresources struct {
	// Status is {} when the status subresource is enabled.
	Status *StatusSubresource `json:"status,omitempty" description:"status indicates the custom resource should serve a /status subresource."`
	Scale  *ScaleSubresource  `json:"scale,omitempty" description:"scale indicates the custom resource should serve a /scale subresource that returns an autoscaling/v1 Scale object."`
}

// StatusSubresource has no fields: its presence enables /status.
type StatusSubresource struct{}

// ScaleSubresource maps /scale onto fields of the custom resource.
type ScaleSubresource struct {
	SpecReplicasPath   string  `json:"specReplicasPath" description:"specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale spec.replicas."`
	StatusReplicasPath string  `json:"statusReplicasPath" description:"statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale status.replicas."`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty" description:"labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale status.selector."`
}

// ColumnDefinition is an additional column of kubectl get.
type ColumnDefinition struct {
	Name        string `json:"name" description:"name is a human readable name for the column."`
	Type        string `json:"type" description:"type is an OpenAPI type definition for this column."`
	Format      string `json:"format,omitempty" description:"format is an optional OpenAPI type definition for this column."`
	Description string `json:"description,omitempty" description:"description is a human readable description of this column."`
	Priority    int32  `json:"priority,omitempty" description:"priority is an integer defining the relative importance of this column compared to others."`
	JSONPath    string `json:"jsonPath" description:"jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column."`
}

// SelectableField is a field usable in field selectors.
type SelectableField struct {
	JSONPath string `json:"jsonPath" description:"jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value."`
}

// Conversion is how objects convert between versions: the strategy None
// (only apiVersion changes) or Webhook, which kapi refuses for now.
type Conversion struct {
	Strategy string             `json:"strategy" description:"strategy specifies how custom resources are converted between versions. Allowed values are: None and Webhook."`
	Webhook  *WebhookConversion `json:"webhook,omitempty" description:"webhook describes how to call the conversion webhook. Required when strategy is set to Webhook."`
}

// WebhookConversion is the webhook of the strategy Webhook.
type WebhookConversion struct {
	ClientConfig             *WebhookClientConfig `json:"clientConfig,omitempty" description:"clientConfig is the instructions for how to call the webhook if strategy is Webhook."`
	ConversionReviewVersions []string             `json:"conversionReviewVersions" description:"conversionReviewVersions is an ordered list of preferred ConversionReview versions the Webhook expects."`
}

// WebhookClientConfig says how to reach a webhook.
type WebhookClientConfig struct {
	URL      *string           `json:"url,omitempty" description:"url gives the location of the webhook, in standard URL form."`
	Service  *ServiceReference `json:"service,omitempty" description:"service is a reference to the service for this webhook."`
	CABundle []byte            `json:"caBundle,omitempty" description:"caBundle is a PEM encoded CA bundle which will be used to validate the webhook's server certificate."`
}

// ServiceReference names a Service.
type ServiceReference struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// Status is what the server made of a CustomResourceDefinition.
type Status struct {
	Conditions []Condition `json:"conditions" listType:"map" listMapKey:"type" description:"conditions indicate state for particular aspects of a CustomResourceDefinition"`
	// AcceptedNames are the names actually served; they differ from
	// spec.names while those conflict with another definition's.
	AcceptedNames Names `json:"acceptedNames" description:"acceptedNames are the names that are actually being used to serve discovery."`
	// StoredVersions are every version objects were ever stored in.
	StoredVersions     []string `json:"storedVersions" description:"storedVersions lists all versions of CustomResources that were ever persisted."`
	ObservedGeneration int64    `json:"observedGeneration,omitempty" description:"The generation observed by the CRD controller."`
}

// Condition is one aspect of a CustomResourceDefinition's state.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime kapi.Time `json:"lastTransitionTime,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
}

// Condition types, as kube-apiserver sets them.
const (
	Established   = "Established"
	NamesAccepted = "NamesAccepted"
	Terminating   = "Terminating"
	// NonStructuralSchema reports a schema the server cannot serve
	// (reason Violations, with what is wrong); absent when there is none.
	NonStructuralSchema = "NonStructuralSchema"
)

// Scopes and conversion strategies.
const (
	ClusterScoped    = "Cluster"
	NamespaceScoped  = "Namespaced"
	NoneConverter    = "None"
	WebhookConverter = "Webhook"
)

// CleanupFinalizer holds a deleted CustomResourceDefinition until every
// object of its kind is gone.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
