package patch

import "github.com/kapi-dev/kapi/internal/jsonskip"

// checkValue moves past the value at d.i, checking it as value checks what
// it reads (JSON's grammar; strings of valid UTF-8 without surrogate
// escapes; nesting up to maxDepth, d.i read as at depth), without making
// anything of it: ok false where value would be. It is value in discard
// mode in one loop, without a call per value (jsonskip.Value): the stored
// documents that compareStored and mergeStored split are checked whole,
// metadata's managedFields (which every decode of an object passes over)
// above all. FuzzCheckValue holds the two equal.
func (d *jsonReader) checkValue(depth int) bool {
	var ok bool
	d.i, ok = jsonskip.Value(d.data, d.i, depth, jsonskip.Exact)
	return ok
}
