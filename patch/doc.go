// Package patch applies the patch formats of the Kubernetes API to an object's
// JSON: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386), strategic merge
// patch, and server-side apply with its managedFields.
//
// # Strategic merge patch
//
// Strategic merge patch is merge patch that knows the type: [Schema.Patch]
// takes from the Go struct tags (`patchStrategy:"merge"
// patchMergeKey:"name"`, as on Kubernetes' own types) which lists merge item
// by item instead of being replaced. Objects merge field by field and null
// deletes, as in merge patch; a list that merges matches its objects by
// their merge key and holds its scalars as a set; any other list is
// replaced; an untyped value (interface{}, json.RawMessage) merges as merge
// patch merges. A merged list keeps the patch's items in the patch's order
// and the object's others in theirs; an item new to the object goes before
// the object's items not yet placed, so a patch that only adds puts its
// items first. That is the order kube-apiserver gives, which clients expect.
//
// The directives clients send:
//
//   - "$patch": "replace" in an object replaces the object with the rest of
//     the patch's; "delete" empties it; "merge" merges, as without it.
//   - {"$patch": "replace"} as a list item replaces the list with the
//     patch's other items; {"name": "x", "$patch": "delete"} deletes the item
//     whose merge key is x.
//   - "$deleteFromPrimitiveList/<field>": [values] deletes values from a set.
//   - "$setElementOrder/<field>": [items or values] orders the merged list;
//     the object's items the directive leaves out stay near their neighbours.
//   - "$retainKeys": [fields] clears the object's fields it does not list
//     (for a struct tagged `patchStrategy:"retainKeys"`, such as a volume
//     source, where one field excludes the others).
//
// The merge is apimachinery's (k8s.io/apimachinery/pkg/util/strategicpatch)
// with few differences, each in favour of what the patch asks: "$patch":
// "merge" is accepted, maps of objects and untyped values merge, ordering an
// empty list is no error, and $setElementOrder places the object's other items
// by the object's list as it was (apimachinery reads a copy it has edited). Numbers are read as apimachinery reads them: an
// integer that fits is an int64, any other a float64. The end-to-end module
// runs both on thousands of patches to keep it so.
//
// # Server-side apply
//
// [Schema.Apply] merges an apply configuration into an object as one field
// manager and [Schema.Update] records an ordinary write; both return the
// object's new managedFields, which the caller stores in its ObjectMeta. They
// follow kube-apiserver (structured-merge-diff and its field manager) rule for
// rule — the field sets in FieldsV1, conflicts and their messages, removal of
// fields a manager stops applying, the "before-first-apply" entry, the cap of
// ten Update entries, the untimed entry of a write through /scale — and a
// differential test in internal/test/e2e holds them to Kubernetes' own
// implementation. A [Deduced] node is structured-merge-diff's deduced
// type, read from each value: an object's members are owned and merged
// apart, a list or scalar whole.
//
// # Documents as written
//
// Every write to a server records managedFields, so the common writes take
// shorter ways that give the same results: [Schema.Update] of a create
// writes its entry straight from the object, and of an update compares
// the two versions as written, matching members by key and decoding only
// those whose bytes differ; a merge patch copies the members it does not
// name as they are; an apply of a configuration shaped as one applied
// before (the same fields and list items, other values, as the reader
// of the configuration notes while reading it) takes the field set and
// FieldsV1 made for that one; an apply given the live object as a Go value
// ([ApplyOptions].Live) reads it from that value rather than from its JSON;
// and a server that decoded the live object and the configuration into Go
// values has the applied object from them ([Schema.ApplyMerged],
// [Merged.Decode]: each member copied from the one whose JSON it equals),
// without writing its JSON and decoding that; a re-apply to an object
// with managers, of a type whose values are all valid objects of its
// schema, walks the configuration beside the live Go value and reads of
// the live object only the members the configuration names.
// Each way checks the documents as decoding would, and leaves anything
// unusual (escaped or duplicate keys, a value the schema does not allow, a
// member merged from both, a type that keeps how its JSON was spelled) to
// the general way; fuzz targets and random tests hold each to it.
//
// # Errors
//
// A patch document that cannot be read is [ErrMalformed] (400 at the HTTP
// layer), and so is one that is ill-formed for its type: an unknown
// directive, a list item without its merge key, items out of the order their
// $setElementOrder gives, an apply configuration that does not fit the
// schema. One that is well-formed but does not apply to the object — a
// failed test operation, a path that does not exist, a result the type cannot
// hold (a list where an object belongs), a list of lists, a stored object or
// managedFields that do not fit the schema — is [ErrNotApplicable] (422). An
// apply that conflicts is a [*ConflictError] (409 Conflict, one cause per
// field). Documents nested deeper than 10000 levels are ErrMalformed; no
// document makes Patch or Apply panic.
package patch
