package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/intern"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/listcache"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/internal/openapi"
	ksel "github.com/kapi-dev/kapi/internal/selector"
	"github.com/kapi-dev/kapi/internal/storedvalue"
	"github.com/kapi-dev/kapi/internal/tables"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Resource describes one resource type T to serve. T is a struct that embeds
// kapi.TypeMeta (inline) and kapi.ObjectMeta (as "metadata").
type Resource[T any] struct {
	// Group ("" for the core group, served under /api/v1), Version and Kind
	// name the type: example.com, v1, Widget.
	Group, Version, Kind string
	// Plural is the resource name in URLs (widgets); Singular defaults to the
	// lower-case Kind.
	Plural, Singular string
	// Namespaced resources live in a namespace; the others are cluster-scoped.
	Namespaced bool
	// ShortNames and Categories are offered to clients through discovery
	// (kubectl get wd, kubectl get all).
	ShortNames, Categories []string

	// Status enables the status subresource: writes to the resource ignore
	// the field "status" of T, writes to /status change only it. T must then
	// have a field whose JSON name is "status".
	Status bool

	// CreateOnUpdate lets a PUT to a missing object create it (201
	// Created, admitted as a create, authorized for "create" too), as
	// kube-apiserver allows for Leases and Events; without it such a PUT
	// is 404 NotFound, as for custom resources.
	CreateOnUpdate bool

	// UpdateNeedsResourceVersion refuses a PUT without
	// metadata.resourceVersion (or with "0") with 422 Invalid, as
	// kube-apiserver refuses unconditional updates of custom resources
	// and of CustomResourceDefinitions; without it such a PUT updates
	// whatever is stored, as for Leases and most built-in kinds.
	UpdateNeedsResourceVersion bool

	// Scale enables the scale subresource (autoscaling/v1 Scale, for
	// kubectl scale), mapped onto the fields it names.
	Scale *ScalePaths

	// Default fills in defaults before validation, on every write.
	Default func(obj *T)
	// Validate checks an object about to be written by a create, an update
	// or a patch of the resource, or a write to /scale; old is nil on
	// create. It returns the invalid fields (422 Invalid) or nil.
	Validate func(ctx context.Context, obj, old *T) FieldErrors
	// ValidateStatus checks an object whose status is about to be written
	// through the status subresource; without it, Validate does.
	ValidateStatus func(ctx context.Context, obj, old *T) FieldErrors
	// ValidateName checks metadata.name on create and returns what is wrong
	// with it; nil accepts it. The default requires a DNS-1123 subdomain.
	ValidateName func(name string) []string

	// SelectableFields are the JSON paths of fields clients may use in
	// field selectors (spec.color), besides metadata.name and
	// metadata.namespace; each must lead to a string, boolean or integer.
	SelectableFields []string

	// Columns are the columns of the Table the resource is shown as
	// (kubectl get), after Name; without them, Name and Created At.
	Columns []Column[T]

	// OnDelete is told of a DELETE of obj, after admission and before the
	// object is marked for deletion or removed; it may refuse the DELETE
	// with an error, or change obj: a finalizer it adds holds the object,
	// and its changes are stored with the mark (a CustomResourceDefinition
	// gets its cleanup finalizer so). A deletionTimestamp it sets is the
	// mark, without the deletionGracePeriodSeconds 0 and generation bump
	// of kube-apiserver's generic store (its definitions' own Delete sets
	// neither). It is not told of a DELETE of an object marked already.
	OnDelete func(obj *T) error
	// RefuseCreate, if set, is asked before each create (POST) is read:
	// an error, a *StatusError, refuses it. A CustomResourceDefinition
	// being deleted refuses creates of its kind so.
	RefuseCreate func() error

	// Several versions of one kind are several registrations with the same
	// Group and Kind, each with its own Version and type T (see
	// versions.go). The fields below matter only then.

	// Storage marks the version objects are stored in: exactly one
	// version of a kind with several must be.
	Storage bool
	// NotServed keeps a version out of discovery and the API (404), as a
	// CRD version with served: false.
	NotServed bool
	// Deprecated versions answer every request with a warning:
	// DeprecationWarning if set (empty: none), else kube-apiserver's
	// "example.com/v1beta1 Widget is deprecated; use example.com/v1
	// Widget".
	Deprecated         bool
	DeprecationWarning *string
	// Conversion converts objects of this version to and from the hub
	// type every version of the kind converts through (ConvertVia). The
	// version whose type is the hub has none. Defaults are per version;
	// validation (Validate, ValidateStatus, ValidateName) and admission
	// run once, on the object converted to the storage version, so only
	// the storage version may set them.
	Conversion Conversion

	// Shape, if set, tells what T's Go type cannot of its objects' JSON:
	// package kinds serves kinds defined at run time, whose objects share
	// one Go type, with the shape each kind's schema gives. The versions
	// of such a kind validate each with its own Validate and
	// ValidateStatus, on the object in the request's version, as
	// kube-apiserver validates a custom resource.
	Shape Shape

	// ApplySetParent lets objects of the kind be the parents of ApplySets:
	// kubectl apply --prune --applyset=widgets.example.com/NAME (see
	// internal/applyset). It stands for the label
	// applyset.kubernetes.io/is-parent-type=true on a kind's CRD; set on
	// one version, it holds for the kind.
	ApplySetParent bool
}

// Shape is the shape of a resource's objects where their Go type does not
// tell it: package kinds gives one to each kind it serves. It is
// immutable and safe for concurrent use.
type Shape interface {
	// Prune drops, in place, the fields obj's schema does not specify, and
	// returns their paths (spec.bogus): unknown fields, which a write
	// warns of or refuses as its fieldValidation says.
	Prune(obj kapi.Object) []string
	// Read completes an object decoded from storage, as kube-apiserver
	// defaults custom resources it reads, and says whether it changed it
	// (the stored value is then not its JSON). The objects' JSON has their
	// metadata as encoding/json writes a kapi.ObjectMeta, so that answers
	// are made from stored values.
	Read(obj kapi.Object) bool
	// Patch is the schema patches and server-side apply merge by.
	Patch() *patch.Schema
	// OpenAPI is the objects' OpenAPI v3 schema, served in /openapi/v3.
	OpenAPI() map[string]any
	// Field reads the field a field selector names (spec.color) in an
	// object, as the selector compares it; it fails for a path the
	// objects cannot select on.
	Field(path string) (func(kapi.Object) string, error)
	// The Shape of a resource with the scale subresource has a method
	//	Scale(ScalePaths) (read func(kapi.Object) (spec, status int32, selector string), set func(kapi.Object, int32), err error)
	// that reads the Scale of an object and sets its desired replicas in
	// a shallow copy of one without changing what it shares.
}

// Register adds a resource type to the server. It fails if the description is
// incomplete or clashes with one already registered, or if the server has
// started serving (RegisterKind adds kinds then).
func Register[T any, P interface {
	*T
	kapi.Object
}](s *Server, r Resource[T]) error {
	res, err := newResource[T, P](s, r)
	if err != nil {
		return err
	}
	return s.add(res)
}

// RegisterKind registers every version of one kind at once, before or
// while the server serves: a server serving a kind defined at run time
// (package kinds) cannot know it at start. It replaces a kind registered
// before with RegisterKind with the same Group and Kind, whose watches
// then end; the objects in storage stay. A kind registered with Register
// (or built in) is never replaced: that is an error. Registered while
// serving, the kind is served when RegisterKind returns, in discovery and
// OpenAPI too.
func RegisterKind[T any, P interface {
	*T
	kapi.Object
}](s *Server, versions ...Resource[T]) error {
	var rs []*resource
	for _, r := range versions {
		res, err := newResource[T, P](s, r)
		if err != nil {
			return err
		}
		res.changeable = true
		rs = append(rs, res)
	}
	if len(rs) == 0 {
		return errors.New("apiserver: RegisterKind: no versions")
	}
	return s.change(rs[0].Group, rs[0].Kind, rs)
}

func newResource[T any, P interface {
	*T
	kapi.Object
}](s *Server, r Resource[T]) (*resource, error) {
	res := &resource{
		Group: r.Group, Version: r.Version, Kind: r.Kind,
		Plural: r.Plural, Singular: r.Singular, Namespaced: r.Namespaced,
		ShortNames: r.ShortNames, Categories: r.Categories,
		typ:          reflect.TypeFor[T](),
		newObject:    func() kapi.Object { return P(new(T)) },
		validateName: r.ValidateName, createOnUpdate: r.CreateOnUpdate, applySetParent: r.ApplySetParent,
		refuseCreate: r.RefuseCreate, needsRV: r.UpdateNeedsResourceVersion,
		version: versionOptions{
			storage: r.Storage, served: !r.NotServed, deprecated: r.Deprecated,
			warning: r.DeprecationWarning, conversion: r.Conversion,
			validates: r.Validate != nil || r.ValidateStatus != nil || r.ValidateName != nil,
		},
	}
	res.shape = r.Shape
	if err := res.selectable(r.SelectableFields); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	var err error
	if res.table, err = tableColumns[T, P](r.Columns); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	if r.Default != nil {
		res.defaulter = func(obj kapi.Object) { r.Default(obj.(P)) }
	}
	res.validate = typedValidation[T, P](r.Validate)
	if r.OnDelete != nil {
		res.hooks.delete = func(obj kapi.Object) error {
			if obj.GetObjectMeta().DeletionTimestamp != nil {
				return nil
			}
			return r.OnDelete(obj.(P))
		}
	}
	res.validateStatus = typedValidation[T, P](r.ValidateStatus)
	if res.validateStatus == nil {
		res.validateStatus = res.validate
	}
	if err := res.complete(r.Status); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	if err := s.adviseConventions(res); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	if err := res.declare(s.config.ruleEngine); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	if sc, ok := r.Shape.(shapeScaler); ok && r.Scale != nil {
		res.scale = &scaleFields{paths: *r.Scale}
		if res.scale.read, res.scale.set, err = sc.Scale(*r.Scale); err != nil {
			return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
		}
	} else if r.Scale != nil {
		if res.scale, err = resolveScale(res.typ, *r.Scale); err != nil {
			return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
		}
	}
	if r.Shape != nil {
		res.objType.schema = r.Shape.Patch()
	} else if res.objType.schema, err = patch.SchemaOf(res.typ); err != nil {
		return nil, fmt.Errorf("apiserver: register %s: %w", res.gvk(), err)
	}
	res.objType.typ, res.objType.newObject, res.objType.protobuf = res.typ, res.newObject, res.protobuf
	res.objType.group, res.objType.version, res.objType.kind, res.objType.gv = res.Group, res.Version, res.Kind, res.gv
	res.objType.plainMetadata = plainMetadata(res.typ) || r.Shape != nil
	res.objType.image = jsonimage.New(res.typ)
	storedvalue.Encoder(reflect.PointerTo(res.typ)) // compiled now, not on the first write
	res.objType.merger = jsonimage.NewMerger(res.typ)
	res.specFields = specFieldsOf(res)
	return res, nil
}

func typedValidation[T any, P interface {
	*T
	kapi.Object
}](validate func(ctx context.Context, obj, old *T) FieldErrors) func(ctx context.Context, obj, old kapi.Object) FieldErrors {
	if validate == nil {
		return nil
	}
	return func(ctx context.Context, obj, old kapi.Object) FieldErrors {
		var oldT *T
		if old != nil {
			oldT = old.(P)
		}
		return validate(ctx, obj.(P), oldT)
	}
}

// objectType is a type of object requests read and write: a resource's own,
// or Scale on /scale.
type objectType struct {
	typ                      reflect.Type
	newObject                func() kapi.Object
	group, version, kind, gv string // gv: apiVersion(), made once with the others
	protobuf                 bool
	schema                   *patch.Schema
	// plainMetadata says that encoding/json writes the type field by field
	// with kapi.ObjectMeta as its metadata: see splice.Element.
	plainMetadata bool
	// image tells what decoding the JSON of a value gives (nil if it
	// cannot): see offer.
	image *jsonimage.Image
	// merger tells when a merge patch can be decoded into a copy of the
	// object (nil if never): see mergedDecoded.
	merger *jsonimage.Merger
}

// plainMetadata reports whether encoding/json writes values of struct type
// t with its own struct encoder (no MarshalJSON) and their kapi.ObjectMeta
// as the field "metadata".
func plainMetadata(t reflect.Type) bool {
	marshaler := reflect.TypeFor[json.Marshaler]()
	if t.Kind() != reflect.Struct || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == reflect.TypeFor[kapi.ObjectMeta]() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return name == "metadata"
		}
	}
	return false
}

func (b *objectType) apiVersion() string { return b.gv }

// apiVersion is "group/version", or the version alone in the core group.
func (gv groupVersion) apiVersion() string {
	if gv.group == "" {
		return gv.version
	}
	return gv.group + "/" + gv.version
}

// mustObjectType describes one of kapi's own types, which cannot be wrong.
func mustObjectType[T any, P interface {
	*T
	kapi.Object
}](group, version, kind string) *objectType {
	typ := reflect.TypeFor[T]()
	schema, err := patch.SchemaOf(typ)
	if err != nil {
		panic(err)
	}
	return &objectType{
		typ: typ, newObject: func() kapi.Object { return P(new(T)) },
		group: group, version: version, kind: kind, gv: groupVersion{group, version}.apiVersion(),
		protobuf: codec.SupportsProtobuf(typ) == nil, schema: schema,
	}
}

// resource is a registered type with everything the handlers need, type-erased.
type resource struct {
	Group, Version, Kind   string
	Plural, Singular, gv   string // gv: apiVersion(), made once by complete
	Namespaced             bool
	ShortNames, Categories []string
	applySetParent         bool // applyset.go

	typ         reflect.Type
	shape       Shape       // nil but for kinds defined at run time
	statusField []int       // index of the status field; nil without the subresource
	specFields  []specField // see specFieldsChanged; nil if it cannot tell
	newObject   func() kapi.Object

	defaulter      func(kapi.Object)
	validate       func(ctx context.Context, obj, old kapi.Object) FieldErrors
	validateStatus func(ctx context.Context, obj, old kapi.Object) FieldErrors
	validateName   func(string) []string
	createOnUpdate bool // see Resource.CreateOnUpdate
	refuseCreate   func() error
	// changeable says the kind came from RegisterKind: only such kinds
	// may be replaced or removed while serving (see change).
	changeable bool
	needsRV    bool // see Resource.UpdateNeedsResourceVersion

	scale   *scaleFields // nil without the scale subresource
	objType objectType   // what requests to the resource read and write

	// fields are the field selectors the resource supports, by path.
	fields map[string]func(kapi.Object) string
	// summaryFields are the names of fields in the order of the watch
	// cache's summaries, and summaries the summaries shared (see summarize);
	// set once the kind is complete.
	summaryFields []string
	summaries     ksel.Summaries
	// lists are the bodies of whole-collection LISTs kept (see
	// joinedList), on the storage version.
	lists listcache.Runs[*watch.Item]
	// frames are the initial events of watches of whole collections
	// kept likewise (see writeInitial).
	frames listcache.Bodies

	table tables.Columns
	// protobuf says whether the type travels in protobuf: every
	// JSON field of it has a protobuf tag, or it is a proto.Message.
	protobuf bool

	version  versionOptions
	versions *kindVersions // every version of the kind; set when serving starts
	// storedWith, if set, is a resource of another group whose kind
	// stores this one's objects: this resource is then a version of that
	// kind (as events.k8s.io events are core events in kube-apiserver).
	storedWith *resource
	// hooks are what a built-in kind does differently (builtin.go); zero
	// for registered resources.
	hooks kindHooks

	prefix  string // storage keys of this resource start with it
	cache   *watch.Cache
	strings intern.Table // shared by the objects of its cache
}

func (r *resource) complete(status bool) error {
	var errs []error
	if r.typ.Kind() != reflect.Struct {
		errs = append(errs, fmt.Errorf("type %s is not a struct", r.typ))
	}
	if r.Singular == "" {
		r.Singular = strings.ToLower(r.Kind)
	}
	r.gv = groupVersion{r.Group, r.Version}.apiVersion()
	errs = append(errs, names.CheckResource(names.Resource{Group: r.Group, Version: r.Version, Kind: r.Kind,
		Plural: r.Plural, Singular: r.Singular, ShortNames: r.ShortNames})...)
	if status && r.typ.Kind() == reflect.Struct {
		// A top-level field: one promoted from an embedded pointer may be nil.
		if f, ok := jsonfields.Named(r.typ, "status"); ok && len(f.Index) == 1 {
			r.statusField = f.Index
		} else {
			errs = append(errs, fmt.Errorf("the status subresource needs a field with JSON name \"status\" in %s", r.typ))
		}
	}
	if r.typ.Kind() == reflect.Struct {
		// The handlers copy objects shallowly and set metadata in place: it
		// must be a value, not a pointer that copies would share.
		if f, ok := jsonfields.Named(r.typ, "metadata"); !ok || len(f.Index) != 1 || f.Type != reflect.TypeFor[kapi.ObjectMeta]() {
			errs = append(errs, fmt.Errorf("%s must embed kapi.ObjectMeta (not a pointer to it) as \"metadata\"", r.typ))
		}
		if f, ok := jsonfields.Named(r.typ, "kind"); !ok || f.Owner != reflect.TypeFor[kapi.TypeMeta]() {
			errs = append(errs, fmt.Errorf("%s must embed kapi.TypeMeta inline", r.typ))
		}
		if len(errs) == 0 && r.shape == nil { // a Shape's schema is its description
			// Every type must be describable in OpenAPI, or kubectl cannot
			// create it: better to know now than at the first request.
			if _, err := openapi.GroupVersion(r.Group, r.Version, []openapi.Resource{r.openAPI()}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if r.validateName == nil {
		r.validateName = names.IsDNS1123Subdomain
	}
	if r.typ.Kind() == reflect.Struct {
		err := codec.SupportsProtobuf(r.typ)
		r.protobuf = err == nil
		if err != nil && hasProtobufTags(r.typ) {
			// Tagged for protobuf, but not completely: a typo or a missing
			// tag would silently serve it in JSON only.
			errs = append(errs, fmt.Errorf("%s has protobuf tags but no complete protobuf mapping: %w", r.typ, err))
		}
	}
	return errors.Join(errs...)
}

func (r *resource) gvk() string {
	return fmt.Sprintf("%s/%s, Kind=%s", r.Group, r.Version, r.Kind)
}

func (r *resource) apiVersion() string { return r.gv }

// qualifiedResource is "widgets.example.com", or "widgets" in the core group.
func (r *resource) qualifiedResource() string {
	if r.Group == "" {
		return r.Plural
	}
	return r.Plural + "." + r.Group
}

// key is where an object lives in storage.
func (r *resource) key(namespace, name string) string {
	if r.Namespaced {
		return r.prefix + namespace + "/" + name
	}
	return r.prefix + name
}

// keyPrefix selects the objects of a namespace, or all of them.
func (r *resource) keyPrefix(namespace string) string {
	if r.Namespaced && namespace != "" {
		return r.prefix + namespace + "/"
	}
	return r.prefix
}

// statusValue is the status field of obj, addressable.
func (r *resource) statusValue(obj kapi.Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByIndex(r.statusField)
}

// decodeStored turns a stored value into an object of the storage version
// with its resourceVersion. A value stored in another version of the kind
// (its apiVersion says which) is converted.
func (r *resource) decodeStored(kv storage.KeyValue) (any, error) {
	obj, _, err := r.decodeStoredVersion(kv)
	return obj, err
}

// decodeStoredVersion is decodeStored, also saying whether the value was
// stored in another version and converted.
func (r *resource) decodeStoredVersion(kv storage.KeyValue) (kapi.Object, bool, error) {
	st := r.storageVersion()
	obj := st.newObject()
	err := unmarshalStored(kv.Value, obj)
	if av := obj.GetTypeMeta().APIVersion; err != nil || av != "" && av != st.apiVersion() {
		if other, ok := st.versions.storedIn(kv.Value); ok && other != st {
			if obj, err = other.convertStored(kv.Value, st); err == nil {
				obj.GetObjectMeta().ResourceVersion = formatRevision(kv.ModRevision)
				return obj, true, nil
			}
		}
	}
	if err != nil {
		return nil, false, &corruptObject{key: kv.Key, revision: kv.ModRevision, err: err}
	}
	changed := st.shape != nil && st.shape.Read(obj)
	obj.GetObjectMeta().ResourceVersion = formatRevision(kv.ModRevision)
	return obj, changed, nil
}

// selectable sets up the field selectors of the resource: metadata.name,
// metadata.namespace when namespaced, and the given paths.
func (r *resource) selectable(paths []string) error {
	r.fields = map[string]func(kapi.Object) string{
		"metadata.name": func(o kapi.Object) string { return o.GetObjectMeta().Name },
	}
	if r.Namespaced {
		r.fields["metadata.namespace"] = func(o kapi.Object) string { return o.GetObjectMeta().Namespace }
	}
	var errs []error
	for _, path := range paths {
		if _, ok := r.fields[path]; ok || strings.HasPrefix(path, "metadata.") {
			errs = append(errs, fmt.Errorf("selectable field %q: metadata fields are built in", path))
			continue
		}
		get, err := r.fieldGetter(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("selectable field %q: %w", path, err))
			continue
		}
		r.fields[path] = get
	}
	return errors.Join(errs...)
}

// fieldGetter reads the field at a dotted JSON path of the resource's
// objects, as a field selector compares it: through the shape of a kind
// defined at run time, or the Go type's fields.
func (r *resource) fieldGetter(path string) (func(kapi.Object) string, error) {
	if r.shape != nil {
		return r.shape.Field(path)
	}
	get, err := jsonfields.StringGetter(r.typ, path)
	if err != nil {
		return nil, err
	}
	return func(o kapi.Object) string { return get(o) }, nil
}

// hasProtobufTags says whether a field of t is tagged for protobuf.
func hasProtobufTags(t reflect.Type) bool {
	for i := range t.NumField() {
		if tag, ok := t.Field(i).Tag.Lookup("protobuf"); ok && tag != "-" {
			return true
		}
	}
	return false
}
