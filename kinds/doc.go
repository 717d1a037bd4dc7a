// Package kinds serves kinds defined at run time: resources whose objects
// have no Go type, described by a Definition (what a
// CustomResourceDefinition's spec says) and shaped by package schema.
// Package crd makes Definitions of CustomResourceDefinitions; a service
// may build them from its own configuration.
//
// # Registering
//
// Register serves a Definition on an apiserver.Server, before or while it
// serves, and replaces the kind of the same group and kind registered
// before; Remove stops serving one. Once Register returns, every verb,
// watch, discovery (both forms) and OpenAPI v3 (per group version, with
// the schema) serve the kind. The seam into apiserver is small on
// purpose: apiserver.RegisterKind registers a kind's versions at once
// at any time, Server.Remove removes one, and apiserver.Shape lets a
// resource's schema, not its Go type, say what its JSON is.
//
// # Objects
//
// Objects are *Object: type and object metadata as every kind's, status
// apart (for the status subresource), and the rest of the document as
// decoded JSON values. The watch cache keeps an object as its stored
// bytes (decoding only its most recent objects again), so an object
// costs about its JSON whatever its decoded form; kinds served so are
// JSON, YAML and CBOR, Table and PartialObjectMetadata(List), and not
// protobuf (406, as kube-apiserver answers for custom resources).
//
// # What a write does
//
// As kube-apiserver does to a custom resource, with its messages:
//
//   - unknown fields are pruned (x-kubernetes-preserve-unknown-fields keeps
//     them), and reported as fieldValidation says: a Warning header each
//     (Warn, the default), or 400 "strict decoding error: unknown field
//     \"spec.bogus\"" (Strict);
//   - defaults are set, on writes and on objects read from storage;
//   - the object is validated against the schema (and rules) of the
//     version the request was sent in, as kube-apiserver validates a
//     custom resource, with ratcheting on update against the old object
//     in that version: 422 `Widget.example.com "x" is invalid: ...`,
//     one cause per field; x-kubernetes-validations rules join them when
//     the server's rule engine compiles them (apiserver.WithRuleEngine
//     with package validation/cel's engine; Register then refuses a rule
//     kube-apiserver would refuse the CRD for) or Register is given
//     WithRules, with kube's messages, transition rules and ratcheting;
//   - while Definition.Terminating says so, creates are refused (405, as
//     for a CustomResourceDefinition being deleted);
//   - server-side apply merges lists by their x-kubernetes-list-type and
//     keys and maps by x-kubernetes-map-type; what the schema leaves open
//     (an x-kubernetes-preserve-unknown-fields object's unknown members,
//     an object without properties, a node without a type) is owned and
//     merged member by member, each list and scalar whole, and an
//     x-kubernetes-embedded-resource has apiVersion, kind and an ObjectMeta
//     metadata, as kube-apiserver's field manager has them (managedFields
//     alike: two managers apply different members of an open object
//     without a conflict); a strategic merge patch is
//     refused (415 UnsupportedMediaType), as kube-apiserver refuses it for
//     custom resources;
//   - with the status subresource, writes to the object leave status and
//     writes to status leave the rest; the scale subresource reads and
//     writes the fields its paths name, and every write checks them as
//     kube-apiserver does (".spec.replicas: Invalid value: -1: should be
//     a non-negative integer"); a status write's schema messages name
//     fields from status, as kube-apiserver's do;
//   - an update (PUT) must name the resourceVersion it replaces (422
//     "metadata.resourceVersion: Invalid value: 0: must be specified for
//     an update"), as a custom resource's must.
//
// Printer columns (additionalPrinterColumns) and selectable fields take
// the JSON paths CustomResourceDefinitions allow, read as client-go's
// jsonpath reads them: member names (a backslash escapes a dot),
// ['key'], indexes, [*] and filters such as [?(@.type=="Ready")]; a
// column's cell is the first value its path finds, of the column's type,
// as kube-apiserver's table convertor makes it. Versions share
// one document (conversion strategy None): only apiVersion changes, and
// deprecated versions warn on every request.
//
// # Not here
//
// Webhook conversion; list kinds other than Kind+"List".
package kinds
