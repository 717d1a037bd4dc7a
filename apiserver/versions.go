package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/versions"
	"github.com/kapi-dev/kapi/watch"
)

// Several versions of one kind are registered one Register call each, with
// the same Group and Kind, their own Version and Go type, and:
//
//   - exactly one Storage version: objects are stored in it, and the watch
//     cache holds them in it;
//   - a Conversion to and from a hub type on every version whose type is
//     not the hub (ConvertVia);
//   - the same Plural, Singular, ShortNames, Categories, scope and
//     subresources on every version.
//
// A request in another version than the storage version is decoded and
// defaulted in its version, converted to the storage version, validated
// and admitted there, stored, and answered converted back. Reads convert
// each cached object once per version, and encode that once per media
// type, on the cache's item (watch.Item.As): every GET, LIST and watcher
// of a version shares them.
//
// What one registration can check, Register checks; what needs every
// version of a kind (one storage version, a path to the hub) is checked
// by Complete, which the first request calls when the program did not.

// Conversion converts the objects of one version to and from the hub type
// of its kind's versions. Make it with ConvertVia.
type Conversion = versions.Conversion

// ConvertVia is the Conversion of a version whose type is S through the hub
// type H: toHub fills in a new H from an S, fromHub a new S from an H.
// Metadata is copied before either is called (the destination's
// annotations are its own, to keep there what the destination cannot
// hold: see versions.SaveInAnnotation); TypeMeta is set after.
func ConvertVia[S, H any, PS interface {
	*S
	kapi.Object
}, PH interface {
	*H
	kapi.Object
}](toHub func(from *S, to *H) error, fromHub func(from *H, to *S) error) Conversion {
	return versions.Via[S, H, PS, PH](toHub, fromHub)
}

// versionOptions are the fields of a registration about its version.
type versionOptions struct {
	storage, served, deprecated bool
	warning                     *string
	conversion                  Conversion
	validates                   bool // Validate, ValidateStatus or ValidateName is set
}

// kindVersions are the registered versions of one kind, with those of
// other groups stored with it (storedWith).
type kindVersions struct {
	set        *versions.Set
	group      string // the storage version's
	storage    *resource
	apiVersion map[string]*resource // by "group/version"
}

// Complete ends registration: it checks what needs every version of a
// kind at once and prepares the watch cache. Register fails afterwards;
// RegisterKind and Remove still change what is served.
// The first request calls it when the program has not; if it fails then,
// every request is answered 503 with its error. Calling it again returns
// the first answer.
func (s *Server) Complete() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.complete()
}

// complete is Complete with s.mu held.
func (s *Server) complete() error {
	if s.completed {
		return s.completeErr
	}
	s.completed = true
	var errs []error
	kinds := map[[2]string][]*resource{}
	var order [][2]string
	for _, r := range s.resources {
		k := [2]string{r.Group, r.Kind}
		if r.storedWith != nil {
			k = [2]string{r.storedWith.Group, r.storedWith.Kind}
		}
		if _, ok := kinds[k]; !ok {
			order = append(order, k)
		}
		kinds[k] = append(kinds[k], r)
	}
	for _, k := range order {
		if err := s.completeKind(k[0], kinds[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.completeErr = fmt.Errorf("apiserver: %w", err)
	}
	return s.completeErr
}

// completeKind makes the versions of one kind of group one set. Those of
// other groups stored with it are versions of it too, named group/version
// in the set.
func (s *Server) completeKind(group string, rs []*resource) error {
	vs := make([]versions.Version, len(rs))
	k := &kindVersions{group: group, apiVersion: map[string]*resource{}}
	for i, r := range rs {
		o := r.version
		r.versions = k
		vs[i] = versions.Version{
			Name: r.Version, Type: r.typ, Served: o.served, Storage: o.storage,
			Deprecated: o.deprecated, DeprecationWarning: o.warning, Conversion: o.conversion,
		}
		if r.Group != group {
			vs[i].Group = r.Group
		}
	}
	set, err := versions.NewSet(group, rs[0].Kind, vs)
	if err != nil {
		return err
	}
	k.set = set
	var errs []error
	for _, r := range rs {
		k.apiVersion[r.apiVersion()] = r
		if r.setVersion() == set.Storage() {
			k.storage = r
		}
	}
	st := k.storage
	for _, r := range rs {
		if r != st && r.version.validates && r.shape == nil {
			errs = append(errs, fmt.Errorf("%s: Validate, ValidateStatus and ValidateName run on the storage version %s: set them there", r.gvk(), st.Version))
		}
		if r.Namespaced != st.Namespaced {
			errs = append(errs, fmt.Errorf("%s: namespaced differs from %s, which stores its objects", r.gvk(), st.gvk()))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	st.prefix = s.config.keyPrefix + st.qualifiedResource() + "/"
	for _, name := range slices.Sorted(maps.Keys(st.fields)) {
		if name != "metadata.name" && name != "metadata.namespace" { // the key says them
			st.summaryFields = append(st.summaryFields, name)
		}
	}
	cache, err := s.hub.Add(s.ctx, st.prefix, recoverDecode(st.decodeCached), watch.KeepSummary(st.summarize), watch.TakeOffers(stampRevision))
	if err != nil {
		return err
	}
	st.cache = cache
	st.lists.Use(&s.lists)
	s.lists.Add(&st.frames, st.cache.LastChange)
	for _, r := range rs {
		r.prefix, r.cache = st.prefix, st.cache
		if r != st && r.shape == nil {
			r.validate, r.validateStatus, r.validateName = st.validate, st.validateStatus, st.validateName
		}
	}
	return nil
}

// agrees checks that r, another version of o's kind, describes the
// resource as o does.
func (r *resource) agrees(o *resource) error {
	var errs []error
	if r.Version == o.Version {
		return fmt.Errorf("version %s of %s is registered twice", r.Version, r.Kind)
	}
	differ := func(what string, a, b any) {
		errs = append(errs, fmt.Errorf("%s differs from version %s: %v, not %v", what, o.Version, a, b))
	}
	if r.Plural != o.Plural {
		differ("plural", r.Plural, o.Plural)
	}
	if r.Singular != o.Singular {
		differ("singular", r.Singular, o.Singular)
	}
	if r.Namespaced != o.Namespaced {
		differ("namespaced", r.Namespaced, o.Namespaced)
	}
	if !slices.Equal(r.ShortNames, o.ShortNames) {
		differ("short names", r.ShortNames, o.ShortNames)
	}
	if !slices.Equal(r.Categories, o.Categories) {
		differ("categories", r.Categories, o.Categories)
	}
	if (r.statusField != nil) != (o.statusField != nil) {
		differ("the status subresource", r.statusField != nil, o.statusField != nil)
	}
	if (r.scale != nil) != (o.scale != nil) {
		differ("the scale subresource", r.scale != nil, o.scale != nil)
	}
	return errors.Join(errs...)
}

// setVersion is how r's kind's versions name r: its version, or
// group/version for a version of another group stored with the kind.
func (r *resource) setVersion() string {
	if r.Group != r.versions.group {
		return r.apiVersion()
	}
	return r.Version
}

// storageVersion is the version of r's kind objects are stored in.
func (r *resource) storageVersion() *resource {
	if r.versions == nil {
		return r
	}
	return r.versions.storage
}

// converts says r is not the storage version: its objects are converted.
func (r *resource) converts() bool { return r.storageVersion() != r }

// fromStorage returns obj, of the storage version, in r's version.
func (r *resource) fromStorage(obj kapi.Object) (kapi.Object, error) {
	if !r.converts() {
		return obj, nil
	}
	out, err := r.versions.set.Convert(obj, r.storageVersion().setVersion(), r.setVersion())
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", r.qualifiedResource(), obj.GetObjectMeta().Name, err)
	}
	return out, nil
}

// toStorage returns obj, of r's version and sent by a client, in the
// storage version. A conversion that fails refuses the request: what the
// client sent cannot be stored.
func (r *resource) toStorage(obj kapi.Object) (kapi.Object, error) {
	if !r.converts() {
		return obj, nil
	}
	out, err := r.versions.set.Convert(obj, r.setVersion(), r.storageVersion().setVersion())
	if err != nil {
		var fe FieldErrors
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, badRequest("%s in version %q cannot be converted to the storage version %s: %v", r.Kind, r.Version, r.storageVersion().Version, err)
	}
	return out, nil
}

// readStored decodes a stored value into an object of r's version.
func (r *resource) readStored(kv storage.KeyValue) (kapi.Object, error) {
	obj, err := r.decodeStored(kv)
	if err != nil {
		return nil, err
	}
	return r.fromStorage(obj.(kapi.Object))
}

// versioned is a cached item as served in r's version: the item itself in
// the storage version, else its conversion, made once and kept on it.
func (r *resource) versioned(it *watch.Item) (*watch.Item, error) {
	if !r.converts() {
		return it, nil
	}
	return it.As(r.setVersion(), func(obj any) (any, error) { return r.fromStorage(obj.(kapi.Object)) })
}

// storedIn finds the version a stored value was written in, by its
// apiVersion.
func (k *kindVersions) storedIn(value []byte) (*resource, bool) {
	if k == nil {
		return nil, false
	}
	var tm kapi.TypeMeta
	if codec.UnmarshalJSON(value, &tm) != nil {
		return nil, false
	}
	r, ok := k.apiVersion[tm.APIVersion]
	return r, ok
}

// convertStored decodes a value stored in r's version into an object of
// the version st.
func (r *resource) convertStored(value []byte, st *resource) (kapi.Object, error) {
	obj := r.newObject()
	if err := unmarshalStored(value, obj); err != nil {
		return nil, err
	}
	return r.versions.set.Convert(obj, r.setVersion(), st.setVersion())
}

// deprecationWarning is the Warning header of a request to r's version, or
// "".
func (r *resource) deprecationWarning() string {
	if r.versions == nil {
		return ""
	}
	return r.versions.set.Warning(r.setVersion())
}

// MigrateStorage rewrites every stored object of a resource (its plural
// and group: "widgets", "example.com") in the current storage version,
// for objects written while another version was: a no-op update of each
// one that is not, conditional on its revision, so a concurrent write
// wins. It goes in key order; opts.After resumes after the last key an
// interrupted migration reported, opts.Progress hears of each page. The
// server need not be serving, but Complete must succeed.
func (s *Server) MigrateStorage(ctx context.Context, plural, group string, opts versions.MigrateOptions) (versions.Progress, error) {
	if err := s.Complete(); err != nil {
		return versions.Progress{}, err
	}
	var st *resource
	for _, r := range s.registered() {
		if r.Plural == plural && r.Group == group {
			st = r.storageVersion()
		}
	}
	if st == nil {
		return versions.Progress{}, fmt.Errorf("apiserver: migrate: no resource %s in group %q", plural, group)
	}
	return versions.Migrate(ctx, s.config.store, st.prefix, func(key string, value []byte) ([]byte, bool, error) {
		obj, err := st.decodeStored(storage.KeyValue{Key: key, Value: value})
		if err != nil {
			return nil, false, err
		}
		current, err := marshalStored(obj.(kapi.Object))
		if err != nil {
			return nil, false, err
		}
		return current, !bytes.Equal(current, value), nil
	}, opts)
}

// errIncomplete answers every request of a server whose registration
// Complete refused.
func incompleteHandler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, r, nil, NewStatusError(http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable, err.Error()).Status)
	})
}

// fieldsConverter converts objects of r's version, in JSON, to the other
// versions of its kind, for the managers whose fields were recorded there;
// nil for a kind with one version.
func (r *resource) fieldsConverter() patch.Converter {
	k := r.versions
	if k == nil || len(k.apiVersion) < 2 {
		return nil
	}
	return func(obj []byte, apiVersion string) ([]byte, *patch.Schema, error) {
		to, ok := k.apiVersion[apiVersion]
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s has no version %s", patch.ErrUnknownVersion, r.Kind, apiVersion)
		}
		in := r.newObject()
		if err := codec.UnmarshalJSON(obj, in); err != nil {
			return nil, nil, err
		}
		out, err := k.set.Convert(in, r.setVersion(), to.setVersion())
		if err != nil {
			return nil, nil, err
		}
		data, err := json.Marshal(out)
		return data, to.objType.schema, err
	}
}

// The watch cache holds a decoded object per key for as long as the key
// lives, so what each one costs is what the cache costs. json.Unmarshal
// allocates every string anew: the same kind, namespace and label keys in
// every object, and a long annotation (a padding, a last-applied
// configuration) beside the identical bytes of the stored value the cache
// keeps anyway. decodeCached shares them instead.

// decodeCached decodes a stored value for the watch cache, whose objects
// are never modified: their short repeated strings are shared with other
// objects, their long annotations with the stored value.
func (r *resource) decodeCached(kv storage.KeyValue) (any, error) {
	obj, converted, err := r.decodeStoredVersion(kv)
	if err != nil {
		return nil, err
	}
	r.strings.Shrink(obj, kv.Value)
	if converted {
		return watch.Converted{Object: obj}, nil
	}
	return obj, nil
}

// recoverDecode guards the hub against a panic in decoding a stored object
// (a user's UnmarshalJSON): the hub's goroutine serves every watch, and a
// panic there would end the process. The object is then skipped, as one that
// does not decode.
func recoverDecode(decode func(storage.KeyValue) (any, error)) func(storage.KeyValue) (any, error) {
	return func(kv storage.KeyValue) (obj any, err error) {
		defer func() {
			if p := recover(); p != nil {
				obj, err = nil, &corruptObject{key: kv.Key, revision: kv.ModRevision, err: fmt.Errorf("panic: %v", p)}
			}
		}()
		return decode(kv)
	}
}
