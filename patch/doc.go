// Package patch applies the patch formats of the Kubernetes API to an object's
// JSON: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and server-side
// apply with its managedFields.
//
// # Server-side apply
//
// [Schema.Apply] merges an apply configuration into an object as one field
// manager and [Schema.Update] records an ordinary write; both return the
// object's new managedFields, which the caller stores in its ObjectMeta. They
// follow kube-apiserver (structured-merge-diff and its field manager) rule for
// rule — the field sets in FieldsV1, conflicts and their messages, removal of
// fields a manager stops applying, the "before-first-apply" entry, the cap of
// ten Update entries — and a differential test in internal/e2e holds them to
// Kubernetes' own implementation.
//
// # Errors
//
// A patch document that cannot be read is [ErrMalformed] (400 at the HTTP
// layer); one that is well-formed but does not apply to the object — a failed
// test operation, a path that does not exist, a stored object or
// managedFields that do not fit the schema — is [ErrNotApplicable] (422). An
// apply configuration that does not fit the schema is ErrMalformed. An apply
// that conflicts is a [*ConflictError] (409 Conflict, one cause per field).
package patch
