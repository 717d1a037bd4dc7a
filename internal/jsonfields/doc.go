// Package jsonfields lists the fields of a Go struct as encoding/json sees
// them. Package codec checks request bodies against that list and package
// apiserver writes OpenAPI schemas from it, so both agree with what
// encoding/json decodes and encodes, and with each other.
//
// # The rules
//
// [Of] ports encoding/json's own field listing. A struct's exported fields
// are its JSON fields, named by their json tag or else by their Go name; a
// tag of "-" leaves a field out (a tag of "-," names it "-"), and a tag name
// encoding/json would not accept is ignored. The fields of an embedded struct
// without a json name are promoted, as Go promotes them: a shallower field
// hides deeper ones of the same name; at equal depth a tagged field hides
// untagged ones; otherwise the name is dropped altogether.
//
// # Types
//
// The rules encoding/json applies to types, which both packages need and
// must not write twice: where it looks for methods ([Implements],
// [DecodesItself]), which map key types make JSON objects ([MapKeyDecodes],
// [MapKeyEncodes]), and how far to follow pointer types, which may point to
// themselves ([Deref]).
//
// # Paths
//
// StringGetter, FieldIndex and FieldValue resolve a dotted JSON path
// ("spec.replicas") in a type once, at registration, and follow it in
// values on every request: a resource's selectable fields and its scale
// subresource's replicas.
//
// # Caching
//
// Nothing is cached. Each caller keeps what it builds from the fields
// (codec its per-type shapes, apiserver its documents) and so asks once
// per type; a cache here would only hold a second copy, and would have to
// hand out copies to stay safe from callers that modify the result.
package jsonfields
