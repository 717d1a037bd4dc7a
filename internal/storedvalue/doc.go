// Package storedvalue makes an object's stored value: its JSON without
// metadata.resourceVersion, which the store's revision supplies, written
// by an encoder compiled once per type (package jsonwrite) where one can
// tell what json.Marshal writes, else by json.Marshal.
//
// # One copy per write
//
// A write encodes its object before its managedFields are recorded (the
// field manager reads the object's JSON), so [Unmanaged] encodes it once
// without them, and [Value.WithManaged] splices them in afterwards
// (package splice), where the encoder said metadata closes
// (jsonwrite.Encoder.LendEnd) rather than where reading the bytes again
// finds it. The first encoding is read and dropped: it is written
// in a buffer lent by a pool, given back by [Value.Done], and the value
// stored is WithManaged's, the one copy of the object's bytes a write
// makes, to its size.
//
// # Aliasing
//
// The store and the watch cache keep the slice they are handed, and
// readers share it: a lent buffer is never handed to them, and nothing
// reads a Value's Bytes after Done. WithManaged never returns a lent
// buffer's bytes; Marshal's are always a slice of their own.
package storedvalue
