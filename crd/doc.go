// Package crd serves apiextensions.k8s.io/v1 CustomResourceDefinitions:
// kinds defined by data, which kubectl apply adds to a running kapi server.
//
//	api, _ := apiserver.New(apiserver.WithNamespaces())
//	if err := crd.Serve(api); err != nil { ... }
//	// kubectl apply --server-side -f config/crd/bases/
//
// # The kind
//
// CustomResourceDefinition is the Go type of the kind, with Kubernetes'
// JSON names; it is cluster-scoped, named customresourcedefinitions (short
// names crd and crds, category api-extensions) and has a status
// subresource. A version's openAPIV3Schema is held as the JSON it was
// written in, so that kubectl apply, get and explain round-trip it
// unchanged; package schema reads it.
//
// # Validation
//
// Validate is kube-apiserver's validation of a definition, with its field
// paths, cause types and messages: the name <plural>.<group>, the names
// (DNS-1035 labels; kind and listKind in mixed case), the scope, the
// versions (unique, exactly one stored), each schema (package schema's
// Check, and the restriction of the root when the status subresource is
// enabled), subresources, printer columns, selectable fields, conversion,
// the approval annotation of Kubernetes' own groups, status.storedVersions,
// and on update the fields that may not change. Like kube-apiserver, it
// reports what every version has alike as the definition's own
// (spec.validation.openAPIV3Schema...). The differential test in
// internal/test/schemadiff holds it to apiextensions-apiserver's.
//
// Serve also refuses the conversion strategy Webhook (ErrWebhookConversion):
// kapi converts custom resources between versions only with the strategy
// None so far.
//
// # Status and lifecycle
//
// A controller runs inside the server (apiserver.Server.RunController), as
// kube-apiserver's naming, establishing and finalizer controllers do:
//
//   - NamesAccepted: a name (plural, singular, short names, kind, list
//     kind) that another definition of the group has accepted already is
//     a conflict (reasons PluralConflict, SingularConflict,
//     ShortNamesConflict, KindConflict, ListKindConflict; message
//     `"widget" is already in use`), and status.acceptedNames keeps the
//     names accepted before.
//   - Established: once its names are accepted the kind is served, with the
//     Definition made from the definition (package kinds), and served anew
//     whenever the definition changes. Established, once true, stays true:
//     a change the kind cannot be served from leaves the kind as it was,
//     and is reported in the condition NonStructuralSchema (reason
//     Violations), removed once the definition is mended.
//   - While a DELETE's Terminating condition is true, creates of the kind
//     are refused (405, "create not allowed while custom resource
//     definition is terminating"); the rest goes on.
//   - status.storedVersions gains the storage version on every write of the
//     spec.
//   - A DELETE marks the definition (finalizer
//     customresourcecleanup.apiextensions.k8s.io, condition Terminating);
//     the controller deletes every object of the kind, removes the
//     finalizer once none is left, and the kind stops being served when the
//     definition is gone.
//
// The controller is level-triggered: it acts on each definition as read,
// so a restarted server serves the kinds it finds, and several replicas on
// one store may run it at once (each serves the kinds itself; their writes
// are conditional and retried from a fresh read).
package crd
