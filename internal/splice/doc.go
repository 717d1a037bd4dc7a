// Package splice makes the JSON kapi answers and stores from JSON it
// already holds, by putting bytes into it or cutting them out, rather than
// by encoding an object again.
//
// # What it owns
//
// An object's stored value is json.Marshal of the object less
// metadata.resourceVersion (the store's revision supplies it). Its JSON
// element, what a GET answers, differs from it only by that member:
// [Element] and [ResourceVersionOffset] with [AppendResourceVersion] put
// it in, so that a list or a watch event costs a copy of stored bytes, not
// a json.Marshal. A write records its managedFields after encoding the
// object: [WithManagedFields] puts them into the value encoded without
// them, and [EqualUnmanaged] tells an update that changes nothing but them
// from one that changes more. [ManagedJSON] writes managedFields as
// json.Marshal does, without its check of every field set.
//
// # Invariant
//
// Splicing is valid only while metadata is plain: kapi.ObjectMeta as the
// type's metadata, encoded by encoding/json's rules, so that
// resourceVersion goes after name, generateName, namespace, selfLink and
// uid, and managedFields is metadata's last member. apiserver checks that
// of a type when it is registered (its plainMetadata) and splices nothing
// of another. Every function here checks the shape of the bytes it is
// given and declines (ok false) what it cannot splice, such as a value
// that already holds a resourceVersion or is not JSON.
//
// # The slow, obviously correct path
//
// json.Marshal of the decoded object, with its resourceVersion or
// managedFields set, makes the same bytes: every function declines rather
// than guess, and its caller then takes that path. apiserver's tests
// (TestStoredElementIsMarshal, FuzzMarshalManaged) hold the two equal, and
// FuzzElement here holds an element to its stored value.
package splice
