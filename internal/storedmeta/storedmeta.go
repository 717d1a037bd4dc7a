package storedmeta

import (
	"bytes"
	"strconv"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonskip"
	"github.com/kapi-dev/kapi/watch"
)

// Meta returns the metadata of it's object (shared: read-only): read from
// its stored value if plain says that value is the object's json.Marshal
// (see the package's invariant) and the object has no ownerReferences,
// finalizers or deletionTimestamp, else the metadata of decode's object.
// The metadata read from the value holds only the object's name,
// namespace, uid and resourceVersion (its item's revision, as the decoded
// object's).
//
// An item that holds its object already (watch.Item.Kept: a fresh write's,
// one decoded lately) gives that object's metadata, as decode would,
// without reading the value: two controllers read every write's, and
// skipping its managedFields cost each a microsecond and a half per write.
func Meta(it *watch.Item, plain bool, decode func(*watch.Item) (kapi.Object, error)) (*kapi.ObjectMeta, error) {
	if obj, ok := it.Kept(); ok {
		if o, ok := obj.(kapi.Object); ok {
			return o.GetObjectMeta(), nil
		}
	}
	if plain && it.Value != nil {
		if m, ok := read(it.Value); ok {
			m.ResourceVersion = strconv.FormatInt(it.Revision, 10)
			return m, nil
		}
	}
	obj, err := decode(it)
	if err != nil {
		return nil, err
	}
	return obj.GetObjectMeta(), nil
}

// read returns the name, namespace and uid of the object stored as b, and
// true if its metadata holds no ownerReferences, finalizers or
// deletionTimestamp and those strings no escapes or invalid UTF-8.
func read(b []byte) (*kapi.ObjectMeta, bool) {
	i, ok := member(b, 0, "metadata")
	if !ok || i >= len(b) || b[i] != '{' {
		return nil, false
	}
	m := &kapi.ObjectMeta{}
	i = jsonskip.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return m, true
	}
	for {
		key, next, ok := readKey(b, i)
		if !ok {
			return nil, false
		}
		i = jsonskip.Space(b, next)
		var dst *string
		switch string(key) {
		case "ownerReferences", "finalizers", "deletionTimestamp":
			return nil, false // what the collector acts on: decoded
		case "name":
			dst = &m.Name
		case "namespace":
			dst = &m.Namespace
		case "uid":
			dst = &m.UID
		}
		if dst != nil {
			if i >= len(b) || b[i] != '"' {
				return nil, false
			}
			// Exact: a string holding invalid UTF-8 is decoded, not
			// copied (encoding/json reads each invalid byte as U+FFFD).
			end, ok := jsonskip.String(b, i, jsonskip.Exact)
			if !ok || bytes.IndexByte(b[i+1:end-1], '\\') >= 0 {
				return nil, false
			}
			*dst, i = string(b[i+1:end-1]), end
		} else if i, ok = jsonskip.Value(b, i, 2, jsonskip.AnyText); !ok {
			return nil, false
		}
		i = jsonskip.Space(b, i)
		switch {
		case i < len(b) && b[i] == '}':
			return m, true
		case i < len(b) && b[i] == ',':
			i++
		default:
			return nil, false
		}
	}
}

// member returns the offset of the value of the member name of the JSON
// object at b[i], and whether there is one.
func member(b []byte, i int, name string) (int, bool) {
	i = jsonskip.Space(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = jsonskip.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return 0, false
	}
	for {
		key, next, ok := readKey(b, i)
		if !ok {
			return 0, false
		}
		i = jsonskip.Space(b, next)
		if string(key) == name {
			return i, true
		}
		if i, ok = jsonskip.Value(b, i, 1, jsonskip.AnyText); !ok {
			return 0, false
		}
		i = jsonskip.Space(b, i)
		if i >= len(b) || b[i] != ',' {
			return 0, false
		}
		i++
	}
}

// readKey reads the member name at b[i] (white space before it allowed)
// and the colon after it; it returns the name and where the value may
// start. A name with an escape in it is not read: a value json.Marshal
// wrote has none in the names of metadata.
func readKey(b []byte, i int) (key []byte, next int, ok bool) {
	i = jsonskip.Space(b, i)
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end, ok := jsonskip.String(b, i, jsonskip.AnyText)
	if !ok || bytes.IndexByte(b[i+1:end-1], '\\') >= 0 {
		return nil, 0, false
	}
	next = jsonskip.Space(b, end)
	if next >= len(b) || b[next] != ':' {
		return nil, 0, false
	}
	return b[i+1 : end-1], next + 1, true
}
