package versions

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/kapi-dev/kapi"
)

// Conversion converts objects of one version to and from the hub type.
// Make it with [Via]; the zero value converts nothing (a version whose
// type is the hub needs none).
type Conversion struct {
	spoke, hub reflect.Type
	toHub      func(from, to kapi.Object) error
	fromHub    func(from, to kapi.Object) error
	newSpoke   func() kapi.Object
	newHub     func() kapi.Object
}

// IsZero says the conversion is the zero value.
func (c Conversion) IsZero() bool { return c.spoke == nil }

// Via is the conversion of a version whose type is S to and from the hub
// type H. toHub fills in a new H from an S, fromHub a new S from an H; both
// find the destination's metadata already copied from the source (its
// annotations a map of its own, which they may change) and leave its
// TypeMeta to the set. Neither may change its source.
func Via[S, H any, PS interface {
	*S
	kapi.Object
}, PH interface {
	*H
	kapi.Object
}](toHub func(from *S, to *H) error, fromHub func(from *H, to *S) error) Conversion {
	c := Conversion{
		spoke: reflect.TypeFor[S](), hub: reflect.TypeFor[H](),
		newSpoke: func() kapi.Object { return PS(new(S)) },
		newHub:   func() kapi.Object { return PH(new(H)) },
	}
	if toHub != nil {
		c.toHub = func(from, to kapi.Object) error { return toHub(from.(PS), to.(PH)) }
	}
	if fromHub != nil {
		c.fromHub = func(from, to kapi.Object) error { return fromHub(from.(PH), to.(PS)) }
	}
	return c
}

// Version is one version of a kind.
type Version struct {
	Name string
	// Group is the version's group when it is not the set's: a kind can be
	// served in another group too, from the same storage, as kube-apiserver
	// serves core events as events.k8s.io events. Such a version is named
	// "group/name" in the set's methods.
	Group      string
	Type       reflect.Type // the Go struct type of its objects
	Served     bool
	Storage    bool
	Deprecated bool
	// DeprecationWarning replaces the default warning of a deprecated
	// version; an empty text sends none.
	DeprecationWarning *string
	Conversion         Conversion
}

// Set is the versions of one kind. It is immutable once made.
type Set struct {
	group, kind string
	versions    []Version // by priority, the first first
	byName      map[string]*Version
	storage     *Version
	hub         reflect.Type
}

// NewSet checks the versions of one kind and returns them as a set. It
// fails when no version or more than one is the storage version (a single
// version is the storage version unless said otherwise), when a name is
// taken twice, when two versions share a Go type (unless all do, without
// conversions: strategy None), when no version is
// served, or when a version cannot reach the hub: a version whose type is
// not the hub without a conversion, conversions to different hubs, a
// conversion for another type than its version's, or one lacking a
// direction.
func NewSet(group, kind string, vs []Version) (*Set, error) {
	s := &Set{group: group, kind: kind, versions: byPriority(vs), byName: map[string]*Version{}}
	if len(s.versions) == 1 {
		s.versions[0].Storage = true
	}
	var errs []error
	types := map[reflect.Type]string{}
	// One type for every version, without conversions, is conversion
	// strategy None: only apiVersion changes, as between the versions of
	// a kind whose objects have no Go type of their own (package kinds).
	oneType := len(s.versions) > 1
	for _, v := range s.versions {
		oneType = oneType && v.Type == s.versions[0].Type && v.Conversion.IsZero()
	}
	if oneType {
		s.hub = s.versions[0].Type
	}
	served := false
	for i := range s.versions {
		v := &s.versions[i]
		if _, dup := s.byName[v.key()]; dup {
			errs = append(errs, fmt.Errorf("version %s is registered twice", v.key()))
			continue
		}
		s.byName[v.key()] = v
		if other, dup := types[v.Type]; dup && !oneType {
			errs = append(errs, fmt.Errorf("versions %s and %s have the same type %s: each version needs a type of its own", other, v.Name, v.Type))
		}
		types[v.Type] = v.Name
		served = served || v.Served
		if v.Storage {
			if s.storage != nil {
				errs = append(errs, fmt.Errorf("versions %s and %s are both the storage version: exactly one must be", s.storage.Name, v.Name))
			}
			s.storage = v
		}
		if c := v.Conversion; !c.IsZero() {
			if s.hub != nil && s.hub != c.hub {
				errs = append(errs, fmt.Errorf("version %s converts through %s, another version through %s: all convert through one hub", v.Name, c.hub, s.hub))
			}
			s.hub = c.hub
		}
	}
	if s.storage == nil {
		errs = append(errs, errors.New("no version is the storage version: exactly one must be"))
	}
	if !served {
		errs = append(errs, errors.New("no version is served"))
	}
	if len(s.versions) > 1 {
		if s.hub == nil {
			errs = append(errs, fmt.Errorf("no version has a conversion: every version but the hub's needs one"))
		}
		for _, v := range s.versions {
			c := v.Conversion
			switch {
			case s.hub == nil:
			case c.IsZero() && v.Type != s.hub:
				errs = append(errs, fmt.Errorf("version %s (%s) has no conversion to and from the hub %s", v.Name, v.Type, s.hub))
			case c.IsZero():
			case v.Type == s.hub:
				errs = append(errs, fmt.Errorf("version %s is the hub %s: it needs no conversion", v.Name, s.hub))
			case c.spoke != v.Type:
				errs = append(errs, fmt.Errorf("version %s has a conversion for %s, not for its type %s", v.Name, c.spoke, v.Type))
			case c.toHub == nil || c.fromHub == nil:
				errs = append(errs, fmt.Errorf("version %s has a conversion without both directions", v.Name))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s.%s: %w", kind, group, err)
	}
	return s, nil
}

// key is how the set's methods name v.
func (v *Version) key() string {
	if v.Group == "" {
		return v.Name
	}
	return v.Group + "/" + v.Name
}

// byPriority copies vs in priority order, the first first.
func byPriority(vs []Version) []Version {
	out := append([]Version(nil), vs...)
	slices.SortStableFunc(out, func(a, b Version) int { return Compare(b.key(), a.key()) })
	return out
}

// Storage is the name of the storage version.
func (s *Set) Storage() string { return s.storage.key() }

// Served lists the served versions by priority: the first is preferred.
func (s *Set) Served() []string {
	var out []string
	for _, v := range s.versions {
		if v.Served {
			out = append(out, v.key())
		}
	}
	return out
}

// Version returns the named version.
func (s *Set) Version(name string) (Version, bool) {
	v, ok := s.byName[name]
	if !ok {
		return Version{}, false
	}
	return *v, true
}

// Warning is the warning for a request to the named version: "" unless it
// is deprecated. Without a text of its own, kube-apiserver's: the version
// is deprecated, and the served, not deprecated version of highest
// priority above it is the one to use.
func (s *Set) Warning(name string) string {
	v, ok := s.byName[name]
	if !ok || !v.Deprecated {
		return ""
	}
	if v.DeprecationWarning != nil {
		return *v.DeprecationWarning
	}
	msg := fmt.Sprintf("%s %s is deprecated", s.apiVersion(v), s.kind)
	for _, o := range s.versions { // by priority: the first that fits
		if o.Served && !o.Deprecated && o.Group == v.Group && Compare(v.Name, o.Name) < 0 {
			return msg + fmt.Sprintf("; use %s %s", s.apiVersion(&o), s.kind)
		}
	}
	return msg
}

// apiVersion is v's apiVersion: group/version, or the version in the core
// group.
func (s *Set) apiVersion(v *Version) string {
	group := cmp.Or(v.Group, s.group)
	if group == "" {
		return v.Name
	}
	return group + "/" + v.Name
}

// Convert returns obj, an object of version from, in version to (each
// named as Version.Group says: "v1", or "group/v1" for a version of
// another group). An object
// already in that version is returned as it is; otherwise the result is a
// new object (sharing with obj what the conversions share), with its
// TypeMeta set. obj is not modified.
func (s *Set) Convert(obj kapi.Object, from, to string) (kapi.Object, error) {
	if from == to {
		return obj, nil
	}
	src, ok := s.byName[from]
	if !ok {
		return nil, fmt.Errorf("%s.%s has no version %q", s.kind, s.group, from)
	}
	dst, ok := s.byName[to]
	if !ok {
		return nil, fmt.Errorf("%s.%s has no version %q", s.kind, s.group, to)
	}
	hub := obj
	if src.Type != s.hub {
		c := src.Conversion
		hub = c.newHub()
		copyMeta(hub, obj)
		if err := c.toHub(obj, hub); err != nil {
			return nil, fmt.Errorf("convert %s from %s: %w", s.kind, from, err)
		}
	}
	out := hub
	if out == obj { // one type for every version: a copy, in which only apiVersion changes
		v := reflect.New(reflect.TypeOf(obj).Elem())
		v.Elem().Set(reflect.ValueOf(obj).Elem())
		out = v.Interface().(kapi.Object)
	}
	if dst.Type != s.hub {
		c := dst.Conversion
		out = c.newSpoke()
		copyMeta(out, hub)
		if err := c.fromHub(hub, out); err != nil {
			return nil, fmt.Errorf("convert %s to %s: %w", s.kind, to, err)
		}
	}
	*out.GetTypeMeta() = kapi.TypeMeta{Kind: s.kind, APIVersion: s.apiVersion(dst)}
	return out, nil
}

// copyMeta gives to the metadata of from, with annotations of its own.
func copyMeta(to, from kapi.Object) {
	m := *from.GetObjectMeta()
	m.Annotations = maps.Clone(m.Annotations)
	*to.GetObjectMeta() = m
}

// SaveInAnnotation stores v as JSON in obj's annotation key, for a version
// that cannot hold v itself; a nil or empty v removes the annotation.
func SaveInAnnotation(obj kapi.Object, key string, v any) error {
	meta := obj.GetObjectMeta()
	if rv := reflect.ValueOf(v); !rv.IsValid() || (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.Len() == 0 || rv.Kind() == reflect.Pointer && rv.IsNil() {
		delete(meta.Annotations, key)
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = string(data)
	return nil
}

// RestoreFromAnnotation reads into v what SaveInAnnotation stored in obj's
// annotation key and removes the annotation. It reports whether there was
// one. An annotation that does not decode into v is an error: a client
// changed it.
func RestoreFromAnnotation(obj kapi.Object, key string, v any) (bool, error) {
	meta := obj.GetObjectMeta()
	data, ok := meta.Annotations[key]
	if !ok {
		return false, nil
	}
	delete(meta.Annotations, key)
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return true, fmt.Errorf("annotation %s: %w", key, err)
	}
	return true, nil
}
