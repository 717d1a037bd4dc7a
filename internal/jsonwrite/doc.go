// Package jsonwrite writes the JSON of Go values, byte for byte what
// json.Marshal writes, without encoding/json's costs on every call: it
// walks a value by a plan compiled once per type, sorts small maps' keys
// on the stack, and writes kapi's times and field sets without calling
// their MarshalJSON methods and checking and compacting what they return.
//
// # Exactness
//
// An [Encoder] writes a value only where it can tell what json.Marshal
// writes; for anything else it says so, and the caller uses json.Marshal.
// Its struct fields are those of package jsonfields, which ports
// encoding/json's own listing (names, order, embedding, omitempty,
// omitzero, `json:",string"`); strings are escaped as encoding/json
// escapes them for HTML; floats are formatted as it formats them.
//
// # Falling back
//
// [New] returns nil for a type no value of which it can write: one with
// MarshalJSON or MarshalText methods of its own (but for kapi.Time,
// kapi.MicroTime and kapi.FieldsV1), json.Number, a kind JSON cannot hold,
// or a struct whose every value holds one of those. It also returns nil for
// a type that holds an interface anywhere: what one holds is json.Marshal's
// to look at, and it is seldom nil. Where only some values are out of
// reach, [Encoder.Append] reports false for them: where a pointer, a
// slice, a map or a field that may be left out holds a value of a type New
// refuses on its own; a NaN or infinite float; a field set whose raw JSON
// json.Marshal would rewrite or refuse; a value nested deeper than
// json.Marshal's cycle detection begins to look.
//
// # Cost
//
// Nothing is cached here: a caller compiles an Encoder once per type and
// keeps it. Append allocates to grow its buffer, for a map[string]string
// of more than a few entries, and for rarer shapes: other maps, a string
// under `json:",string"`.
package jsonwrite
