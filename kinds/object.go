package kinds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/schema"
)

// Object is an object of a kind defined at run time: its type and object
// metadata as every kind's, and the rest of its document as decoded JSON
// values (map[string]any, []any, string, bool, int64, float64, nil: what
// schema.DecodeJSON makes). Its JSON is a custom resource's as
// kube-apiserver writes it: members in alphabetical order.
//
// The watch cache holds an object as its stored bytes and decodes the
// recently used ones only, so the decoded form costs memory only for
// those; see the package documentation for the figures.
type Object struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	// Status is the member "status", apart from the rest so that the
	// status subresource can tell it from what the object's own writes
	// change; nil when absent.
	Status any `json:"status,omitempty"`
	// Content is every other member: spec, data, whatever the schema has.
	Content map[string]any `json:"-"`

	// unknownMeta are the members of metadata that an ObjectMeta does not
	// hold, found when the object was decoded: pruned, and reported as
	// unknown fields as a custom resource's are.
	unknownMeta []string
}

var (
	_ kapi.Object     = (*Object)(nil)
	_ json.Marshaler  = (*Object)(nil)
	_ codec.AnyFields = (*Object)(nil)
)

// AnyJSONFields has the server's check of a request body's fields report
// the fields the document repeats (kube-apiserver: strict decoding error:
// duplicate field "spec.name"), as it does a typed object's; its unknown
// fields are the schema's to find (see Prune).
func (*Object) AnyJSONFields() {}

// errNotObject is the error of a document that is not a JSON object.
var errNotObject = errors.New("the document is not a JSON object")

// MarshalJSON writes the object with its members in alphabetical order, as
// kube-apiserver writes custom resources.
func (o *Object) MarshalJSON() ([]byte, error) {
	meta, err := json.Marshal(&o.ObjectMeta)
	if err != nil {
		return nil, err
	}
	if o.CreationTimestamp.IsZero() {
		// A custom resource's metadata is a map in kube-apiserver: one
		// without a creation time (a watch's BOOKMARK) has no member for
		// it, where a typed object's has "creationTimestamp":null.
		meta = withoutNullCreation(meta)
	}
	keys := make([]string, 0, len(o.Content)+4)
	for k := range o.Content {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue // the fields' own
		}
		keys = append(keys, k)
	}
	if o.APIVersion != "" {
		keys = append(keys, "apiVersion")
	}
	if o.Kind != "" {
		keys = append(keys, "kind")
	}
	keys = append(keys, "metadata")
	if o.Status != nil {
		keys = append(keys, "status")
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		var v []byte
		switch k {
		case "apiVersion":
			v, err = json.Marshal(o.APIVersion)
		case "kind":
			v, err = json.Marshal(o.Kind)
		case "metadata":
			v = meta
		case "status":
			v, err = json.Marshal(o.Status)
		default:
			v, err = json.Marshal(o.Content[k])
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// withoutNullCreation is metadata's JSON without "creationTimestamp":null.
func withoutNullCreation(meta []byte) []byte {
	for _, m := range []string{`"creationTimestamp":null,`, `,"creationTimestamp":null`, `"creationTimestamp":null`} {
		if i := bytes.Index(meta, []byte(m)); i >= 0 {
			return append(meta[:i:i], meta[i+len(m):]...)
		}
	}
	return meta
}

// metaType is what a custom resource's metadata is decoded as.
var metaType = reflect.TypeFor[kapi.ObjectMeta]()

// UnmarshalJSON reads a whole object, replacing what o held. The last of
// duplicate members wins, as in kube-apiserver.
func (o *Object) UnmarshalJSON(data []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	if members == nil {
		return errNotObject
	}
	*o = Object{}
	for k, raw := range members {
		var err error
		switch k {
		case "apiVersion":
			err = json.Unmarshal(raw, &o.APIVersion)
		case "kind":
			err = json.Unmarshal(raw, &o.Kind)
		case "metadata":
			if err = codec.UnmarshalJSON(raw, &o.ObjectMeta); err == nil {
				if report, _, cerr := codec.CheckJSONFields(raw, metaType); cerr == nil {
					for _, f := range report.Unknown {
						o.unknownMeta = append(o.unknownMeta, "metadata."+f)
					}
				}
			}
		case "status":
			if o.Status, err = schema.DecodeJSON(raw); err == nil && !finite(o.Status) {
				err = errInfinite
			}
		default:
			var v any
			if v, err = schema.DecodeJSON(raw); err == nil && !finite(v) {
				err = errInfinite
			}
			if err == nil {
				if o.Content == nil {
					o.Content = make(map[string]any, len(members))
				}
				o.Content[k] = v
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// errInfinite refuses a number no float64 holds, as decoding one into a
// Go value fails in kube-apiserver.
var errInfinite = errors.New("a number is out of the range of a float64")

// finite says whether every number in v is finite.
func finite(v any) bool {
	switch v := v.(type) {
	case float64:
		return !math.IsInf(v, 0) && !math.IsNaN(v)
	case map[string]any:
		for _, x := range v {
			if !finite(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !finite(x) {
				return false
			}
		}
	}
	return true
}

// body is the object's document without apiVersion, kind and metadata, as
// the schema engine takes it; a new map, sharing the members' values.
func (o *Object) body() map[string]any {
	m := make(map[string]any, len(o.Content)+1)
	for k, v := range o.Content {
		m[k] = v
	}
	if o.Status != nil {
		m["status"] = o.Status
	}
	return m
}

// schemaView is the object as its schema validates it: its body with
// apiVersion, kind and the names of its metadata, the only members of
// metadata a schema may restrict. kube-apiserver validates the whole
// object, so a root's required: [metadata] (Argo CD's Application has it)
// holds and a pattern on metadata.name applies.
func (o *Object) schemaView() map[string]any {
	m := o.body()
	if o.APIVersion != "" {
		m["apiVersion"] = o.APIVersion
	}
	if o.Kind != "" {
		m["kind"] = o.Kind
	}
	meta := map[string]any{}
	if o.Name != "" {
		meta["name"] = o.Name
	}
	if o.GenerateName != "" {
		meta["generateName"] = o.GenerateName
	}
	m["metadata"] = meta
	return m
}

// ruleView is the object as x-kubernetes-validations rules see it: its
// body with apiVersion, kind and metadata, as a decoded JSON document.
func (o *Object) ruleView() map[string]any {
	m := o.body()
	m["apiVersion"], m["kind"] = o.APIVersion, o.Kind
	if data, err := json.Marshal(&o.ObjectMeta); err == nil {
		if meta, err := schema.DecodeJSON(data); err == nil {
			m["metadata"] = meta
		}
	}
	return m
}

// setBody makes m the object's document besides apiVersion, kind and
// metadata.
func (o *Object) setBody(m map[string]any) {
	o.Status = m["status"]
	delete(m, "status")
	if len(m) == 0 {
		m = nil
	}
	o.Content = m
}

// value is the object as a decoded JSON value, metadata included, for the
// paths of printer columns and selectable fields.
func (o *Object) value(withMeta bool) map[string]any {
	m := o.body()
	m["apiVersion"], m["kind"] = o.APIVersion, o.Kind
	if withMeta {
		if data, err := json.Marshal(&o.ObjectMeta); err == nil {
			m["metadata"], _ = schema.DecodeJSON(data)
		}
	}
	return m
}
