package apiserver

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/applyconfig"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
)

// Field ownership: every write records in metadata.managedFields which
// manager set which fields (operation Update), and server-side apply
// (operation Apply) merges a configuration by that record, refusing to
// change fields another manager owns unless forced.

// fieldManager is who a write is recorded for: the fieldManager parameter
// (checked by checkWriteOptions), else, as kube-apiserver derives it, the
// User-Agent's (patch.UserAgentManager).
func (rq *request) fieldManager() string {
	if name := rq.query.Get("fieldManager"); name != "" {
		return name
	}
	return patch.UserAgentManager(rq.r.Header.Get("User-Agent"))
}

// ignoredFields are the top-level fields a write to the resource or its
// subresource neither changes nor owns: status on the resource when it has
// the status subresource, and everything but status on /status, as
// kube-apiserver's status strategies reset them. A kind with a Shape has
// its members in its schema, not its Go type; where the schema keeps
// unknown members at the root, docs (the JSON the write compares) name
// the others.
func (rq *request) ignoredFields(docs ...[]byte) []string {
	res := rq.res
	switch {
	case rq.subresource == "status":
		var ignore []string
		for _, f := range jsonfields.Of(res.typ) {
			if f.Name != "status" {
				ignore = append(ignore, f.Name)
			}
		}
		if res.shape == nil {
			return ignore
		}
		ignore = append(ignore, res.objType.schema.MemberNames(docs...)...)
		slices.Sort(ignore) // one list for one shape: patch caches by it
		return slices.DeleteFunc(slices.Compact(ignore), func(name string) bool { return name == "status" })
	case res.statusField != nil:
		return statusOnly
	}
	return nil
}

// statusOnly is what most writes ignore, shared: the field manager only reads it.
var statusOnly = []string{"status"}

// baseManagedFields are the entries a write starts from: the stored ones,
// unless the client sent its own; a single empty entry resets them, as in
// Kubernetes.
func baseManagedFields(cur, want kapi.Object) []kapi.ManagedFieldsEntry {
	sent := want.GetObjectMeta().ManagedFields
	switch {
	case sent == nil && cur != nil:
		return slices.Clone(cur.GetObjectMeta().ManagedFields) // cur may be the watch cache's (current)
	case len(sent) == 1 && sent[0] == (kapi.ManagedFieldsEntry{}):
		return []kapi.ManagedFieldsEntry{}
	}
	return sent
}

// recordManaged records in next's managedFields that the request's
// manager changed cur (nil on create) into next by an ordinary write.
// curValue and stored, if not nil, are cur's and next's marshalStored
// encodings (next's may lack its managedFields, which the field manager
// does not read), from which their JSON is made.
func (rq *request) recordManaged(cur kapi.Object, curValue []byte, next kapi.Object, stored []byte) error {
	now, nowAsIs, err := rq.fieldsJSON(next, stored)
	if err != nil {
		return err
	}
	var old []byte
	var oldAsIs bool
	if cur != nil {
		if old, oldAsIs, err = rq.fieldsJSON(cur, curValue); err != nil {
			return err
		}
	}
	meta := next.GetObjectMeta()
	opts := patch.UpdateOptions{Manager: rq.fieldManager(), APIVersion: rq.res.apiVersion(), Subresource: rq.subresource,
		Now: kapi.Now(), Ignore: rq.ignoredFields(old, now), Convert: rq.res.fieldsConverter()}
	if rq.curOffered && oldAsIs && nowAsIs && rq.res.shape == nil {
		opts.Old, opts.New = cur, next // old, now: their stored values as they are, cur its image (current)
	}
	managed, err := rq.res.objType.schema.Update(old, now, meta.ManagedFields, opts)
	if err != nil {
		// Entries that do not fit the object (sent by a client, or from an
		// older shape of the type) are kept as they are, as kube-apiserver
		// keeps them: ownership is advisory, the write is not.
		rq.s.config.logger.Debug("kapi: managed fields not updated", "resource", rq.res.qualifiedResource(), "name", meta.Name, "err", err)
		return nil
	}
	meta.ManagedFields = managed
	return nil
}

// fieldsJSON is the JSON the field manager reads of obj: its stored bytes
// as they are (asIs) when they are its JSON but for the resourceVersion,
// which no manager ever owns (patch's serverOwned), else objectJSON.
func (rq *request) fieldsJSON(obj kapi.Object, stored []byte) (data []byte, asIs bool, err error) {
	if stored != nil && rq.objType.plainMetadata && !rq.res.converts() {
		return stored, true, nil
	}
	data, err = rq.objectJSON(obj, stored)
	return data, false, err
}

// apply is server-side apply: a PATCH whose body is an apply configuration.
// It creates the object when absent.
func (rq *request) apply(ctx context.Context, typ patch.Type, doc []byte) error {
	manager := rq.query.Get("fieldManager") // required: see checkWriteOptions
	force, _ := rq.boolParam("force")
	config, parsed, err := applyconfig.Read(doc, typ == patch.ApplyCBOR)
	if err != nil {
		return rq.undecodable(err.Error())
	}
	// Decoding checks the configuration's fields (fieldValidation) and
	// kind; what is applied is the configuration without unknown fields.
	// One with nothing to check is decoded from what patch read of it.
	var applied kapi.Object
	_, invalid := rq.fieldValidation()
	if obj := rq.objType.newObject(); parsed != nil && invalid == nil && rq.res.shape == nil && parsed.Decode(obj) {
		applied, err = rq.checkType(obj)
	} else if applied, config, err = rq.decodeCleaned(codec.JSON(), config); err == nil {
		parsed, err = patch.ParseConfiguration(config)
	}
	if err != nil {
		return err
	}
	if err := rq.setNamespace(applied.GetObjectMeta()); err != nil {
		return err
	}
	rv := applied.GetObjectMeta().ResourceVersion
	if rv != "" {
		if _, err := parseRevision(rv); err != nil {
			return err
		}
	}
	opts := patch.ApplyOptions{
		Manager: manager, APIVersion: rq.res.apiVersion(), Subresource: rq.subresource,
		Force: force, Now: kapi.Now(), Convert: rq.res.fieldsConverter(),
	}
	merge := func(cur kapi.Object, value []byte) (kapi.Object, error) {
		var live []byte // patch reads cur (opts.Live): only ignoredFields on /status of a shaped kind reads live
		var managed []kapi.ManagedFieldsEntry
		if cur != nil && rq.subresource == "status" && rq.res.shape != nil {
			var err error
			if live, err = rq.objectJSON(cur, value); err != nil {
				return nil, err
			}
		}
		if cur != nil {
			managed = cur.GetObjectMeta().ManagedFields
		}
		opts := opts
		opts.Ignore, opts.Live = rq.ignoredFields(live, config), cur
		merged, managed, err := rq.res.objType.schema.ApplyMerged(live, parsed, managed, opts)
		if err != nil {
			return nil, err // a conflict is statusOf's 409
		}
		obj, err := rq.appliedObject(merged, cur, value, applied)
		applied = nil // its parts may be obj's: a later attempt decodes
		if err != nil {
			return nil, err
		}
		meta := obj.GetObjectMeta()
		if err := rq.setNamespace(meta); err != nil { // a configuration need not name it
			return nil, err
		}
		if meta.Name != rq.name {
			return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, rq.name)
		}
		meta.ManagedFields = managed
		// The configuration's resourceVersion, if any, is a precondition.
		meta.ResourceVersion = rv
		return obj, nil
	}
	for attempt := 1; ; attempt++ {
		out, value, err := rq.write(ctx, merge, recordedAlready)
		if rq.subresource != "" || !errors.Is(err, storage.ErrNotFound) || attempt == 3 {
			if err != nil {
				return err
			}
			return rq.respondStored(http.StatusOK, out, value)
		}
		// Absent: apply creates it, unless another request did meanwhile;
		// then the configuration is applied to that. A resource that
		// refuses creates refuses this one too, as kube-apiserver refuses
		// an apply while a custom resource's definition terminates.
		if err := rq.refusesCreate(); err != nil {
			return err
		}
		obj, err := merge(nil, nil)
		if err != nil {
			return err
		}
		if err := rq.authorizeAlso(ctx, "create"); err != nil {
			return err
		}
		if err := rq.createObject(ctx, obj, recordedAlready); !errors.Is(err, storage.ErrExists) {
			return err
		}
	}
}

// appliedObject is the object an apply merged, put together from cur and
// the decoded configuration (applied, given up; nil if none) where their
// JSON is the result's (patch.Merged.Decode), else decoded from its JSON.
// cur must be what decoding its stored value gives, which it is when value
// is its JSON.
func (rq *request) appliedObject(m *patch.Merged, cur kapi.Object, value []byte, applied kapi.Object) (kapi.Object, error) {
	if rq.res.shape == nil && rq.objType.plainMetadata && !rq.res.converts() && (cur == nil || value != nil) {
		if obj := rq.objType.newObject(); m.Decode(obj, cur, applied) {
			return rq.checkType(obj)
		}
	}
	merged, err := m.JSON()
	if err != nil {
		return nil, err
	}
	return rq.decode(codec.JSON(), merged)
}
