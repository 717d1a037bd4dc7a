package apiserver

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/patch"
)

func (rq *request) patch(ctx context.Context) error {
	typ := patch.Type(mediaType(rq.r.Header.Get("Content-Type")))
	accepted := []patch.Type{patch.JSONPatch, patch.MergePatch, patch.StrategicMergePatch, patch.ApplyYAML, patch.ApplyCBOR}
	if rq.res.shape != nil {
		// A custom resource has no strategic merge patch: kube-apiserver's
		// CRD handler accepts JSON, merge and apply patches only (and
		// apply-patch+cbor with CBOR served, as kapi serves it).
		accepted = []patch.Type{patch.JSONPatch, patch.MergePatch, patch.ApplyYAML, patch.ApplyCBOR}
	}
	if rq.subresource == "scale" {
		accepted = accepted[:2] // a Scale is not applied: its fields belong to the object
		if rq.res.shape == nil {
			accepted = append(accepted, patch.StrategicMergePatch)
		}
	}
	if !slices.Contains(accepted, typ) {
		names := make([]string, len(accepted))
		for i, t := range accepted {
			names[i] = string(t)
		}
		return NewStatusError(http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: "+strings.Join(names, ", "))
	}
	if (typ == patch.ApplyYAML || typ == patch.ApplyCBOR) && rq.query.Get("fieldManager") == "" {
		// After the media type, as kube-apiserver validates PatchOptions:
		// kubectl names itself; a controller must name itself.
		return optionsInvalid("PatchOptions", FieldErrors{Required("fieldManager", "is required for apply patch")})
	}
	doc, err := rq.body()
	if err != nil {
		return err
	}
	if typ == patch.MergePatch || typ == patch.StrategicMergePatch {
		if err := rq.checkDuplicateFields(doc, typ == patch.StrategicMergePatch); err != nil {
			return err
		}
	}
	if rq.subresource == "scale" {
		return rq.patchScale(ctx, typ, doc)
	}
	if typ == patch.ApplyYAML || typ == patch.ApplyCBOR {
		return rq.apply(ctx, typ, doc)
	}
	out, value, err := rq.write(ctx, func(cur kapi.Object, value []byte) (kapi.Object, error) {
		obj, err := rq.patched(cur, value, typ, doc)
		if err != nil {
			return nil, err
		}
		if meta := obj.GetObjectMeta(); meta.Name != rq.name || meta.Namespace != rq.namespace {
			return nil, badRequest("the patch must not change the name or namespace of the object")
		}
		return obj, nil
	}, recordAnUpdate)
	if err != nil {
		return err
	}
	return rq.respondStored(http.StatusOK, out, value)
}

// patched is cur with the patch doc of type typ applied, decoded. value is
// cur's stored value when it is its JSON, else nil.
func (rq *request) patched(cur kapi.Object, value []byte, typ patch.Type, doc []byte) (kapi.Object, error) {
	if obj, ok := rq.mergedDecoded(cur, value, typ, doc); ok {
		return obj, nil
	}
	stored := value
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
// stored value gives, which it is when that value (value) is its JSON. A small
// patch is so applied without encoding, merging and decoding the whole
// object. ok false: the patch is left to merging.
func (rq *request) mergedDecoded(cur kapi.Object, value []byte, typ patch.Type, doc []byte) (obj kapi.Object, ok bool) {
	m := rq.objType.merger
	if m == nil || value == nil || rq.res.converts() || typ != patch.MergePatch && typ != patch.StrategicMergePatch {
		return nil, false
	}
	if _, err := rq.fieldValidation(); err != nil || !m.Mergeable(doc, typ == patch.StrategicMergePatch) {
		return nil, false
	}
	obj = rq.patchable(cur, doc)
	if err := codec.UnmarshalJSON(doc, obj); err != nil {
		return nil, false // merging says what is wrong
	}
	if obj, err := rq.checkType(obj); err == nil {
		return obj, true
	}
	return nil, false
}

// patchable is a copy of cur for mergedDecoded to decode a patch doc into,
// sharing with cur (which may be the watch cache's) nothing a step of the
// write changes in place. Two parts are not copied: on the resource, its
// status, left empty, which prepareUpdate replaces with a copy of cur's; and
// managedFields' entries, unless doc may name them, as patched shares them
// (their Time and FieldsV1 are the cache's: nothing may write through them).
func (rq *request) patchable(cur kapi.Object, doc []byte) kapi.Object {
	if mayNameManagedFields(doc) {
		return deepCopyObject(cur)
	}
	obj := shallowCopy(cur)
	meta := obj.GetObjectMeta()
	managed := meta.ManagedFields
	meta.ManagedFields = nil
	if rq.subresource == "" && rq.res.statusField != nil {
		rq.res.statusValue(obj).SetZero()
	}
	deepcopy.Set(reflect.ValueOf(obj).Elem(), reflect.ValueOf(obj).Elem()) // what the shallow copy shares, copied
	meta.ManagedFields = slices.Clone(managed)
	return obj
}

// mayNameManagedFields says whether a merge or strategic merge patch may
// name metadata.managedFields: whether it holds the name, or an escape that
// could spell it. (A JSON patch may read them without naming them: a test
// of /metadata.)
func mayNameManagedFields(doc []byte) bool {
	return bytes.Contains(doc, []byte("managedFields")) || bytes.Contains(doc, []byte(`\u`))
}
