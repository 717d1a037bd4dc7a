package apiserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
	"github.com/kapi-dev/kapi/watch"
)

// An object's JSON element differs from its stored value (marshalStored)
// only by metadata.resourceVersion, which the store's revision supplies.
// Making the element from the stored bytes costs a copy instead of a
// json.Marshal, and spares the cache a second copy of every object's bytes:
// the store already holds them.

// storedElement returns the JSON element of the item's object made from its
// stored value (see appendStoredElement), or false. The elements of one
// request are made one after another in chunks that are never copied (a
// full one is replaced), so that each element stays valid for the
// request's life; the chunks come from a pool and return to it when the
// request ends (releaseElements), so that a list costs neither an
// allocation per item nor fresh zeroed memory. A watch, which keeps its
// buffer while it idles, makes its one element at a time in a buffer of
// its own, sized to the largest.
func (rq *request) storedElement(it *watch.Item) ([]byte, bool) {
	at, sep, ok := storedOffset(it)
	if !ok {
		return nil, false
	}
	need := len(it.Value) + storedMemberRoom
	if cap(rq.elements)-len(rq.elements) < need {
		switch {
		case rq.streaming || need > elementChunk:
			rq.releaseElements()
			rq.elements = make([]byte, 0, need)
		default:
			if rq.elements != nil {
				rq.chunks = append(rq.chunks, rq.elements)
			}
			rq.elements = (*elementChunks.Get().(*[]byte))[:0]
		}
	}
	start := len(rq.elements)
	var digits [maxRevisionDigits]byte
	rv := strconv.AppendInt(digits[:0], it.Revision, 10)
	buf := appendResourceVersion(append(rq.elements, it.Value[:at]...), rv, sep)
	buf = append(buf, it.Value[at:]...)
	rq.elements = buf
	return buf[start:len(buf):len(buf)], true
}

// storedOffset is where in the item's stored value its resourceVersion
// goes, and the separator it needs there (see resourceVersionOffset),
// found once and kept in the item's Mark. ok is false if the value is not
// in the shape marshalStored writes, or the item has no value: the
// caller then encodes the object. An item with a value is one the watch
// cache decoded from it, whose resourceVersion is its revision.
func storedOffset(it *watch.Item) (at int, sep byte, ok bool) {
	if it.Value == nil || it.Revision <= 0 {
		return 0, 0, false
	}
	m := it.Mark.Load()
	if m == 0 {
		if at, sep := resourceVersionOffset(it.Value); at >= 0 {
			m = markFound | uint64(sep)<<32 | uint64(uint32(at))
		} else {
			m = markNone
		}
		it.Mark.Store(m)
	}
	if m&markFound == 0 {
		return 0, 0, false
	}
	return int(uint32(m)), byte(m >> 32), true
}

// The item Mark's bits: the offset in the low 32, the separator in the
// next 8, then whether the offset was found, or there is none.
const (
	markFound = 1 << 40
	markNone  = 1 << 41
)

// elementChunk is the size of the pooled chunks elements are made in.
const elementChunk = 256 << 10

var elementChunks = sync.Pool{New: func() any {
	b := make([]byte, 0, elementChunk)
	return &b
}}

// releaseElements returns the request's chunks to the pool: no element
// made in them may be used afterwards.
func (rq *request) releaseElements() {
	for _, b := range append(rq.chunks, rq.elements) {
		if cap(b) == elementChunk {
			b = b[:0]
			elementChunks.Put(&b)
		}
	}
	rq.chunks, rq.elements = nil, nil
}

// appendStoredElement appends to dst the JSON element of an object from its
// stored value: the value with "resourceVersion":rv inserted where
// json.Marshal puts it, after the ObjectMeta fields declared before it, so
// that the bytes are those json.Marshal makes of the decoded object. ok is
// false if the value is not in the shape marshalStored writes (it already
// holds a resourceVersion, or does not parse), or rv is not a decimal
// revision: the caller then marshals the object.
func appendStoredElement(dst, stored []byte, rv string) ([]byte, bool) {
	if rv == "" {
		return append(dst, stored...), true // json.Marshal omits an empty resourceVersion
	}
	if !isRevision(rv) {
		return dst, false
	}
	at, sep := resourceVersionOffset(stored)
	if at < 0 {
		return dst, false
	}
	dst = appendResourceVersion(append(dst, stored[:at]...), rv, sep)
	return append(dst, stored[at:]...), true
}

// isRevision says rv is a decimal revision, which needs no JSON escaping.
func isRevision(rv string) bool {
	if rv == "" || len(rv) > maxRevisionDigits {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}

// appendResourceVersion appends the resourceVersion member with the
// separator resourceVersionOffset said the place needs.
func appendResourceVersion[S string | []byte](dst []byte, rv S, sep byte) []byte {
	if sep == ',' { // after the members before it
		dst = append(dst, ',')
	}
	dst = append(dst, `"resourceVersion":"`...)
	dst = append(dst, rv...)
	dst = append(dst, '"')
	if sep == '}' { // before the members after it
		dst = append(dst, ',')
	}
	return dst
}

// resourceVersionOffset finds where in a stored object's metadata the
// resourceVersion goes: before the first member that ObjectMeta declares
// after it, or at the end of the object. sep says which separator the
// insertion needs: '}' for a comma after it (a member follows), ',' for one
// before it (it follows a member), 0 for none (metadata is empty). at is -1
// if the value is not an object with a metadata object lacking a
// resourceVersion.
func resourceVersionOffset(b []byte) (at int, sep byte) {
	i := metadataValue(b)
	if i < 0 {
		return -1, 0
	}
	return metadataOffset(b, i)
}

// metadataValue is the offset of the value of the member "metadata" of the
// JSON object b, or -1.
func metadataValue(b []byte) int {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i++
	for {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' {
			return -1
		}
		key, next := readKey(b, i)
		if next < 0 {
			return -1
		}
		i = skipSpace(b, next)
		if string(key) == "metadata" {
			return i
		}
		if i = skipValue(b, i); i < 0 {
			return -1
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			return -1
		}
		i++
	}
}

// withManagedFields returns stored, an object's marshalStored encoding,
// with the object's metadata.managedFields replaced by managed: the bytes
// marshalStored makes of the object once its managedFields are managed,
// for a write that changes nothing else after encoding the object once.
// managedFields is ObjectMeta's last field, so json.Marshal writes it last
// in metadata, omitted when empty. ok is false if stored is not in that
// shape; the caller then marshals the object.
func withManagedFields(stored []byte, managed []kapi.ManagedFieldsEntry) (out []byte, ok bool, err error) {
	cut, end, members, ok := managedMember(stored)
	if !ok {
		return nil, false, nil
	}
	// out is what the store and the cache keep: made to its exact size
	// (a size class up costs every object), from managed's JSON written
	// first on the stack when it fits, else into room for its estimate.
	// Written directly when every string is plain and every field set
	// compact (as the field manager writes them): json.Marshal checks and
	// compacts each set again, a tenth of an update's instructions.
	var (
		room   [1 << 10]byte
		member []byte
	)
	if len(managed) > 0 {
		if member, err = managedJSON(room[:0], managed); err != nil {
			return nil, false, err
		}
	}
	out = make([]byte, 0, cut+len(`,"managedFields":`)+len(member)+len(stored)-end)
	out = append(out, stored[:cut]...)
	if member != nil {
		if members {
			out = append(out, ',')
		}
		out = append(append(out, `"managedFields":`...), member...)
	}
	return append(out, stored[end:]...), true, nil
}

// managedMember finds metadata.managedFields in stored, an object's
// marshalStored encoding: cut is where its member begins (with the comma
// before it), end where metadata closes (cut too when there is none);
// members says whether metadata has any other. ok is false if stored is
// not in the shape withManagedFields needs.
func managedMember(stored []byte) (cut, end int, members, ok bool) {
	i := metadataValue(stored)
	if i < 0 || stored[i] != '{' {
		return 0, 0, false, false
	}
	cut, end = -1, -1
	for j := i + 1; ; {
		j = skipSpace(stored, j)
		if j < len(stored) && stored[j] == '}' {
			end = j
			break
		}
		if cut >= 0 {
			return 0, 0, false, false // managedFields was not the last member
		}
		key, next := readKey(stored, j)
		if next < 0 {
			return 0, 0, false, false
		}
		if string(key) == "managedFields" {
			cut = j
		} else {
			members = true
		}
		if j = skipValue(stored, skipSpace(stored, next)); j < 0 {
			return 0, 0, false, false
		}
		if j = skipSpace(stored, j); j < len(stored) && stored[j] == ',' {
			j++
		}
	}
	if cut < 0 {
		cut = end
	} else if members { // take the comma before it too
		for cut--; cut > i && stored[cut] != ','; cut-- {
		}
		if cut == i {
			return 0, 0, false, false
		}
	}
	return cut, end, members, true
}

// equalUnmanaged says whether bare, an object's marshalStored encoding
// without managedFields, is stored but for stored's managedFields.
func equalUnmanaged(bare, stored []byte) bool {
	// Where they are equal, bare is stored less a run of bytes, so what
	// follows their common prefix in bare ends stored too: a changed object
	// is told apart without looking for managedFields.
	p := commonPrefix(bare, stored)
	if len(bare) > len(stored) || !bytes.Equal(bare[p:], stored[len(stored)-(len(bare)-p):]) {
		return false
	}
	cut, end, _, ok := managedMember(stored)
	return ok && len(bare) == cut+len(stored)-end && bytes.Equal(bare[:cut], stored[:cut]) && bytes.Equal(bare[cut:], stored[end:])
}

// commonPrefix is the length of what a and b begin with alike.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n && string(a[i:i+8]) == string(b[i:i+8]); i += 8 {
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// marshalUnmanaged is marshalStored of obj, an object of r, without its
// managedFields, which withManagedFields puts in once the write knows
// them: encoding/json would check every field set of them again. bare is
// false, and value has them, for a type withManagedFields cannot splice.
func (r *resource) marshalUnmanaged(obj kapi.Object) (value []byte, bare bool, err error) {
	if !r.objType.plainMetadata {
		value, err = marshalStored(obj)
		return value, false, err
	}
	meta := obj.GetObjectMeta()
	managed := meta.ManagedFields
	meta.ManagedFields = nil
	defer func() { meta.ManagedFields = managed }()
	value, err = marshalStored(obj)
	return value, true, err
}

func metadataOffset(b []byte, i int) (int, byte) {
	if i >= len(b) || b[i] != '{' {
		return -1, 0
	}
	i++
	members := 0
	for {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' {
			if members == 0 {
				return i, 0
			}
			return i, ','
		}
		key, next := readKey(b, i)
		if next < 0 {
			return -1, 0
		}
		switch string(key) {
		case "name", "generateName", "namespace", "selfLink", "uid":
		case "resourceVersion":
			return -1, 0
		default:
			return i, '}'
		}
		if i = skipValue(b, skipSpace(b, next)); i < 0 {
			return -1, 0
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i++
		}
		members++
	}
}

// readKey reads an object member's key at b[i] and its colon, returning the
// key as written (escapes are left as they are: the keys looked for have
// none) and the offset after the colon, or -1.
func readKey(b []byte, i int) ([]byte, int) {
	if i >= len(b) || b[i] != '"' {
		return nil, -1
	}
	end := skipString(b, i)
	if end < 0 {
		return nil, -1
	}
	key := b[i+1 : end-1]
	j := skipSpace(b, end)
	if j >= len(b) || b[j] != ':' {
		return nil, -1
	}
	return key, j + 1
}

// skipString returns the offset after the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		escaped := false // by an odd run of backslashes before the quote
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			escaped = !escaped
		}
		if !escaped {
			return j + 1
		}
	}
}

// skipValue returns the offset after the JSON value starting at b[i], or
// -1. It checks only as much of the syntax as finding the end needs: the
// value was written by json.Marshal.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// storedPieces are the JSON element of the item's object made from its
// stored value without copying it: the value up to where the
// resourceVersion goes, the resourceVersion member (written at the start of
// room, which must have storedMemberRoom bytes: the caller sizes it so that
// it never moves), and the rest of the value. ok is false when the element
// cannot be made so; the caller then uses element.
func (rq *request) storedPieces(it *watch.Item, room []byte) (before, member, after []byte, ok bool) {
	if !rq.res.objType.plainMetadata {
		return nil, nil, nil, false
	}
	at, sep, ok := storedOffset(it)
	if !ok {
		return nil, nil, nil, false
	}
	var digits [maxRevisionDigits]byte
	m := appendResourceVersion(room[:0], strconv.AppendInt(digits[:0], it.Revision, 10), sep)
	return it.Value[:at], m[:len(m):len(m)], it.Value[at:], true
}

// maxRevisionDigits bounds a resourceVersion's decimal digits (an int64's).
const maxRevisionDigits = 19

// storedMemberRoom is the most of its room storedPieces writes.
const storedMemberRoom = len(`,"resourceVersion":"",`) + maxRevisionDigits

// managedJSON is json.Marshal(managed), written into room when it fits,
// else into a buffer of its estimated size, directly when appendManaged
// can (managedSize).
func managedJSON(room []byte, managed []kapi.ManagedFieldsEntry) ([]byte, error) {
	size, plain := managedSize(managed)
	switch {
	case !plain:
		return json.Marshal(managed)
	case size > cap(room):
		room = make([]byte, 0, size)
	}
	return appendManaged(room[:0], managed), nil
}

// managedSize says whether appendManaged writes managed as json.Marshal
// does (every string plain, every field set compact), and about how many
// bytes it takes.
func managedSize(managed []kapi.ManagedFieldsEntry) (size int, plain bool) {
	size = 2
	for i := range managed {
		e := &managed[i]
		if !plainJSONString(e.Manager) || !plainJSONString(e.Operation) || !plainJSONString(e.APIVersion) ||
			!plainJSONString(e.FieldsType) || !plainJSONString(e.Subresource) || e.FieldsV1 != nil && !compactJSON(e.FieldsV1.Raw) {
			return 0, false
		}
		// Names, punctuation and a time take 140 bytes at most; null
		// field sets 4.
		size += 140 + len(e.Manager) + len(e.Operation) + len(e.APIVersion) + len(e.FieldsType) + len(e.Subresource)
		if e.FieldsV1 != nil {
			size += 4 + len(e.FieldsV1.Raw)
		}
	}
	return size, true
}

// appendManaged appends managed, non-nil and plain (managedSize), as
// json.Marshal writes it.
func appendManaged(out []byte, managed []kapi.ManagedFieldsEntry) []byte {
	out = append(out, '[')
	for i := range managed {
		e := &managed[i]
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '{')
		first := true
		member := func(name string) {
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(append(append(out, '"'), name...), `":`...)
		}
		str := func(name, v string) {
			if v != "" {
				member(name)
				out = append(append(append(out, '"'), v...), '"')
			}
		}
		str("manager", e.Manager)
		str("operation", e.Operation)
		str("apiVersion", e.APIVersion)
		if e.Time != nil {
			member("time")
			out = jsonwrite.AppendTime(out, e.Time.Time, time.RFC3339)
		}
		str("fieldsType", e.FieldsType)
		if e.FieldsV1 != nil {
			member("fieldsV1")
			if e.FieldsV1.Raw == nil {
				out = append(out, "null"...)
			} else {
				out = append(out, e.FieldsV1.Raw...)
			}
		}
		str("subresource", e.Subresource)
		out = append(out, '}')
	}
	return append(out, ']')
}

// plainJSONString says json.Marshal writes s as it is between quotes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// compactJSON says json.Marshal writes raw, a JSON value a Marshaler
// returned, as it is (jsonimage.RawWrittenAsIs) and raw is valid JSON.
// nil is valid: FieldsV1 writes null.
func compactJSON(raw []byte) bool {
	return raw == nil || jsonimage.RawWrittenAsIs(raw) && validSets.valid(raw)
}

// validSets remembers field sets found valid JSON: the same few sets come
// back with every write of a workload, and checking one again costs as
// much as json.Marshal's own check, which appendManaged skips.
var validSets = validMemo{max: 512}

type validMemo struct {
	mu  sync.Mutex
	m   map[string]struct{}
	max int
}

func (v *validMemo) valid(raw []byte) bool {
	v.mu.Lock()
	_, ok := v.m[string(raw)]
	v.mu.Unlock()
	if ok {
		return true
	}
	if !json.Valid(raw) {
		return false
	}
	v.mu.Lock()
	if len(v.m) >= v.max {
		clear(v.m) // a workload's sets come back soon
	}
	if v.m == nil {
		v.m = make(map[string]struct{})
	}
	v.m[string(raw)] = struct{}{}
	v.mu.Unlock()
	return true
}

// remarshalManaged is marshalStored(obj) for obj, whose encoding before
// its managedFields changed was stored: the new managedFields spliced into
// stored (withManagedFields) when the type's JSON is plain enough.
func (rq *request) remarshalManaged(obj kapi.Object, stored []byte) ([]byte, error) {
	if rq.res.objType.plainMetadata && !rq.res.converts() { // obj is of the request's type
		out, ok, err := withManagedFields(stored, obj.GetObjectMeta().ManagedFields)
		if ok || err != nil {
			return out, err
		}
	}
	return marshalStored(obj)
}
