package splice

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/jsonskip"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// Element appends to dst the JSON element of an object from its
// stored value: the value with "resourceVersion":rv inserted where
// json.Marshal puts it, after the ObjectMeta fields declared before it, so
// that the bytes are those json.Marshal makes of the decoded object. ok is
// false if the value is not in the shape a stored value has (it already
// holds a resourceVersion, or does not parse), or rv is not a decimal
// revision: the caller then marshals the object.
func Element(dst, stored []byte, rv string) ([]byte, bool) {
	if rv == "" {
		return append(dst, stored...), true // json.Marshal omits an empty resourceVersion
	}
	if !IsRevision(rv) {
		return dst, false
	}
	at, sep := ResourceVersionOffset(stored)
	if at < 0 {
		return dst, false
	}
	dst = AppendResourceVersion(append(dst, stored[:at]...), rv, sep)
	return append(dst, stored[at:]...), true
}

// IsRevision says rv is a decimal revision, which needs no JSON escaping.
func IsRevision(rv string) bool {
	if rv == "" || len(rv) > MaxRevisionDigits {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}

// AppendResourceVersion appends the resourceVersion member with the
// separator ResourceVersionOffset said the place needs.
func AppendResourceVersion[S string | []byte](dst []byte, rv S, sep byte) []byte {
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

// ResourceVersionOffset finds where in a stored object's metadata the
// resourceVersion goes: before the first member that ObjectMeta declares
// after it, or at the end of the object. sep says which separator the
// insertion needs: '}' for a comma after it (a member follows), ',' for one
// before it (it follows a member), 0 for none (metadata is empty). at is -1
// if the value is not an object with a metadata object lacking a
// resourceVersion.
func ResourceVersionOffset(b []byte) (at int, sep byte) {
	i := metadataValue(b)
	if i < 0 {
		return -1, 0
	}
	return metadataOffset(b, i)
}

// metadataValue is the offset of the value of the member "metadata" of the
// JSON object b, or -1.
func metadataValue(b []byte) int {
	i := jsonskip.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i++
	for {
		i = jsonskip.Space(b, i)
		if i < len(b) && b[i] == '}' {
			return -1
		}
		key, next := readKey(b, i)
		if next < 0 {
			return -1
		}
		i = jsonskip.Space(b, next)
		if string(key) == "metadata" {
			return i
		}
		if i = skipValue(b, i); i < 0 {
			return -1
		}
		i = jsonskip.Space(b, i)
		if i >= len(b) || b[i] != ',' {
			return -1
		}
		i++
	}
}

// WithManagedFields returns stored, an object's stored value, with the
// object's metadata.managedFields replaced by managed: the stored value of
// the object once its managedFields are managed, for a write that changes
// nothing else after encoding the object once.
// managedFields is ObjectMeta's last field, so json.Marshal writes it last
// in metadata, omitted when empty. ok is false if stored is not in that
// shape; the caller then marshals the object.
func WithManagedFields(stored []byte, managed []kapi.ManagedFieldsEntry) (out []byte, ok bool, err error) {
	cut, end, members, ok := managedMember(stored)
	if !ok {
		return nil, false, nil
	}
	return joinManaged(stored, cut, end, members, managed)
}

// InsertManagedFields is WithManagedFields of bare, a stored value with
// no managedFields whose metadata closes at bare[end], as the encoder that
// wrote it said: the place is not looked for. Where end is not known (-1)
// or bare[end] is not a closing brace, it is WithManagedFields.
func InsertManagedFields(bare []byte, end int, managed []kapi.ManagedFieldsEntry) (out []byte, ok bool, err error) {
	if end <= 0 || end >= len(bare) || bare[end] != '}' {
		return WithManagedFields(bare, managed)
	}
	// No member's value ends in '{': metadata has members unless it is {}.
	return joinManaged(bare, end, end, bare[end-1] != '{', managed)
}

// joinManaged is stored with what lies between cut and end replaced by
// the member managedFields of managed, comma first if members.
func joinManaged(stored []byte, cut, end int, members bool, managed []kapi.ManagedFieldsEntry) (out []byte, ok bool, err error) {
	// out is what the store and the cache keep: made to its exact size
	// (a size class up costs every object), from managed's JSON written
	// first into a pooled buffer when it fits (a manager's entry holds the
	// object's fields, a kilobyte or more), else into room for its estimate.
	// Written directly when every string is plain and every field set
	// compact (as the field manager writes them): json.Marshal checks and
	// compacts each set again, a tenth of an update's instructions.
	var member []byte
	if len(managed) > 0 {
		room := managedRooms.Get().(*[]byte)
		defer managedRooms.Put(room)
		if member, err = ManagedJSON((*room)[:0], managed); err != nil {
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

// managedRooms are buffers WithManagedFields writes managedFields into.
var managedRooms = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// managedMember finds metadata.managedFields in stored, an object's
// stored value: cut is where its member begins (with the comma
// before it), end where metadata closes (cut too when there is none);
// members says whether metadata has any other. ok is false if stored is
// not in the shape WithManagedFields needs.
func managedMember(stored []byte) (cut, end int, members, ok bool) {
	i := metadataValue(stored)
	if i < 0 || stored[i] != '{' {
		return 0, 0, false, false
	}
	cut, end = -1, -1
	for j := i + 1; ; {
		j = jsonskip.Space(stored, j)
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
		if j = skipValue(stored, jsonskip.Space(stored, next)); j < 0 {
			return 0, 0, false, false
		}
		if j = jsonskip.Space(stored, j); j < len(stored) && stored[j] == ',' {
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

// EqualUnmanaged says whether bare, an object's stored value
// without managedFields, is stored but for stored's managedFields.
func EqualUnmanaged(bare, stored []byte) bool {
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

func metadataOffset(b []byte, i int) (int, byte) {
	if i >= len(b) || b[i] != '{' {
		return -1, 0
	}
	i++
	members := 0
	for {
		i = jsonskip.Space(b, i)
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
		if i = skipValue(b, jsonskip.Space(b, next)); i < 0 {
			return -1, 0
		}
		i = jsonskip.Space(b, i)
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
	end, ok := jsonskip.String(b, i, jsonskip.AnyText)
	if !ok {
		return nil, -1
	}
	key := b[i+1 : end-1]
	j := jsonskip.Space(b, end)
	if j >= len(b) || b[j] != ':' {
		return nil, -1
	}
	return key, j + 1
}

// skipValue returns the offset after the JSON value starting at b[i], a
// member of metadata, or -1 (jsonskip.Value).
func skipValue(b []byte, i int) int {
	end, ok := jsonskip.Value(b, i, 2, jsonskip.AnyText)
	if !ok {
		return -1
	}
	return end
}

// MaxRevisionDigits bounds a resourceVersion's decimal digits (an int64's).
const MaxRevisionDigits = 19

// MemberRoom is the most AppendResourceVersion appends: room for it
// never grows.
const MemberRoom = len(`,"resourceVersion":"",`) + MaxRevisionDigits

// ManagedJSON is json.Marshal(managed), written into room when it fits,
// else into a buffer of its estimated size, directly when appendManaged
// can (managedSize).
func ManagedJSON(room []byte, managed []kapi.ManagedFieldsEntry) ([]byte, error) {
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
