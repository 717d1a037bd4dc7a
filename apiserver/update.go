package apiserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/deepequal"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/storedvalue"
	"github.com/kapi-dev/kapi/storage"
)

func (rq *request) update(ctx context.Context) error {
	obj, err := rq.decodeBody()
	if err != nil {
		return err
	}
	meta := obj.GetObjectMeta()
	if meta.Name != rq.name {
		return badRequest("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, rq.name)
	}
	if err := rq.setNamespace(meta); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		out, value, err := rq.write(ctx, attempts(obj), recordAnUpdate)
		if !errors.Is(err, storage.ErrNotFound) || !rq.res.createOnUpdate || rq.subresource != "" || attempt == 3 {
			if err != nil {
				return err
			}
			return rq.respondStored(http.StatusOK, out, value)
		}
		if err := rq.createOnUpdate(ctx, obj); !errors.Is(err, storage.ErrExists) {
			return err
		}
		// Created by another request meanwhile: this PUT updates it (unless
		// it keeps going as it comes, when the last try's answer stands).
	}
}

// createOnUpdate creates obj, the body of a PUT to a missing object of a resource that
// allows it, as kube-apiserver's store does: a uid in the body is a precondition the
// missing object fails (409), its resourceVersion is ignored, the caller must also be
// allowed to create, and admission sees a create; the answer is 201. It returns
// storage.ErrExists, unanswered, if the object appeared meanwhile.
func (rq *request) createOnUpdate(ctx context.Context, obj kapi.Object) error {
	if uid := obj.GetObjectMeta().UID; uid != "" {
		return rq.uidPreconditionFailed(uid, "")
	}
	if err := rq.authorizeAlso(ctx, "create"); err != nil {
		return err
	}
	// A deep copy: the create defaults and admits it in place, and if it
	// loses the race the update goes on from obj as the client sent it.
	return rq.createObject(ctx, deepCopyObject(obj), recordAnUpdate)
}

// uidPreconditionFailed is kube's answer to a PUT whose body's uid is not
// the stored object's (none when it is missing): its storage checks the uid
// as a precondition and refuses the write as an invalid object.
func (rq *request) uidPreconditionFailed(want, have string) error {
	return rq.res.invalidObject(rq.name, rq.res.key(rq.namespace, rq.name),
		fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", want, have))
}

// attempts is what an update desires, obj, for each attempt of write: a
// shallow copy the first time; a deep one after, for the watch cache may
// hold an image of the first attempt's object sharing obj's maps (when an
// equal write took it, see offer), which defaulters change in place.
func attempts(obj kapi.Object) desired {
	first := true
	return func(kapi.Object, []byte) (kapi.Object, error) {
		if first {
			first = false
			return shallowCopy(obj), nil
		}
		return deepCopyObject(obj), nil
	}
}

// desired is what an update asks of the object it changes, cur, in the
// request's version: read, never changed (write goes on from cur, which
// may be the watch cache's, shared). value is cur's stored value when
// it is its JSON (see current), else nil: cur's JSON made from it costs a
// copy rather than an encoding.
type desired func(cur kapi.Object, value []byte) (kapi.Object, error)

// write is the read-modify-write of an update or a patch: it reads the
// current object, asks desired for the new one, applies the rules of the
// resource or subresource, and writes it if it changed. If another write got
// in between it starts again, unless the client's resourceVersion named the
// version it meant to change. It returns the object written (or that would
// be) and its marshalStored bytes, from which respondStored answers. rec
// says whether it records an Update in managedFields or the object desired
// makes carries them (server-side apply).
func (rq *request) write(ctx context.Context, desired desired, rec managedRecord) (kapi.Object, []byte, error) {
	dryRun, err := rq.dryRun(nil)
	if err != nil {
		return nil, nil, err
	}
	key := rq.res.key(rq.namespace, rq.name)
	kv, cached, err := rq.latest(ctx, key, !dryRun) // the first attempt, if it will write
	for err == nil {
		var next kapi.Object
		var value []byte
		next, value, err = rq.attempt(ctx, key, kv, cached, desired, rec, dryRun)
		var failed storeFailed
		switch {
		case errors.As(err, &failed):
			return nil, nil, failed.error
		case errors.Is(err, errAgain):
			kv, cached, err = rq.latest(ctx, key, false)
		case err != nil && cached:
			// What the cache holds may be behind, and err only its
			// consequence (a JSON Patch test, a UID precondition, an
			// apply's conflict, validation, admission, a compare on a
			// key since deleted): it stands if the store still holds
			// that version, as kube-apiserver's GuaranteedUpdate answers
			// an error from the cached object only once the store shows
			// it current. Otherwise the next attempt starts from the
			// store's version; a store that cannot be read (or no longer
			// has the key) answers with its own error.
			fresh, ferr := rq.s.config.store.Get(ctx, key, 0)
			if ferr == nil && fresh.ModRevision == kv.ModRevision {
				return nil, nil, err
			}
			kv, cached, err = fresh, false, ferr
		default:
			return next, value, err
		}
	}
	return nil, nil, err
}

// errAgain says that an attempt of write must start again from the store.
var errAgain = errors.New("start again from the store")

// storeFailed is the error of an attempt's write to the store: write's
// answer as it is (a write that failed, or may have happened, is not
// looked at again).
type storeFailed struct{ error }

// attempt is one of write's attempts, from kv, the current object (from
// the watch cache if cached).
func (rq *request) attempt(ctx context.Context, key string, kv storage.KeyValue, cached bool, desired desired, rec managedRecord, dryRun bool) (kapi.Object, []byte, error) {
	// The write is made in the request's version (cur, want, next),
	// and admitted, validated and stored in the storage version
	// (curStored, nextStored).
	curStored, curValue, err := rq.current(ctx, kv)
	if err != nil {
		return nil, nil, err
	}
	if len(rq.s.config.mutating) > 0 {
		curValue = nil // a mutating hook sees, and may change, curStored
	}
	cur, err := rq.res.fromStorage(curStored)
	if err != nil {
		return nil, nil, err
	}
	want, err := desired(cur, curValue)
	if err != nil {
		return nil, nil, err
	}
	if wm, om := want.GetObjectMeta(), cur.GetObjectMeta(); (rq.subresource == "" || rq.subresource == "status") && wm.UID != "" && wm.UID != om.UID {
		if rq.r.Method == http.MethodPut { // a PUT's body uid is kube's storage precondition, checked before the update
			return nil, nil, rq.uidPreconditionFailed(wm.UID, om.UID)
		}
		return nil, nil, FieldErrors{Invalid("metadata.uid", wm.UID, "field is immutable")} // a patch's: kube's ValidateObjectMetaUpdate
	}
	given := int64(0) // none, or "0": kube's versioner reads both as none
	if rv := want.GetObjectMeta().ResourceVersion; rv != "" {
		if given, err = parseRevision(rv); err != nil {
			return nil, nil, err
		}
	}
	if given != 0 && given != kv.ModRevision {
		return nil, nil, storage.ErrConflict // if cached, checked against the store (write)
	} else if given == 0 && rq.res.needsRV && rq.subresource != "scale" && (rq.r.Method == http.MethodPut || rec == recordAnUpdate && rq.r.Header.Get("Content-Type") != "") {
		// A client's PUT or patch (one that drops it: {"metadata":{"resourceVersion":null}}), not an apply or a controller's write; in kube's store's words.
		return nil, nil, invalid(target{&resource{Group: rq.res.Group, Kind: rq.res.Plural}, rq.name}, FieldErrors{Invalid("metadata.resourceVersion", 0, "must be specified for an update")})
	}
	next, err := rq.prepareUpdate(cur, want)
	if err != nil {
		return nil, nil, err
	}
	if rec == recordAnUpdate {
		next.GetObjectMeta().ManagedFields = baseManagedFields(cur, want)
	} else {
		// An apply's merge recorded them on want; a subresource's
		// write takes the rest from cur.
		next.GetObjectMeta().ManagedFields = want.GetObjectMeta().ManagedFields
	}
	nextStored, err := rq.convertMutate(ctx, OperationUpdate, next, curStored, dryRun)
	if err != nil {
		return nil, nil, err
	}
	if m := nextStored.GetObjectMeta(); m.Name != rq.name || m.Namespace != rq.namespace {
		return nil, nil, badRequest("an admission hook must not change the name or namespace of the object")
	}
	if err := rq.checkWrite(ctx, OperationUpdate, nextStored, curStored, dryRun); err != nil {
		return nil, nil, err
	}
	bare, err := storedvalue.Unmanaged(nextStored, rq.res.storageVersion().objType.plainMetadata)
	if err != nil {
		return nil, nil, err
	}
	defer bare.Done()
	// What is answered, in the request's version, with what hooks did.
	if next, err = rq.res.fromStorage(nextStored); err != nil {
		return nil, nil, err
	}
	meta := next.GetObjectMeta()
	if unchanged, err := bare.Unchanged(nextStored, curStored, kv.Value); err != nil {
		return nil, nil, err
	} else if unchanged {
		if cached {
			return nil, nil, errAgain // unchanged from what the cache holds, which may be behind
		}
		meta.ResourceVersion = cur.GetObjectMeta().ResourceVersion
		return next, kv.Value, nil // nothing changed: nothing is written
	}
	value, err := rq.recordedValue(cur, curValue, next, nextStored, bare, rec)
	if err != nil {
		return nil, nil, err
	}
	if dryRun {
		meta.ResourceVersion = cur.GetObjectMeta().ResourceVersion
		return next, value, nil
	}
	rev, err := rq.storeObject(ctx, key, value, nextStored, kv.ModRevision)
	if errors.Is(err, storage.ErrConflict) {
		return nil, nil, errAgain // another write got in first
	}
	if err != nil && !(cached && errors.Is(err, storage.ErrNotFound)) {
		return nil, nil, storeFailed{err} // the write's outcome, which no read changes
	}
	if err != nil {
		return nil, nil, err
	}
	meta.ResourceVersion = formatRevision(rev)
	return next, value, nil
}

// prepareUpdate applies the rules of an update to what the client wants:
// server-set metadata stays; the resource ignores status and the status
// subresource ignores everything else; generation moves with the spec.
func (rq *request) prepareUpdate(cur, want kapi.Object) (kapi.Object, error) {
	res := rq.res
	if rq.subresource == "status" {
		next := shallowCopy(cur)
		res.statusValue(next).Set(res.statusValue(want))
		return next, nil
	}
	if take := res.hooks.subresources[rq.subresource]; take != nil {
		next := shallowCopy(cur)
		take(next, want)
		return next, nil
	}
	om, wm := cur.GetObjectMeta(), want.GetObjectMeta() // a uid of another object refused already (attempt)
	wm.UID, wm.CreationTimestamp = om.UID, om.CreationTimestamp
	wm.DeletionTimestamp, wm.DeletionGracePeriodSeconds = om.DeletionTimestamp, om.DeletionGracePeriodSeconds
	wm.GenerateName = om.GenerateName
	if res.statusField != nil { // a copy: cur may be the watch cache's (current)
		deepcopy.Set(res.statusValue(want), res.statusValue(cur))
	}
	if res.defaulter != nil {
		res.defaulter(want)
	}
	if res.hooks.update != nil {
		res.hooks.update(cur, want)
	}
	wm.Generation = om.Generation
	changed, err := res.specChanged(cur, want, rq.curOffered)
	if err != nil {
		return nil, err
	}
	if changed {
		wm.Generation++
	}
	return want, nil
}

// specChanged says whether a and b differ outside metadata and status: what
// moves metadata.generation; that is, whether they encode differently. For
// two objects that are what decoding their JSON gives (jsonimage.Image.Is:
// the old one as a rule, aImage if known so, the new one unless a hook set
// what JSON does not keep), comparing them says that without encoding either.
func (r *resource) specChanged(a, b kapi.Object, aImage bool) (bool, error) {
	if changed, told := r.specFieldsChanged(a, b, aImage); told {
		return changed, nil
	}
	sa, sb := r.withoutMetaAndStatus(a), r.withoutMetaAndStatus(b)
	if im := r.objType.image; im != nil && reflect.TypeOf(a).Elem() == r.objType.typ && reflect.TypeOf(b).Elem() == r.objType.typ &&
		(aImage || im.Is(reflect.ValueOf(sa).Elem())) && im.Is(reflect.ValueOf(sb).Elem()) {
		return !deepequal.Values(reflect.ValueOf(sa).Elem(), reflect.ValueOf(sb).Elem()), nil
	}
	ja, errA := json.Marshal(sa)
	jb, errB := json.Marshal(sb)
	if err := cmp.Or(errA, errB); err != nil {
		return false, err
	}
	return !bytes.Equal(ja, jb), nil
}

// specField is a top-level field of a resource's type outside metadata
// and status, with the image of its type.
type specField struct {
	index int
	image *jsonimage.Image
}

// specFieldsOf lists r's fields outside metadata and status, where each is
// an exported struct without omitzero (on which encoding/json's omitempty has no
// effect, so that an image of its type tells what JSON keeps of it as a
// field) and the whole type has an image; nil otherwise.
func specFieldsOf(r *resource) []specField {
	t := r.objType.typ
	if r.objType.image == nil || t.Kind() != reflect.Struct {
		return nil
	}
	obj := r.objType.newObject()
	v := reflect.ValueOf(obj).Elem()
	meta := reflect.ValueOf(obj.GetObjectMeta()).Pointer()
	var fields []specField
	for i := range t.NumField() {
		f := t.Field(i)
		if v.Field(i).Addr().Pointer() == meta && f.Type == reflect.TypeFor[kapi.ObjectMeta]() ||
			len(r.statusField) == 1 && r.statusField[0] == i {
			continue
		}
		if !f.IsExported() || f.Type.Kind() != reflect.Struct || strings.Contains(f.Tag.Get("json"), "omitzero") {
			return nil // an unexported field: reflection may not hand it to DeepEqual
		}
		im := jsonimage.New(f.Type)
		if im == nil {
			return nil
		}
		fields = append(fields, specField{index: i, image: im})
	}
	return fields
}

// specFieldsChanged is specChanged field by field, where both objects'
// fields outside metadata and status are what decoding their JSON gives:
// told false otherwise (a's not looked at if aImage). Metadata, the bulk of
// a small object, is neither copied nor walked.
func (r *resource) specFieldsChanged(a, b kapi.Object, aImage bool) (changed, told bool) {
	if r.specFields == nil || reflect.TypeOf(a).Elem() != r.objType.typ || reflect.TypeOf(b).Elem() != r.objType.typ {
		return false, false
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, f := range r.specFields {
		if !aImage && !f.image.Is(va.Field(f.index)) || !f.image.Is(vb.Field(f.index)) {
			return false, false
		}
	}
	for _, f := range r.specFields {
		if !deepequal.Values(va.Field(f.index), vb.Field(f.index)) {
			return true, true
		}
	}
	return false, true
}

func (r *resource) withoutMetaAndStatus(obj kapi.Object) kapi.Object {
	c := shallowCopy(obj)
	*c.GetObjectMeta() = kapi.ObjectMeta{}
	if r.statusField != nil {
		r.statusValue(c).SetZero()
	}
	return c
}
