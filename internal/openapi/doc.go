// Package openapi derives the OpenAPI v3 document of a group version from
// the Go types registered in it: what apiserver serves at
// /openapi/v3/apis/{group}/{version} (or /openapi/v3/api/v1).
//
// # What it owns
//
// [GroupVersion] builds the document, in the shape kube-apiserver serves for
// a CustomResourceDefinition's group version, because that is what clients
// read: kubectl looks for a PATCH operation carrying the resource's
// x-kubernetes-group-version-kind and a fieldValidation query parameter
// before it sends fieldValidation=Strict, and `kubectl explain` finds the
// resource's schema by its x-kubernetes-group-version-kind. Schemas come
// from the types by reflection, as encoding/json sees them (field names,
// omitempty, inline), with the keywords their struct tags declare (package
// validation's rules) and Kubernetes' list and map types; kapi's meta types
// are named and described as Kubernetes' own.
//
// # Invariant
//
// The output is deterministic: the same registration gives the same bytes,
// whatever the order of the resources, so that a hash of it can key
// clients' caches (the hash in /openapi/v3's URLs). A type that refers to
// itself becomes a component of its own and a reference; a pointer cycle
// without end is an error, not a hang.
//
// # The slow, obviously correct path
//
// There is no other: the document is built once per group version when a
// server starts serving, off the request path, and served as bytes. The
// tests hold it to what kube-apiserver serves for an equivalent CRD.
package openapi
