package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
)

func (rq *request) create(ctx context.Context) error {
	obj, err := rq.decodeBody()
	if err != nil {
		return err
	}
	return rq.createObject(ctx, obj)
}

// createObject stores a new object decoded from a request.
func (rq *request) createObject(ctx context.Context, obj kapi.Object) error {
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
	meta.UID = newUID()
	meta.CreationTimestamp = kapi.Now()
	meta.Generation = 1
	meta.ResourceVersion = ""
	meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = nil, nil
	if res.statusField != nil {
		v := res.statusValue(obj)
		v.Set(reflect.Zero(v.Type()))
	}
	if res.defaulter != nil {
		res.defaulter(obj) // in the request's version
	}
	if err := rq.s.admitNamespace(ctx, rq, meta.Name); err != nil {
		return err
	}
	// Admitted, validated and stored in the storage version.
	requested := obj
	if obj, err = res.toStorage(obj); err != nil {
		return err
	}
	meta = obj.GetObjectMeta()
	if err := rq.mutate(ctx, OperationCreate, obj, nil, dryRun); err != nil {
		return err
	}
	if err := rq.setNamespace(meta); err != nil { // a hook may have changed it
		return err
	}

	var value []byte // the object's marshalStored encoding, when made ahead
	for attempt := 0; ; attempt++ {
		if generated {
			meta.Name = generateName(meta.GenerateName)
			value = nil // made again with the name
		}
		rq.name = meta.Name
		if res.hooks.create != nil { // after mutation and naming, as kube's PrepareForCreate
			res.hooks.create(obj)
		}
		if errs := rq.validate(ctx, obj, nil); len(errs) > 0 {
			return errs
		}
		if err := rq.admitValid(ctx, OperationCreate, obj, nil, dryRun); err != nil {
			return err
		}
		if !rq.managedByApply && attempt == 0 {
			// Recorded in the request's version, as its manager sees it.
			if requested, err = res.fromStorage(obj); err != nil {
				return err
			}
			rm := requested.GetObjectMeta()
			rm.ManagedFields = baseManagedFields(nil, requested)
			// Encoded once: the managed fields are recorded from its
			// encoding and spliced into it (requested is obj, unconverted).
			if !dryRun && !res.converts() {
				if value, err = marshalStored(obj); err != nil {
					return err
				}
			}
			if err := rq.recordUpdate(nil, requested, value); err != nil {
				return err
			}
			meta.ManagedFields = rm.ManagedFields
			if value != nil {
				if value, err = rq.remarshalManaged(obj, value); err != nil {
					return err
				}
			}
		}
		if dryRun { // fails as the write would if the name is taken
			_, err := rq.s.config.store.Get(ctx, res.key(meta.Namespace, meta.Name), 0)
			switch {
			case errors.Is(err, storage.ErrNotFound):
				return rq.respondConverted(http.StatusCreated, obj, nil)
			case err == nil:
				err = storage.ErrExists
			}
			if errors.Is(err, storage.ErrExists) && generated && attempt < 8 {
				continue
			}
			return err
		}
		if value == nil {
			if value, err = marshalStored(obj); err != nil {
				return err
			}
		}
		key := res.key(meta.Namespace, meta.Name)
		written := rq.offer(key, value, obj)
		rev, err := rq.s.config.store.Create(ctx, key, value)
		written(rev, err)
		if errors.Is(err, storage.ErrExists) && generated && attempt < 8 {
			continue // another name, as kube-apiserver retries generateName
		}
		if err != nil {
			return err
		}
		meta.ResourceVersion = formatRevision(rev)
		return rq.respondConverted(http.StatusCreated, obj, value)
	}
}

// respondConverted answers obj, of the storage version, in the request's
// version; value is its marshalStored encoding, or nil.
func (rq *request) respondConverted(code int, obj kapi.Object, value []byte) error {
	out, err := rq.res.fromStorage(obj)
	if err != nil {
		return err
	}
	return rq.respondStored(code, out, value)
}

func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + randomSuffix()
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
		for _, msg := range isDNS1123Label(meta.Namespace) {
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
		errs = append(errs, validate(ctx, obj, old)...)
	}
	return errs
}

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
	out, value, err := rq.write(ctx, attempts(obj))
	if err != nil {
		return err
	}
	return rq.respondStored(http.StatusOK, out, value)
}

// attempts is what an update desires, obj, for each attempt of write: a
// shallow copy the first time; a deep one after, for the watch cache may
// hold an image of the first attempt's object sharing obj's maps (when an
// equal write took it, see offer), which defaulters change in place.
func attempts(obj kapi.Object) func(kapi.Object) (kapi.Object, error) {
	first := true
	return func(kapi.Object) (kapi.Object, error) {
		if first {
			first = false
			return shallowCopy(obj), nil
		}
		return deepCopyObject(obj), nil
	}
}

func (rq *request) patch(ctx context.Context) error {
	typ := patch.Type(mediaType(rq.r.Header.Get("Content-Type")))
	accepted := []patch.Type{patch.JSONPatch, patch.MergePatch, patch.StrategicMergePatch, patch.ApplyYAML, patch.ApplyCBOR}
	if rq.subresource == "scale" {
		accepted = accepted[:3] // a Scale is not applied: its fields belong to the object
	}
	if !slices.Contains(accepted, typ) {
		names := make([]string, len(accepted))
		for i, t := range accepted {
			names[i] = string(t)
		}
		return NewStatusError(http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: "+strings.Join(names, ", "))
	}
	doc, err := rq.body()
	if err != nil {
		return err
	}
	if typ == patch.MergePatch || typ == patch.StrategicMergePatch {
		if err := rq.checkDuplicateFields(doc); err != nil {
			return err
		}
	}
	if rq.subresource == "scale" {
		return rq.patchScale(ctx, typ, doc)
	}
	if typ == patch.ApplyYAML || typ == patch.ApplyCBOR {
		return rq.apply(ctx, typ, doc)
	}
	out, value, err := rq.write(ctx, func(cur kapi.Object) (kapi.Object, error) {
		obj, err := rq.patched(cur, typ, doc)
		if err != nil {
			return nil, err
		}
		if meta := obj.GetObjectMeta(); meta.Name != rq.name || meta.Namespace != rq.namespace {
			return nil, badRequest("the patch must not change the name or namespace of the object")
		}
		return obj, nil
	})
	if err != nil {
		return err
	}
	return rq.respondStored(http.StatusOK, out, value)
}

// patched is cur with the patch doc of type typ applied, decoded.
func (rq *request) patched(cur kapi.Object, typ patch.Type, doc []byte) (kapi.Object, error) {
	if obj, ok := rq.mergedDecoded(cur, typ, doc); ok {
		return obj, nil
	}
	stored := rq.curValue // its stored bytes, when they are its JSON
	// A patch that cannot name managedFields leaves them as they are:
	// it is applied to the object without them, and the result takes
	// cur's rather than decode them again (half of a small object).
	keepManaged := false
	if stored != nil && typ != patch.JSONPatch && !mayNameManagedFields(doc) {
		if without, ok, err := splice.WithManagedFields(stored, nil); err == nil && ok {
			stored, keepManaged = without, true
		}
	}
	original, err := rq.objectJSON(cur, stored)
	if err != nil {
		return nil, err
	}
	patched, err := rq.res.objType.schema.Patch(typ, original, doc)
	if err != nil {
		return nil, err
	}
	obj, err := rq.decode(codec.JSON(), patched)
	if err == nil && keepManaged {
		// A slice of its own, as baseManagedFields makes: cur may be
		// the watch cache's (current); the entries' times and sets are
		// never changed in place.
		obj.GetObjectMeta().ManagedFields = slices.Clone(cur.GetObjectMeta().ManagedFields)
	}
	return obj, err
}

// mergedDecoded applies a merge or strategic merge patch by decoding it
// into a copy of cur where that is what merging cur's JSON and decoding
// the result gives (jsonimage.Merger): cur must be what decoding its
// stored value gives, which it is when that value is its JSON. A small
// patch is so applied without encoding, merging and decoding the whole
// object. ok false: the patch is left to merging.
func (rq *request) mergedDecoded(cur kapi.Object, typ patch.Type, doc []byte) (obj kapi.Object, ok bool) {
	m := rq.objType.merger
	if m == nil || rq.curValue == nil || rq.res.converts() || typ != patch.MergePatch && typ != patch.StrategicMergePatch {
		return nil, false
	}
	if _, err := rq.fieldValidation(); err != nil || !m.Mergeable(doc, typ == patch.StrategicMergePatch) {
		return nil, false
	}
	obj = deepCopyObject(cur)
	if err := codec.UnmarshalJSON(doc, obj); err != nil {
		return nil, false // merging says what is wrong
	}
	if obj, err := rq.checkType(obj); err == nil {
		return obj, true
	}
	return nil, false
}

// unchangedStored says whether next, encoded as value (without its
// managedFields if bare), is what stored holds of cur. managedFields equal
// to cur's, which decoding stored made, stand for the stored ones; others
// are encoded to be compared.
func unchangedStored(value []byte, bare bool, next, cur kapi.Object, stored []byte) (bool, error) {
	if !bare {
		return bytes.Equal(value, stored), nil
	}
	managed := next.GetObjectMeta().ManagedFields
	if reflect.DeepEqual(managed, cur.GetObjectMeta().ManagedFields) {
		return splice.EqualUnmanaged(value, stored), nil
	}
	full, ok, err := splice.WithManagedFields(value, managed)
	if !ok || err != nil {
		return false, err
	}
	return bytes.Equal(full, stored), nil
}

// mayNameManagedFields says whether a merge or strategic merge patch may
// name metadata.managedFields: whether it holds the name, or an escape that
// could spell it. (A JSON patch may read them without naming them: a test
// of /metadata.)
func mayNameManagedFields(doc []byte) bool {
	return bytes.Contains(doc, []byte("managedFields")) || bytes.Contains(doc, []byte(`\u`))
}

// write is the read-modify-write of an update or a patch: it reads the
// current object, asks desired for the new one, applies the rules of the
// resource or subresource, and writes it if it changed. If another write got
// in between it starts again, unless the client's resourceVersion named the
// version it meant to change. It returns the object written (or that would
// be) and its marshalStored bytes, from which respondStored answers.
func (rq *request) write(ctx context.Context, desired func(cur kapi.Object) (kapi.Object, error)) (kapi.Object, []byte, error) {
	dryRun, err := rq.dryRun(nil)
	if err != nil {
		return nil, nil, err
	}
	store, key := rq.s.config.store, rq.res.key(rq.namespace, rq.name)
	for {
		kv, err := store.Get(ctx, key, 0)
		if err != nil {
			return nil, nil, err
		}
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
		rq.curValue = curValue
		cur, err := rq.res.fromStorage(curStored)
		if err != nil {
			return nil, nil, err
		}
		want, err := desired(shallowCopy(cur))
		if err != nil {
			return nil, nil, err
		}
		if rv := want.GetObjectMeta().ResourceVersion; rv != "" {
			rev, err := parseRevision(rv)
			if err != nil {
				return nil, nil, err
			}
			if rev != kv.ModRevision {
				return nil, nil, storage.ErrConflict
			}
		}
		next, err := rq.prepareUpdate(cur, want)
		if err != nil {
			return nil, nil, err
		}
		if !rq.managedByApply {
			next.GetObjectMeta().ManagedFields = baseManagedFields(cur, want)
		}
		nextStored, err := rq.res.toStorage(next)
		if err != nil {
			return nil, nil, err
		}
		if err := rq.mutate(ctx, OperationUpdate, nextStored, curStored, dryRun); err != nil {
			return nil, nil, err
		}
		if m := nextStored.GetObjectMeta(); m.Name != rq.name || m.Namespace != rq.namespace {
			return nil, nil, badRequest("an admission hook must not change the name or namespace of the object")
		}
		if errs := rq.validate(ctx, nextStored, curStored); len(errs) > 0 {
			return nil, nil, errs
		}
		if err := rq.admitValid(ctx, OperationUpdate, nextStored, curStored, dryRun); err != nil {
			return nil, nil, err
		}
		// Encoded without managedFields when it can be (bare): they are
		// put in once recorded.
		value, bare, err := rq.res.storageVersion().marshalUnmanaged(nextStored)
		if err != nil {
			return nil, nil, err
		}
		// What is answered, in the request's version, with what hooks did.
		if next, err = rq.res.fromStorage(nextStored); err != nil {
			return nil, nil, err
		}
		meta := next.GetObjectMeta()
		if unchanged, err := unchangedStored(value, bare, nextStored, curStored, kv.Value); err != nil {
			return nil, nil, err
		} else if unchanged {
			meta.ResourceVersion = cur.GetObjectMeta().ResourceVersion
			return next, kv.Value, nil // nothing changed: nothing is written
		}
		if !rq.managedByApply {
			// The field manager reads no managedFields in value.
			if err := rq.recordUpdate(cur, next, value); err != nil {
				return nil, nil, err
			}
			nextStored.GetObjectMeta().ManagedFields = meta.ManagedFields
		}
		if !rq.managedByApply || bare {
			if value, err = rq.remarshalManaged(nextStored, value); err != nil {
				return nil, nil, err
			}
		}
		if dryRun {
			meta.ResourceVersion = cur.GetObjectMeta().ResourceVersion
			return next, value, nil
		}
		var rev int64
		if sm := nextStored.GetObjectMeta(); sm.DeletionTimestamp != nil && !rq.res.held(nextStored) {
			var gone storage.KeyValue
			gone, err = store.Delete(ctx, key, kv.ModRevision)
			rev = gone.ModRevision
		} else {
			written := rq.offer(key, value, nextStored)
			rev, err = store.Update(ctx, key, value, kv.ModRevision)
			written(rev, err)
		}
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		meta.ResourceVersion = formatRevision(rev)
		return next, value, nil
	}
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
	om, wm := cur.GetObjectMeta(), want.GetObjectMeta()
	if wm.UID != "" && wm.UID != om.UID {
		return nil, NewStatusError(http.StatusConflict, kapi.StatusReasonConflict,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", wm.UID, om.UID))
	}
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
	changed, err := res.specChanged(cur, want)
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
// the old one as a rule, the new one unless a hook set what JSON does not
// keep), comparing them says that without encoding either.
func (r *resource) specChanged(a, b kapi.Object) (bool, error) {
	if changed, told := r.specFieldsChanged(a, b); told {
		return changed, nil
	}
	sa, sb := r.withoutMetaAndStatus(a), r.withoutMetaAndStatus(b)
	if im := r.objType.image; im != nil && reflect.TypeOf(a).Elem() == r.objType.typ && reflect.TypeOf(b).Elem() == r.objType.typ &&
		im.Is(reflect.ValueOf(sa).Elem()) && im.Is(reflect.ValueOf(sb).Elem()) {
		return !reflect.DeepEqual(sa, sb), nil
	}
	ja, err := json.Marshal(sa)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(sb)
	if err != nil {
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
// told false otherwise. Metadata, the bulk of a small object, is neither
// copied nor walked.
func (r *resource) specFieldsChanged(a, b kapi.Object) (changed, told bool) {
	if r.specFields == nil || reflect.TypeOf(a).Elem() != r.objType.typ || reflect.TypeOf(b).Elem() != r.objType.typ {
		return false, false
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, f := range r.specFields {
		if !f.image.Is(va.Field(f.index)) || !f.image.Is(vb.Field(f.index)) {
			return false, false
		}
	}
	for _, f := range r.specFields {
		if !reflect.DeepEqual(va.Field(f.index).Addr().Interface(), vb.Field(f.index).Addr().Interface()) {
			return true, true
		}
	}
	return false, true
}

func (r *resource) withoutMetaAndStatus(obj kapi.Object) kapi.Object {
	c := shallowCopy(obj)
	*c.GetObjectMeta() = kapi.ObjectMeta{}
	if r.statusField != nil {
		v := r.statusValue(c)
		v.Set(reflect.Zero(v.Type()))
	}
	return c
}
