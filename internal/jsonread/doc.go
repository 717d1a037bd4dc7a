// Package jsonread reads JSON into Go values of one type by a plan
// compiled once per type, as package jsonwrite writes them: what json/v2's
// Unmarshal does with encoding/json's (v1) semantics, names matched
// exactly, and unknown or repeated member names refused (codec's
// UnmarshalKnownJSON), without its per-call costs: its token state
// machine, a namespace of names built for every object to find repeated
// ones, and reflect.Value for every field.
//
// # Exactness
//
// A [Decoder] decodes a document only where it can tell what json/v2
// decodes from it; for anything else it reports false, and the caller
// decodes the document again, into a new value, by json/v2. It reports
// false for every document json/v2 refuses (an unknown or repeated name, a
// value of the wrong type, a number out of range, data after the value),
// and for rarer shapes it leaves to json/v2 however valid: a name or a
// string with invalid UTF-8, a lone surrogate escape, or a name with an
// escape in it; a number with a fraction or an exponent for an integer;
// nesting over [MaxDepth]. Its struct fields are package jsonfields's,
// encoding/json's own listing.
//
// Values of a type with an UnmarshalJSON method are handed their JSON as
// encoding/json hands it (null included, unless through a pointer, which
// null leaves nil), names repeated inside it unchecked (json/v2 refuses
// them, kapi's field check ignores them there), except in a value of a
// type of any fields (codec.AnyFields, a custom resource), which is then
// reported false; kapi.Time and kapi.MicroTime written as kapi writes
// them are read here as their methods read them, without a string made of
// their text. What it does not read itself, it hands to the
// fallback given to [New], one value at a time: interface values, types
// with an UnmarshalText method, json.Number, byte slices (base64), arrays,
// maps with keys other than strings, and structs with a field that is
// `json:",string"`, behind an embedded pointer, or tagged with an option
// json/v2 reads other than encoding/json.
package jsonread
