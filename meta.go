package kapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Object is what every resource type satisfies by embedding TypeMeta and
// ObjectMeta: a pointer to the struct gives access to both.
type Object interface {
	GetTypeMeta() *TypeMeta
	GetObjectMeta() *ObjectMeta
}

// TypeMeta names an object's kind and the group/version it is expressed in.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,2,opt,name=apiVersion"`
}

// GetTypeMeta gives access to the TypeMeta of any struct that embeds it.
func (t *TypeMeta) GetTypeMeta() *TypeMeta { return t }

// ObjectMeta is the metadata every persisted object carries.
type ObjectMeta struct {
	Name                       string               `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	GenerateName               string               `json:"generateName,omitempty" protobuf:"bytes,2,opt,name=generateName"`
	Namespace                  string               `json:"namespace,omitempty" protobuf:"bytes,3,opt,name=namespace"`
	UID                        string               `json:"uid,omitempty" protobuf:"bytes,5,opt,name=uid"`
	ResourceVersion            string               `json:"resourceVersion,omitempty" protobuf:"bytes,6,opt,name=resourceVersion"`
	Generation                 int64                `json:"generation,omitempty" protobuf:"varint,7,opt,name=generation"`
	CreationTimestamp          Time                 `json:"creationTimestamp,omitempty" protobuf:"bytes,8,opt,name=creationTimestamp"`
	DeletionTimestamp          *Time                `json:"deletionTimestamp,omitempty" protobuf:"bytes,9,opt,name=deletionTimestamp"`
	DeletionGracePeriodSeconds *int64               `json:"deletionGracePeriodSeconds,omitempty" protobuf:"varint,10,opt,name=deletionGracePeriodSeconds"`
	Labels                     map[string]string    `json:"labels,omitempty" protobuf:"bytes,11,rep,name=labels"`
	Annotations                map[string]string    `json:"annotations,omitempty" protobuf:"bytes,12,rep,name=annotations"`
	OwnerReferences            []OwnerReference     `json:"ownerReferences,omitempty" patchStrategy:"merge" patchMergeKey:"uid" protobuf:"bytes,13,rep,name=ownerReferences"`
	Finalizers                 []string             `json:"finalizers,omitempty" patchStrategy:"merge" protobuf:"bytes,14,rep,name=finalizers"`
	ManagedFields              []ManagedFieldsEntry `json:"managedFields,omitempty" protobuf:"bytes,17,rep,name=managedFields"`
}

// GetObjectMeta gives access to the ObjectMeta of any struct that embeds it.
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// OwnerReference points from a dependent object to its owner.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion" protobuf:"bytes,5,opt,name=apiVersion"`
	Kind               string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	Name               string `json:"name" protobuf:"bytes,3,opt,name=name"`
	UID                string `json:"uid" protobuf:"bytes,4,opt,name=uid"`
	Controller         *bool  `json:"controller,omitempty" protobuf:"varint,6,opt,name=controller"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty" protobuf:"varint,7,opt,name=blockOwnerDeletion"`
}

// ManagedFieldsEntry records which fields one manager set, and how.
type ManagedFieldsEntry struct {
	Manager     string    `json:"manager,omitempty" protobuf:"bytes,1,opt,name=manager"`
	Operation   string    `json:"operation,omitempty" protobuf:"bytes,2,opt,name=operation,casttype=ManagedFieldsOperationType"`
	APIVersion  string    `json:"apiVersion,omitempty" protobuf:"bytes,3,opt,name=apiVersion"`
	Time        *Time     `json:"time,omitempty" protobuf:"bytes,4,opt,name=time"`
	FieldsType  string    `json:"fieldsType,omitempty" protobuf:"bytes,6,opt,name=fieldsType"`
	FieldsV1    *FieldsV1 `json:"fieldsV1,omitempty" protobuf:"bytes,7,opt,name=fieldsV1"`
	Subresource string    `json:"subresource,omitempty" protobuf:"bytes,8,opt,name=subresource"`
}

// FieldsV1 is a set of field paths in Kubernetes' "FieldsV1" JSON form,
// kept as raw JSON.
type FieldsV1 struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=Raw"`
}

// MarshalJSON writes the raw set, or null when there is none.
func (f FieldsV1) MarshalJSON() ([]byte, error) {
	if f.Raw == nil {
		return []byte("null"), nil
	}
	return f.Raw, nil
}

// UnmarshalJSON keeps a copy of the raw set.
func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		f.Raw = nil
		return nil
	}
	f.Raw = append(f.Raw[:0], b...)
	return nil
}

// ListMeta is the metadata of a list: the revision it was read at and, for a
// chunked list, how to get the next chunk.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty" protobuf:"bytes,2,opt,name=resourceVersion"`
	Continue           string `json:"continue,omitempty" protobuf:"bytes,3,opt,name=continue"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty" protobuf:"bytes,4,opt,name=remainingItemCount"`
}

// Time is a timestamp that travels as RFC 3339 with second precision, in UTC,
// and as null when zero: the form of Kubernetes' metav1.Time.
type Time struct {
	time.Time `protobuf:"-"`
}

// NewTime wraps t, truncated to the second as it will be stored.
func NewTime(t time.Time) Time { return Time{t.Truncate(time.Second)} }

// Now is the current time, truncated to the second.
func Now() Time { return NewTime(time.Now()) }

// MarshalJSON writes RFC 3339 in UTC, or null when t is zero.
func (t Time) MarshalJSON() ([]byte, error) { return marshalTime(t.Time, time.RFC3339), nil }

// UnmarshalJSON reads RFC 3339 or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	pt, err := unmarshalTime(b)
	t.Time = pt
	return err
}

// marshalTime writes t in UTC with layout, as a JSON string, or null when
// t is zero.
func marshalTime(t time.Time, layout string) []byte {
	if t.IsZero() {
		return []byte("null")
	}
	b := make([]byte, 0, len(layout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, layout)
	return append(b, '"')
}

// unmarshalTime reads a JSON string in RFC 3339 (with fractional seconds or
// not), "" or null (the zero time), in Local as metav1 does.
func unmarshalTime(b []byte) (time.Time, error) {
	if bytes.Equal(b, []byte("null")) {
		return time.Time{}, nil
	}
	s, ok := plainString(b)
	if !ok {
		if err := json.Unmarshal(b, &s); err != nil {
			return time.Time{}, err
		}
	}
	if s == "" {
		return time.Time{}, nil
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, err
	}
	// marshalTime writes UTC: "9999-12-31T23:00:00-02:00" is in year 10000
	// there, which RFC 3339 cannot write and this could not read back.
	if y := pt.UTC().Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("time %q is outside the years 0 to 9999 in UTC", s)
	}
	return pt.Local(), nil
}

// plainString reads a JSON string of printable ASCII without escapes, as
// every time kapi writes is, without json.Unmarshal's reflection (a stored
// object has several times, and every write decodes one); ok is false for
// anything else.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(b[1 : len(b)-1]), true
}

// Condition is one aspect of an object's observed state, in the form the API
// Conventions recommend for status.conditions.
type Condition struct {
	Type               string `json:"type" protobuf:"bytes,1,opt,name=type"`
	Status             string `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	LastTransitionTime Time   `json:"lastTransitionTime" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string `json:"reason" protobuf:"bytes,5,opt,name=reason"`
	Message            string `json:"message" protobuf:"bytes,6,opt,name=message"`
}

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)
