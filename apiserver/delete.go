package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/internal/requestinfo"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Deletion: DELETE of one object (marked for deletion while finalizers hold
// it, with the garbage collector's propagation policy as a finalizer),
// DELETE of a collection, the DeleteOptions both read, and the unsafe
// deletion of an object that cannot be read.

// deleteOptions is the body of a DELETE, as meta/v1 DeleteOptions, with
// Kubernetes' protobuf field numbers: clients send it in their content type.
type deleteOptions struct {
	kapi.TypeMeta      `json:",inline"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty" protobuf:"varint,1,opt,name=gracePeriodSeconds"`
	Preconditions      *preconditions `json:"preconditions,omitempty" protobuf:"bytes,2,opt,name=preconditions"`
	OrphanDependents   *bool          `json:"orphanDependents,omitempty" protobuf:"varint,3,opt,name=orphanDependents"`
	PropagationPolicy  *string        `json:"propagationPolicy,omitempty" protobuf:"bytes,4,opt,name=propagationPolicy"`
	DryRun             []string       `json:"dryRun,omitempty" protobuf:"bytes,5,rep,name=dryRun"`
	// IgnoreStoreReadErrorWithClusterBreakingPotential deletes an object
	// that is stored but cannot be read, skipping everything a deletion
	// otherwise does (see unsafeDelete).
	IgnoreStoreReadErrorWithClusterBreakingPotential *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential,omitempty" protobuf:"varint,6,opt,name=ignoreStoreReadErrorWithClusterBreakingPotential"`
}

// unsafe says whether the options ask for the deletion of an object that
// cannot be read.
func (o *deleteOptions) unsafe() bool {
	return o.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *o.IgnoreStoreReadErrorWithClusterBreakingPotential
}

type preconditions struct {
	UID             *string `json:"uid,omitempty" protobuf:"bytes,1,opt,name=uid"`
	ResourceVersion *string `json:"resourceVersion,omitempty" protobuf:"bytes,2,opt,name=resourceVersion"`
}

func (rq *request) deleteOptions() (deleteOptions, bool, error) {
	var opts deleteOptions
	data, err := rq.body()
	if err != nil {
		return opts, false, err
	}
	if len(bytes.TrimSpace(data)) > 0 {
		in := codec.JSON()
		if ct := rq.r.Header.Get("Content-Type"); ct != "" {
			if in, err = codec.ForContentType(ct, true); err != nil {
				return opts, false, err
			}
		}
		jsonData, text, err := in.ToJSON(data)
		switch {
		case err != nil:
		case text:
			err = json.Unmarshal(jsonData, &opts)
		default:
			err = in.Unmarshal(data, &opts)
		}
		if err != nil {
			return opts, false, badRequest("the body of the DELETE is not valid DeleteOptions: %v", err)
		}
	}
	if p := rq.query.Get("propagationPolicy"); p != "" {
		opts.PropagationPolicy = &p
	}
	if _, set := rq.query["orphanDependents"]; set {
		orphan, _ := rq.boolParam("orphanDependents")
		opts.OrphanDependents = &orphan
	}
	if _, set := rq.query["ignoreStoreReadErrorWithClusterBreakingPotential"]; set {
		ignore, _ := rq.boolParam("ignoreStoreReadErrorWithClusterBreakingPotential")
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = &ignore
	}
	if s := rq.query.Get("gracePeriodSeconds"); s != "" {
		n, err := parseRevision(s)
		if err != nil {
			return opts, false, badRequest("gracePeriodSeconds must be a non-negative integer, not %q", s)
		}
		opts.GracePeriodSeconds = &n
	}
	// The checks of kube-apiserver's ValidateDeleteOptions, all of them.
	var errs FieldErrors
	if opts.PropagationPolicy != nil {
		// Both set is 422 in kube-apiserver: they say the same thing two ways.
		if opts.OrphanDependents != nil {
			errs = append(errs, Invalid("propagationPolicy", *opts.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set"))
		}
		switch *opts.PropagationPolicy {
		case "Orphan", "Background", "Foreground":
		default:
			errs = append(errs, NotSupported("propagationPolicy", *opts.PropagationPolicy, "Foreground", "Background", "Orphan"))
		}
	}
	if opts.unsafe() {
		for _, other := range []struct {
			name string
			set  bool
		}{
			{"propagationPolicy", opts.PropagationPolicy != nil}, {"orphanDependents", opts.OrphanDependents != nil},
			{"gracePeriodSeconds", opts.GracePeriodSeconds != nil}, {"preconditions", opts.Preconditions != nil},
		} {
			if other.set {
				errs = append(errs, Invalid("ignoreStoreReadErrorWithClusterBreakingPotential", true, "cannot be set together with ."+other.name))
			}
		}
	}
	if len(errs) > 0 {
		return opts, false, deleteOptionsInvalid(errs...)
	}
	dryRun, err := rq.dryRun(opts.DryRun)
	return opts, dryRun, err
}

// deleteOptionsInvalid is kube-apiserver's 422 for DeleteOptions that
// contradict themselves.
func deleteOptionsInvalid(errs ...*FieldError) error {
	return optionsInvalid("DeleteOptions", errs)
}

func (rq *request) delete(ctx context.Context) error {
	opts, dryRun, err := rq.deleteOptions()
	if err != nil {
		return err
	}
	if opts.unsafe() {
		return rq.unsafeDelete(ctx, dryRun)
	}
	obj, deleted, err := rq.deleteOne(ctx, rq.name, opts, dryRun)
	if err != nil {
		return err
	}
	if !deleted { // finalizers hold it: it is being deleted
		code := http.StatusOK
		if opts.OrphanDependents != nil && !*opts.OrphanDependents {
			code = http.StatusAccepted // as kube-apiserver, for clients that asked for dependents to go
		}
		return rq.respond(code, obj)
	}
	st := kapi.Status{
		TypeMeta: kapi.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   kapi.StatusSuccess,
		Details:  &kapi.StatusDetails{Name: rq.name, Group: rq.res.Group, Kind: rq.res.Plural, UID: obj.GetObjectMeta().UID},
	}
	writeStatus(rq.w, rq.r, rq.out.Format, st)
	return nil
}

// deleteOne deletes the named object, or marks it for deletion if it has
// finalizers. It returns the object's last state, in the request's
// version, and whether it is gone.
func (rq *request) deleteOne(ctx context.Context, name string, opts deleteOptions, dryRun bool) (kapi.Object, bool, error) {
	obj, gone, err := rq.deleteStored(ctx, name, opts, dryRun)
	if err != nil {
		return nil, false, err
	}
	if obj, err = rq.res.fromStorage(obj); err != nil {
		return nil, false, err
	}
	return obj, gone, nil
}

// deleteStored is deleteOne, the object in the storage version.
func (rq *request) deleteStored(ctx context.Context, name string, opts deleteOptions, dryRun bool) (kapi.Object, bool, error) {
	store, key := rq.s.config.store, rq.res.key(rq.namespace, name)
	for {
		kv, err := store.Get(ctx, key, 0)
		if err != nil {
			return nil, false, err
		}
		obj, _, err := rq.current(ctx, kv)
		if err != nil {
			return nil, false, err
		}
		meta := obj.GetObjectMeta()
		if p, why := opts.Preconditions, ""; p != nil { // worded as kube's BeforeDelete, about the kind
			if p.UID != nil && *p.UID != meta.UID {
				why = fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, meta.UID)
			} else if p.ResourceVersion != nil && *p.ResourceVersion != meta.ResourceVersion {
				why = fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, meta.ResourceVersion)
			}
			if why != "" {
				e := NewStatusError(http.StatusConflict, kapi.StatusReasonConflict, fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", strings.TrimSuffix(rq.res.Kind+"."+rq.res.Group, "."), name, why))
				e.Status.Details = &kapi.StatusDetails{Name: name, Group: rq.res.Group, Kind: rq.res.Kind}
				return nil, false, e
			}
		}
		if err := rq.mutate(ctx, OperationDelete, nil, obj, dryRun); err != nil {
			return nil, false, err
		}
		if err := rq.admitValid(ctx, OperationDelete, nil, obj, dryRun); err != nil {
			return nil, false, err
		}
		marked := meta.DeletionTimestamp != nil // the hook may mark it itself: see OnDelete
		if rq.res.hooks.delete != nil {
			if err := rq.res.hooks.delete(obj); err != nil {
				return nil, false, err
			}
		}
		// The propagation policy is a finalizer of the collector's, even on
		// an object already being deleted, as kube-apiserver sets it.
		finalizers, changed := gc.DeletionFinalizers(meta.Finalizers, opts.OrphanDependents, opts.PropagationPolicy)
		meta.Finalizers = finalizers
		if rq.res.held(obj) {
			if marked && !changed {
				return obj, false, nil
			}
			if meta.DeletionTimestamp == nil {
				now, zero := kapi.Now(), int64(0)
				meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = &now, &zero
				if meta.Generation > 0 {
					meta.Generation++ // as kube-apiserver: what is asked of controllers changed
				}
			}
			if dryRun {
				return obj, false, nil
			}
			value, err := marshalStored(obj)
			if err != nil {
				return nil, false, err
			}
			rev, err := store.Update(ctx, key, value, kv.ModRevision)
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, false, err
			}
			meta.ResourceVersion = formatRevision(rev)
			return obj, false, nil
		}
		if dryRun {
			return obj, true, nil
		}
		gone, err := store.Delete(ctx, key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		meta.ResourceVersion = formatRevision(gone.ModRevision)
		return obj, true, nil
	}
}

func (rq *request) deleteCollection(ctx context.Context) error {
	opts, dryRun, err := rq.deleteOptions()
	if err != nil {
		return err
	}
	if opts.unsafe() {
		return deleteOptionsInvalid(Invalid("ignoreStoreReadErrorWithClusterBreakingPotential", true, "is not allowed with DELETECOLLECTION, try again after removing the option"))
	}
	sel, err := rq.parseSelectors()
	if err != nil {
		return err
	}
	if err := rq.consistent(ctx, ""); err != nil {
		return err
	}
	if bad := rq.res.cache.Unreadable(rq.res.keyPrefix(rq.namespace)); len(bad) > 0 {
		return unreadableList(rq.res, bad) // what the list would answer: nothing is deleted
	}
	items, rev, _ := rq.res.cache.List(rq.res.keyPrefix(rq.namespace), "", 0, sel.filter())
	var deleted []*watch.Item
	for _, it := range items {
		cur, err := cachedObject(it)
		if err != nil {
			return err
		}
		obj, _, err := rq.deleteOne(ctx, cur.GetObjectMeta().Name, opts, dryRun)
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return err
		}
		deleted = append(deleted, watch.NewItem(it.Key, 0, obj))
	}
	return rq.writeList(kapi.ListMeta{ResourceVersion: formatRevision(rev)}, deleted)
}

// unsafeVerb is what a caller must also be authorized for to delete an
// object that cannot be read.
const unsafeVerb = "unsafe-delete-ignore-read-errors"

// unsafeDelete removes an object that is stored but cannot be read (004
// "unsafe deletion of corrupt objects"), as kube-apiserver does: only for a
// caller authorized for unsafe-delete-ignore-read-errors too, and only when
// the object is indeed unreadable; without admission, preconditions or
// finalizers, which all need the object. Its dependents are then the
// collector's, as those of any owner that is gone.
func (rq *request) unsafeDelete(ctx context.Context, dryRun bool) error {
	res, name := rq.res, rq.name
	if authorizers := rq.s.config.auth.authorizers; len(authorizers) > 0 {
		attrs := requestinfo.Of(rq.r)
		attrs.User, _ = UserFrom(ctx)
		attrs.Verb = unsafeVerb
		d, reason, err := authorize(ctx, authorizers, attrs)
		if d != DecisionAllow {
			why := fmt.Sprintf("not permitted to do %q, reason: %s", unsafeVerb, reason)
			if err != nil {
				why = fmt.Sprintf("error while checking permission for %q, %v", unsafeVerb, err)
			}
			return res.about(NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden, fmt.Sprintf("%s %q is forbidden: %s", res.qualifiedResource(), name, why)), name)
		}
	}
	store, key := rq.s.config.store, res.key(rq.namespace, name)
	for {
		kv, err := store.Get(ctx, key, 0)
		if err != nil {
			return err
		}
		if _, err := res.decodeStored(kv); err == nil {
			return res.invalidObject(name, key, "unsafe deletion is not allowed because the object is decodable from storage")
		}
		if dryRun {
			break
		}
		if _, err := store.Delete(ctx, key, kv.ModRevision); errors.Is(err, storage.ErrConflict) {
			continue // written meanwhile: look again
		} else if err != nil {
			return err
		}
		break
	}
	st := kapi.Status{
		TypeMeta: kapi.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   kapi.StatusSuccess,
		Code:     http.StatusOK,
		Details:  &kapi.StatusDetails{Name: name, Kind: res.Kind},
	}
	writeStatus(rq.w, rq.r, rq.out.Format, st)
	return nil
}
