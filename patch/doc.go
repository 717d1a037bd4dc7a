// Package patch applies the patch formats of the Kubernetes API to an object's
// JSON: JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386).
//
// # Errors
//
// A patch document that cannot be read is [ErrMalformed] (400 at the HTTP
// layer); one that is well-formed but does not apply to the object — a failed
// test operation, a path that does not exist — is [ErrNotApplicable] (422).
package patch
