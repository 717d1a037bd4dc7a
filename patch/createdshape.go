package patch

import (
	"sync"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// Creates of one kind by one client are alike: the same fields, the same
// list items, other values (a name, a uid, a label's value). What
// createdWritten makes of a document depends on its shape only: its
// members' names, its lists, its nulls, and whether and how each scalar
// is written (not the scalar itself: a field with a scalar is a member
// whatever its value, and validStored checks a scalar only for its kind
// and its syntax). appendCreatedShape writes that shape into a key in one
// pass without an allocation, and createdShapes keeps the entry of each
// shape seen lately: a create of one of them reads its document once,
// and writes no entry.
//
// The key is the document with each string outside any array written as
// "" and each number as 0, after checking it as validStored checks it
// (checkString, checkNumber): everything else is kept as written, names
// (escapes included), space, literals, and arrays whole (their values name
// list items). It is JSON of the document's structure, so that two
// documents with one key differ only in valid scalars of one kind, which
// makes one entry: TestCreatedShapeCache and FuzzCreatedShapeCache hold
// it to that.

// createdShapes are the entries of the documents created lately, by their
// schema and their shape (appendCreatedShape). Its entries are never
// changed: a hit gets a copy.
var createdShapes createdCache

type createdCache struct {
	sync.RWMutex
	m map[createdKey]createdEntry
}

// createdKey keeps the schema in the key (and alive, so that no other
// schema takes its address while it is cached): one shape is another
// entry in another schema.
type createdKey struct {
	schema *Schema
	shape  string
}

type createdEntry struct {
	raw string // the entry; "" for none
	ok  bool
}

// maxCreatedShapes and maxCreatedShape bound the memory createdShapes
// holds: the kinds a server serves, each created by a few clients, in
// shapes of up to a few KiB (an entry is about as long as its shape).
const (
	maxCreatedShapes = 64
	maxCreatedShape  = 8 << 10
)

// get is the entry of shape in schema s, in a slice of its own; hit false
// when it is not cached.
func (c *createdCache) get(s *Schema, shape []byte) (raw []byte, ok, hit bool) {
	c.RLock()
	e, hit := c.m[createdKey{s, string(shape)}]
	c.RUnlock()
	if !hit {
		return nil, false, false
	}
	if e.raw != "" {
		raw = []byte(e.raw)
	}
	return raw, e.ok, true
}

// put caches the entry of shape in schema s, starting over when the cache
// is full: the shapes of a server's creates are few, and any lost are
// written again.
func (c *createdCache) put(s *Schema, shape, raw []byte, ok bool) {
	c.Lock()
	if c.m == nil || len(c.m) >= maxCreatedShapes {
		c.m = make(map[createdKey]createdEntry, maxCreatedShapes)
	}
	c.m[createdKey{s, string(shape)}] = createdEntry{raw: string(raw), ok: ok}
	c.Unlock()
}

// appendCreatedShape appends the shape of doc, an object without space
// around it, created with the top-level fields ignore ignored: the names
// ignored (each after its length, so that none runs into the next), then
// the document as its key (above). cacheable false for a document it does
// not take on (a syntax error outside arrays, an invalid scalar, a shape
// longer than maxCreatedShape): createdWritten reads it, uncached.
func appendCreatedShape(key, doc []byte, ignore []string) (_ []byte, cacheable bool) {
	for _, f := range ignore {
		key = appendShapeName(key, f)
	}
	key = append(key, '|')
	base := len(key)
	depth := 0 // the objects open; arrays are passed over whole
	last := 0  // doc[last:i] is kept as written, not copied yet
	i := 0
	for {
		// A value: the document's, or a member's.
		i = jsonskip.Space(doc, i)
		if i >= len(doc) {
			return key, false
		}
		switch c := doc[i]; {
		case c == '{':
			depth++
			if i = jsonskip.Space(doc, i+1); i < len(doc) && doc[i] == '}' {
				i++
				depth--
				break
			}
			var ok bool
			if i, ok = memberName(doc, i); !ok {
				return key, false
			}
			continue // its first value
		case c == '[':
			d := jsonReader{data: doc, i: i}
			if !d.pass() { // kept as written: only where it ends is needed
				return key, false
			}
			i = d.i
		case c == '"' || c == '-' || c >= '0' && c <= '9':
			end, ok := checkScalar(doc, i)
			if !ok {
				return key, false
			}
			key = append(key, doc[last:i]...)
			if c == '"' {
				key = append(key, `""`...)
			} else {
				key = append(key, '0')
			}
			i, last = end, end
		case c == 't' && jsonskip.HasLiteral(doc, i, "true"):
			i += len("true")
		case c == 'f' && jsonskip.HasLiteral(doc, i, "false"):
			i += len("false")
		case c == 'n' && jsonskip.HasLiteral(doc, i, "null"):
			i += len("null")
		default:
			return key, false
		}
		if len(key)-base+i-last > maxCreatedShape {
			return key, false
		}
		// After a value: the next member, or the end of objects.
		for {
			if depth == 0 {
				if i != len(doc) {
					return key, false
				}
				return append(key, doc[last:]...), true
			}
			if i = jsonskip.Space(doc, i); i >= len(doc) {
				return key, false
			}
			if doc[i] == '}' {
				i++
				depth--
				continue
			}
			if doc[i] != ',' {
				return key, false
			}
			var ok bool
			if i, ok = memberName(doc, i+1); !ok {
				return key, false
			}
			break
		}
	}
}

// memberName passes over a member's name, kept as written (its bytes are
// the key's), and the colon after it, from i (space before it allowed);
// it returns where the member's value starts.
func memberName(doc []byte, i int) (int, bool) {
	if i = jsonskip.Space(doc, i); i >= len(doc) || doc[i] != '"' {
		return i, false
	}
	if i = stringEnd(doc, i); i >= len(doc) {
		return i, false
	}
	if i = jsonskip.Space(doc, i); i >= len(doc) || doc[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// checkScalar checks the string or number at doc[i] as validStored does;
// it returns where the scalar ends.
func checkScalar(doc []byte, i int) (int, bool) {
	if doc[i] == '"' {
		return jsonskip.String(doc, i, jsonskip.Exact)
	}
	return jsonskip.Number(doc, i)
}

// stringEnd is the index just past the string at doc[i] ('"'), read as
// written (an escaped byte never ends it), or len(doc) when it has no
// end.
func stringEnd(doc []byte, i int) int {
	for i++; ; i += 2 {
		if i = quoteOrBackslash(doc, i); i >= len(doc) {
			return len(doc)
		}
		if doc[i] == '"' {
			return i + 1
		}
	}
}
