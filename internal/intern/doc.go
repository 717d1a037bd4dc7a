// Package intern shares the strings, maps and field sets of the objects a
// watch cache holds, so that what each cached object costs is what is
// its own.
//
// # What it owns
//
// A [Table] per resource: json.Unmarshal allocates every string anew (the
// same kind, namespace and label keys in every object, a long annotation
// beside the identical bytes of the stored value the cache keeps anyway).
// [Table.Shrink] replaces them in a decoded object's metadata with shared
// ones; [Alias] points a long string into the stored value that holds it.
//
// # Invariant
//
// Sharing is valid only because the cache's objects are never changed:
// a writer starts from a copy (apiserver's current), and the stored value
// a string points into is immutable (storage.KeyValue). The table is
// bounded (entries and sizes) and, once full, shares what it has and takes
// no more, so strings that never repeat cannot grow it forever.
//
// # The slow, obviously correct path
//
// Not calling Shrink: every object then keeps its own strings, equal to
// the shared ones (TestShrinkSharesStrings checks the object is unchanged).
package intern
