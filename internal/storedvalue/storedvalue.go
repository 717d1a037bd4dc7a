package storedvalue

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/deepequal"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
	"github.com/kapi-dev/kapi/internal/splice"
)

// Marshal is the stored value of obj, in a slice of its own.
func Marshal(obj kapi.Object) ([]byte, error) {
	value, _, _, err := encode(obj, false)
	return value, err
}

// encode is Marshal; if lend, written in a buffer lent by jsonwrite where
// it can be (lent not nil: see jsonwrite.Buffer), with the offset of
// metadata's closing brace in it, or -1 where that is not known.
func encode(obj kapi.Object, lend bool) (value []byte, lent *jsonwrite.Buffer, metaEnd int, err error) {
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	meta.ResourceVersion = ""
	defer func() { meta.ResourceVersion = rv }()
	v := reflect.ValueOf(obj)
	ok := false
	metaEnd = -1
	if enc := encoderOf(v.Type()); enc.Encoder != nil && lend {
		var end int
		if value, lent, end, ok = enc.LendEnd(v, enc.metadata); ok && end > 0 {
			metaEnd = end - 1
		}
	} else if enc.Encoder != nil {
		value, ok = enc.Marshal(v)
	}
	if !ok {
		value, err = json.Marshal(obj)
	}
	return value, lent, metaEnd, err
}

// encoders holds the typeEncoder of each object type, by the type.
// Marshal takes any object, of a registered type or not, and finds its
// Encoder here in a few nanoseconds; registering a type compiles it ahead
// of the first write.
var encoders sync.Map

// typeEncoder is the *jsonwrite.Encoder of an object type (nil if
// json.Marshal writes all its values), with the index of the field
// "metadata" in jsonfields.Of's list of its fields (-1 if none).
type typeEncoder struct {
	*jsonwrite.Encoder
	metadata int
}

// Encoder returns the Encoder that writes objects of type t, compiling it
// the first time.
func Encoder(t reflect.Type) *jsonwrite.Encoder { return encoderOf(t).Encoder }

func encoderOf(t reflect.Type) typeEncoder {
	enc, ok := encoders.Load(t)
	if !ok {
		te := typeEncoder{Encoder: jsonwrite.New(t), metadata: -1}
		st := t
		if st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		for i, f := range jsonfields.Of(st) {
			if f.Name == "metadata" && f.Type == reflect.TypeFor[kapi.ObjectMeta]() {
				te.metadata = i
			}
		}
		enc, _ = encoders.LoadOrStore(t, te)
	}
	return enc.(typeEncoder)
}

// Value is the stored value a write makes of an object, encoded before
// its managedFields are recorded: without them (Bare) where the type's
// JSON is plain enough for splice to put them back, in a buffer lent by
// jsonwrite (given back by Done).
type Value struct {
	Bytes []byte
	Bare  bool
	lent  *jsonwrite.Buffer
	// metaEnd is the offset in Bytes of metadata's closing brace, where
	// WithManaged puts managedFields, as the encoder saw it write it;
	// -1 if not known.
	metaEnd int
}

// Unmanaged is the Value of obj: without its managedFields when plain (its
// type's JSON is plain enough for splice.WithManagedFields), for
// encoding/json would check every field set of them again; else Marshal's.
func Unmanaged(obj kapi.Object, plain bool) (v Value, err error) {
	v.metaEnd = -1
	if !plain {
		v.Bytes, err = Marshal(obj)
		return v, err
	}
	meta := obj.GetObjectMeta()
	managed := meta.ManagedFields
	meta.ManagedFields = nil
	defer func() { meta.ManagedFields = managed }()
	v.Bare = true
	v.Bytes, v.lent, v.metaEnd, err = encode(obj, true)
	return v, err
}

// Done gives back v's buffer, if lent: v's Bytes are not read again.
func (v Value) Done() { v.lent.Return() }

// WithManaged is the stored value of obj, v's object, with the
// managedFields it has now (changed says whether they changed since v was
// encoded), in a slice of its own unless v's own (not bare) is that:
// spliced into v when splices (obj is of the type v was encoded from, with
// plain JSON), else marshaled again.
func (v Value) WithManaged(obj kapi.Object, changed, splices bool) ([]byte, error) {
	if !v.Bare && !changed {
		return v.Bytes, nil
	}
	if splices {
		out, ok, err := splice.InsertManagedFields(v.Bytes, v.metaEnd, obj.GetObjectMeta().ManagedFields)
		if ok || err != nil {
			return out, err
		}
	}
	return Marshal(obj)
}

// Unchanged says whether v, next's, is what stored holds of cur.
// managedFields equal to cur's, which decoding stored made, stand for the
// stored ones; others are encoded to be compared, unless the rest differs
// (most writes: their managedFields changed with it).
func (v Value) Unchanged(next, cur kapi.Object, stored []byte) (bool, error) {
	if !v.Bare {
		return bytes.Equal(v.Bytes, stored), nil
	}
	managed := &next.GetObjectMeta().ManagedFields // through pointers: a slice in an interface is an allocation
	if same := splice.EqualUnmanaged(v.Bytes, stored); !same || deepequal.Values(reflect.ValueOf(managed).Elem(), reflect.ValueOf(&cur.GetObjectMeta().ManagedFields).Elem()) {
		return same, nil
	}
	full, ok, err := splice.InsertManagedFields(v.Bytes, v.metaEnd, *managed)
	if !ok || err != nil {
		return false, err
	}
	return bytes.Equal(full, stored), nil
}
