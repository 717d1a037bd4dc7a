// Package jsonskip finds where a JSON value ends without making anything of
// it: the one value skipper of kapi, which codec's field checker, patch's
// stored-document reader and apiserver's splicing of stored JSON all pass
// values over with.
//
// # What it owns
//
// [Value] moves past one value (object, array, string, number or literal),
// checking it against JSON's grammar as it goes; [String], [Number], [Key]
// and [Space] are its parts, for callers that read some of a document
// themselves and skip the rest.
//
// # Invariant
//
// A value Value accepts is one encoding/json accepts (nested up to
// [MaxDepth], as encoding/json), and Value ends where encoding/json's
// scanner ends it. Strings are checked in one of two ways ([Strings]): as
// encoding/json reads them ([AnyText]: invalid UTF-8 and lone surrogate
// escapes are read, as U+FFFD), or as patch's reader takes them ([Exact]:
// valid UTF-8 only, no surrogate escapes, which that reader leaves to
// encoding/json).
//
// # The slow, obviously correct path
//
// json.Valid of the value's bytes, and json.Decoder's InputOffset after
// decoding one value into a json.RawMessage, say what Value says; the
// fuzz target FuzzValue holds them equal. Value is one loop with a stack of
// open containers on the stack: no call per value, no allocation.
package jsonskip
