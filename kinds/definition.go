package kinds

import "github.com/kapi-dev/kapi/schema"

// Definition describes a kind whose objects have no Go type: what a
// CustomResourceDefinition's spec says, with its schemas parsed. Package
// crd makes one from a CustomResourceDefinition; a service may build one
// from its own configuration.
type Definition struct {
	// Group, Kind and the names of the resource, as in a CRD's spec.names:
	// example.com, Widget, widgets, widget. Singular defaults to the
	// lower-case Kind, ListKind to Kind + "List".
	Group, Kind      string
	Plural, Singular string
	ListKind         string
	// Namespaced kinds live in a namespace; the others are cluster-scoped.
	Namespaced bool
	// ShortNames and Categories are offered through discovery (kubectl get
	// wd, kubectl get all).
	ShortNames, Categories []string
	// Versions are the kind's versions, in the CRD's order; exactly one is
	// the storage version. Objects of every version have the same shape
	// (conversion strategy None: only apiVersion changes).
	Versions []Version
	// Terminating, if set, says whether the kind is being deleted: a
	// create (POST) is then refused as kube-apiserver refuses one while
	// its CustomResourceDefinition terminates (405 MethodNotAllowed,
	// "create not allowed while custom resource definition is
	// terminating"), while reads, updates and deletes go on.
	Terminating func() bool
}

// Version is one version of a kind, as a CRD's spec.versions[i].
type Version struct {
	Name string
	// Served versions are in discovery and the API; others answer 404.
	Served bool
	// Storage marks the version objects are stored in.
	Storage bool
	// Deprecated versions answer every request with a warning:
	// DeprecationWarning if set, else kube-apiserver's default words.
	Deprecated         bool
	DeprecationWarning *string
	// Schema is the version's openAPIV3Schema; nil accepts any object
	// (and keeps unknown fields, as x-kubernetes-preserve-unknown-fields).
	Schema *schema.Schema
	// Status enables the status subresource (spec.versions[i].subresources.status).
	Status bool
	// Scale enables the scale subresource; nil disables it.
	Scale *Scale
	// PrinterColumns are the additionalPrinterColumns: the columns of the
	// Table (kubectl get) after Name. Without any, Name and Age.
	PrinterColumns []PrinterColumn
	// SelectableFields are the JSON paths (".spec.color") of fields clients
	// may select on besides metadata.name and metadata.namespace.
	SelectableFields []string
}

// Scale maps the scale subresource onto an object's fields, with the JSON
// paths of a CRD's subresources.scale (".spec.replicas").
type Scale struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  string // optional
}

// PrinterColumn is one additionalPrinterColumns entry.
type PrinterColumn struct {
	Name        string
	Type        string // integer, number, string, boolean or date
	Format      string
	Description string
	Priority    int32
	JSONPath    string // ".spec.color"
}
