// Package deepequal says whether two Go values are deeply equal, as
// reflect.DeepEqual says it, by a comparison compiled once per type.
//
// # Why
//
// reflect.DeepEqual works out each value's kind as it goes, boxes values
// into interfaces and keeps a map of the pointers it has seen, against
// cycles; on a write's path (a validation's ratcheting, whether an update
// changed the spec) that was most of its cost. Values walks a plan made
// once for the type instead, and leaves cycles to reflect.DeepEqual: only
// a type that holds itself or an interface can have one, and such a
// comparison that comes out unequal is asked of reflect.DeepEqual again.
// Two addressable values (a write's objects always are) are compared by
// reading their memory as the plan lays it out, through no reflect.Value:
// a field's flags, and the pointer type Addr looks up, cost more than the
// comparing.
package deepequal
