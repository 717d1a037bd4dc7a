package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/internal/storedvalue"
	"github.com/kapi-dev/kapi/storage"
)

// The write pipeline. A create and an update (PUT, PATCH, server-side
// apply, a controller's write through objects) take the same steps, each a
// function whose signature says what it takes and what it makes:
//
//	decode    the body -> next, in the request's version     decodeBody; an update's desired
//	prepare   next -> next: server-set metadata, defaults    createObject; prepareUpdate
//	convert   next -> stored, in the storage version         convertMutate
//	mutate    stored, old -> stored: mutating admission      convertMutate
//	validate  stored, old: field errors, validating admission checkWrite
//	encode    stored -> its value, without managedFields     storedvalue.Unmanaged (a lent buffer)
//	record    cur, next -> managedFields, stored value       recordedValue (the one copy stored)
//	store     stored value -> revision                       storeObject
//	answer    stored, stored value -> the response           respondConverted, respondStored
//
// An update reads the current object first (current) and may stop after
// encode, when nothing changed; a create retries from prepare's naming when
// a generated name is taken. Server-side apply records its managedFields
// itself (recordedAlready).

// managedRecord says whether a write records its managedFields.
type managedRecord int

const (
	// recordAnUpdate records that the request's manager changed the
	// fields it changed, by an ordinary write.
	recordAnUpdate managedRecord = iota
	// recordedAlready writes the managedFields the object carries:
	// server-side apply's, or those a create recorded on its first attempt.
	recordedAlready
)

func (rq *request) create(ctx context.Context) error {
	if err := rq.refusesCreate(); err != nil {
		return err
	}
	obj, err := rq.decodeBody()
	if err != nil {
		return err
	}
	return rq.createObject(ctx, obj, recordAnUpdate)
}

// refusesCreate is the resource's refusal of creates, if it refuses them
// now (Resource.RefuseCreate), for a create or an apply that would create.
func (rq *request) refusesCreate() error {
	if rq.res.refuseCreate == nil {
		return nil
	}
	return rq.res.refuseCreate()
}

// createObject stores a new object decoded from a request.
func (rq *request) createObject(ctx context.Context, obj kapi.Object, rec managedRecord) error {
	dryRun, err := rq.dryRun(nil)
	if err != nil {
		return err
	}
	res, meta := rq.res, obj.GetObjectMeta()
	if err := rq.setNamespace(meta); err != nil {
		return err
	}
	if rq.name != "" && meta.Name != "" && meta.Name != rq.name { // server-side apply names the object in the URL
		return badRequest("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, rq.name)
	}
	if meta.Name == "" {
		meta.Name = rq.name
	}
	generated := meta.Name == "" && meta.GenerateName != ""
	meta.UID = names.UID()
	meta.CreationTimestamp = kapi.Now()
	meta.Generation = 1
	meta.ResourceVersion = ""
	meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = nil, nil
	if res.statusField != nil {
		res.statusValue(obj).SetZero()
	}
	if res.defaulter != nil {
		res.defaulter(obj) // in the request's version
	}
	if err := rq.s.admitNamespace(ctx, rq, meta.Name); err != nil {
		return err
	}
	// Admitted, validated and stored in the storage version.
	if obj, err = rq.convertMutate(ctx, OperationCreate, obj, nil, dryRun); err != nil {
		return err
	}
	meta = obj.GetObjectMeta()
	if err := rq.setNamespace(meta); err != nil { // a hook may have changed it
		return err
	}
	for attempt := 0; ; attempt++ {
		if generated {
			meta.Name = names.Generate(meta.GenerateName)
		}
		rq.name = meta.Name
		if res.hooks.create != nil { // after mutation and naming, as kube's PrepareForCreate
			res.hooks.create(obj)
		}
		if err := rq.checkWrite(ctx, OperationCreate, obj, nil, dryRun); err != nil {
			return err
		}
		bare, err := storedvalue.Unmanaged(obj, res.storageVersion().objType.plainMetadata)
		if err != nil {
			return err
		}
		// Recorded in the request's version, as its manager sees it.
		requested, err := res.fromStorage(obj)
		if err != nil {
			return err
		}
		if rec == recordAnUpdate {
			requested.GetObjectMeta().ManagedFields = baseManagedFields(nil, requested)
		}
		value, err := rq.recordedValue(nil, nil, requested, obj, bare, rec)
		bare.Done()
		if err != nil {
			return err
		}
		rec = recordedAlready // another attempt keeps them
		key := res.key(meta.Namespace, meta.Name)
		if dryRun { // fails as the write would if the name is taken
			_, err = rq.s.config.store.Get(ctx, key, 0)
			switch {
			case errors.Is(err, storage.ErrNotFound):
				return rq.respondConverted(http.StatusCreated, obj, nil)
			case err == nil:
				err = storage.ErrExists
			}
		} else {
			var rev int64
			if rev, err = rq.storeObject(ctx, key, value, obj, 0); err == nil {
				meta.ResourceVersion = formatRevision(rev)
				return rq.respondConverted(http.StatusCreated, obj, value)
			}
		}
		if errors.Is(err, storage.ErrExists) && generated {
			if attempt+1 < nameGenerationAttempts {
				continue // another name
			}
			return generateNameConflict(res, meta.Name)
		}
		return err
	}
}

// convertMutate is next, in the request's version, as admission sees it:
// converted to the storage version, then changed by the mutating hooks.
// old is the stored object next replaces, nil on create.
func (rq *request) convertMutate(ctx context.Context, op Operation, next, old kapi.Object, dryRun bool) (kapi.Object, error) {
	stored, err := rq.res.toStorage(next)
	if err != nil {
		return nil, err
	}
	if err := rq.mutate(ctx, op, stored, old, dryRun); err != nil {
		return nil, err
	}
	return stored, nil
}

// checkWrite validates stored, the object to store, against old (nil on
// create), and passes it through the validating hooks.
func (rq *request) checkWrite(ctx context.Context, op Operation, stored, old kapi.Object, dryRun bool) error {
	if errs := rq.validate(ctx, stored, old); len(errs) > 0 {
		return errs
	}
	return rq.admitValid(ctx, op, stored, old, dryRun)
}

// recordedValue is the stored value of stored, whose encoding without
// managedFields is bare, once its managedFields are recorded: by rec, an
// Update of next's by the request's manager from cur (nil on create),
// both in the request's version; curValue is cur's stored value when it
// is its JSON (see current), else nil. The field manager reads the
// objects' JSON from the values where it can, rather than encode them.
func (rq *request) recordedValue(cur kapi.Object, curValue []byte, next, stored kapi.Object, bare storedvalue.Value, rec managedRecord) ([]byte, error) {
	if rec == recordAnUpdate {
		if err := rq.recordManaged(cur, curValue, next, bare.Bytes); err != nil {
			return nil, err
		}
		stored.GetObjectMeta().ManagedFields = next.GetObjectMeta().ManagedFields
	}
	return bare.WithManaged(stored, rec == recordAnUpdate, rq.res.objType.plainMetadata && !rq.res.converts()) // stored is of the request's type
}

// storeObject writes value, the stored value of obj (in the storage
// version), at key: it creates it when prev is 0, else updates it from
// revision prev, or deletes it when that update ends a deletion no
// finalizer holds any more. The watch cache is offered obj meanwhile
// (offer), so that it need not decode value when the write's event comes.
func (rq *request) storeObject(ctx context.Context, key string, value []byte, obj kapi.Object, prev int64) (int64, error) {
	store := rq.s.config.store
	if prev != 0 && obj.GetObjectMeta().DeletionTimestamp != nil && !rq.res.held(obj) {
		gone, err := store.Delete(ctx, key, prev)
		return gone.ModRevision, err
	}
	offered := rq.offer(key, value, obj)
	var rev int64
	var err error
	if prev == 0 {
		rev, err = store.Create(ctx, key, value)
	} else {
		rev, err = store.Update(ctx, key, value, prev)
	}
	if offered && (err != nil || rq.s.hub.Reached(rev)) { // else the cache has yet to see the write
		rq.res.cache.Withdraw(key, value)
	}
	if err == nil {
		rq.s.wrote.Wrote(key, rev, rq.s.hub.Reached)
	}
	return rev, err
}

// offer hands the watch cache the image of obj (jsonimage.Image), the storage
// version's object about to be stored as value at key: what decoding value
// gives, which the cache then need not decode when the write's event
// comes (watch.Cache.Offer). The cache's object is the old object of the
// next write, which a user's hooks receive: it must be what a server
// reading the store holds, not what the writer held (fractional seconds,
// an empty slice under omitempty). The image is a new object; it shares
// with obj the maps and slices that are their own image, which no write
// changes once stored (a controller's write starts from a deep copy, see
// current). A type Image cannot tell, or a value it cannot (a string that
// is not UTF-8), is not offered. It says whether obj was: the caller
// withdraws the offer once the write is done, unless the cache has yet to
// see the write (storeObject; a function returned for that allocated).
func (rq *request) offer(key string, value []byte, obj kapi.Object) bool {
	c := rq.res.cache
	ot := rq.res.storageVersion().objType
	if c == nil || !ot.plainMetadata || ot.image == nil {
		return false
	}
	offered, ok := ot.image.New(reflect.ValueOf(obj).Elem())
	if ok {
		c.Offer(key, value, offered.Interface())
	}
	return ok
}

// marshalStored is the storage form of an object, its stored value: JSON
// without a resourceVersion, which the store's revision supplies.
func marshalStored(obj kapi.Object) ([]byte, error) { return storedvalue.Marshal(obj) }

// respondConverted answers obj, of the storage version, in the request's
// version; value is its marshalStored encoding, or nil.
func (rq *request) respondConverted(code int, obj kapi.Object, value []byte) error {
	out, err := rq.res.fromStorage(obj)
	if err != nil {
		return err
	}
	return rq.respondStored(code, out, value)
}

// nameGenerationAttempts is how many names a create with generateName
// tries, as kube-apiserver's store (maxNameGenerationCreateAttempts).
const nameGenerationAttempts = 8

// generateNameConflict is kube-apiserver's answer when every name a
// generateName create tried was taken (apimachinery's
// NewGenerateNameConflict): 409 AlreadyExists, with a Retry-After of one
// second that tells the client another try may well succeed.
func generateNameConflict(res *resource, name string) *StatusError {
	e := NewStatusError(http.StatusConflict, kapi.StatusReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists, the server was not able to generate a unique name for the object", res.qualifiedResource(), name))
	e.Status.Details = &kapi.StatusDetails{Name: name, Group: res.Group, Kind: res.Plural, RetryAfterSeconds: 1}
	return e
}

// setNamespace checks the object's namespace against the request's, and
// fills it in.
func (rq *request) setNamespace(meta *kapi.ObjectMeta) error {
	if !rq.res.Namespaced {
		meta.Namespace = ""
		return nil
	}
	if meta.Namespace != "" && meta.Namespace != rq.namespace {
		return badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	meta.Namespace = rq.namespace
	return nil
}

// validate checks the metadata kube-apiserver checks, then runs the
// resource's own validation.
func (rq *request) validate(ctx context.Context, obj, old kapi.Object) FieldErrors {
	meta := obj.GetObjectMeta()
	var errs FieldErrors
	if meta.Name == "" {
		errs = append(errs, Required("metadata.name", "name or generateName is required"))
	} else if old == nil {
		for _, msg := range rq.res.validateName(meta.Name) {
			errs = append(errs, Invalid("metadata.name", meta.Name, msg))
		}
	}
	if rq.res.Namespaced {
		for _, msg := range names.IsDNS1123Label(meta.Namespace) {
			errs = append(errs, Invalid("metadata.namespace", meta.Namespace, msg))
		}
	}
	errs = append(errs, rq.validateObjectMeta(meta, old)...)
	if old != nil && old.GetObjectMeta().DeletionTimestamp != nil {
		for _, f := range meta.Finalizers {
			if !slices.Contains(old.GetObjectMeta().Finalizers, f) {
				errs = append(errs, Forbidden("metadata.finalizers", fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers []string{%q}", f)))
			}
		}
	}
	validate := rq.res.validate
	if rq.subresource == "status" {
		validate = rq.res.validateStatus
	}
	if validate != nil {
		obj, old = rq.res.inOwnVersion(obj, old)
		errs = append(errs, validate(ctx, obj, old)...)
	}
	return errs
}

// inOwnVersion is obj and old, of the storage version, in r's when r is
// a version of a kind with a Shape, which validates each version by its
// own schema (see Resource.Shape). Such versions share one Go type: only
// apiVersion changes, and that cannot fail.
func (r *resource) inOwnVersion(obj, old kapi.Object) (kapi.Object, kapi.Object) {
	if r.shape == nil || !r.converts() {
		return obj, old
	}
	if o, err := r.fromStorage(obj); err == nil {
		obj = o
	}
	if old != nil {
		if o, err := r.fromStorage(old); err == nil {
			old = o
		}
	}
	return obj, old
}
