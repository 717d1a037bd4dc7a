package patch

import (
	"github.com/kapi-dev/kapi"
)

// Update records that opts.Manager changed old into new by an ordinary
// write (create: old is nil) and returns the new managedFields: the fields
// it changed become its own and leave every other manager. It never
// conflicts. As kube-apiserver does, it starts tracking an existing object
// only at its first apply: with no managedFields and an old object, it
// returns none. Which managedFields to pass (the live object's, or those a
// client sent) is the caller's choice, as it is kube-apiserver's. A write
// through the scale subresource (opts.Subresource "scale") records its
// entry without a time, as kube-apiserver does. The entries returned may
// share their field sets' bytes (FieldsV1.Raw) with managed's: neither
// is to be changed in place.
func (s *Schema) Update(old, new []byte, managed []kapi.ManagedFieldsEntry, opts UpdateOptions) ([]kapi.ManagedFieldsEntry, error) {
	out, err := s.updateEntries(old, new, managed, opts)
	if err == nil && opts.Subresource == "scale" {
		untimeScaleWriter(out, opts)
	}
	return out, err
}

// untimeScaleWriter clears the time of the scale writer's entry in out,
// which keeps kube-apiserver's order. kube-apiserver records a write to
// /scale by the Scale's own field manager and ScaleHandler.ToParent
// (apimachinery's managedfields/scalehandler.go) makes the object's entry
// of it with the time of the object's entry under the Scale manager's
// identity, which has apiVersion autoscaling/v1 and so is never among the
// object's: no time.
func untimeScaleWriter(out []kapi.ManagedFieldsEntry, opts UpdateOptions) {
	manager := opts.Manager
	if manager == "" {
		manager = "unknown"
	}
	for i, e := range out {
		if e.Manager == manager && e.Operation == OperationUpdate && e.APIVersion == opts.APIVersion && e.Subresource == opts.Subresource {
			out[i].Time = nil
			sortEntries(out)
			return
		}
	}
}

func (s *Schema) updateEntries(old, new []byte, managed []kapi.ManagedFieldsEntry, opts UpdateOptions) ([]kapi.ManagedFieldsEntry, error) {
	if opts.APIVersion == "" {
		return nil, errNoAPIVersion
	}
	if out, ok := s.updateStored(old, new, managed, opts); ok {
		return out, nil
	}
	if old == nil && !hasManagers(managed) {
		return s.updateCreated(new, opts)
	}
	newObj, err := s.liveObject(new)
	if err != nil {
		return nil, err
	}
	oldObj := map[string]any{}
	if old != nil {
		if oldObj, err = s.liveObject(old); err != nil {
			return nil, err
		}
	}
	ms, err := decodeManagers(managed)
	if err != nil {
		ms = managerSet{} // as kube-apiserver: unreadable managedFields start over
	}
	if len(ms) == 0 && old != nil {
		return nil, nil
	}
	if opts.Now.IsZero() {
		opts.Now = kapi.Now()
	}
	s.update(oldObj, newObj, ms, opts)
	return ms.encode(), nil
}

// updateStored is Update of an object that has managers, its versions
// compared as written (compareStored); ok false when it cannot tell, and
// Update decodes them.
func (s *Schema) updateStored(old, new []byte, managed []kapi.ManagedFieldsEntry, opts UpdateOptions) ([]kapi.ManagedFieldsEntry, bool) {
	if len(old) == 0 || len(managed) == 0 {
		return nil, false
	}
	if opts.Convert != nil {
		for _, e := range managed {
			if e.APIVersion != opts.APIVersion {
				return nil, false // compared in its version, which needs the objects
			}
		}
	}
	c, ok := compareTyped(opts.Old, opts.New, s)
	if !ok {
		c, ok = compareStored(old, new, s)
	}
	if !ok {
		return nil, false
	}
	if opts.Now.IsZero() {
		opts.Now = kapi.Now()
	}
	if out, ok := updateKept(&c, managed, opts); ok {
		return out, true
	}
	ms, err := decodeManagers(managed)
	if err != nil || len(ms) == 0 {
		return nil, false
	}
	s.record(&c, nil, nil, ms, opts)
	return ms.encode(), true
}

// hasManagers says whether managed has entries that can be read.
func hasManagers(managed []kapi.ManagedFieldsEntry) bool {
	if len(managed) == 0 {
		return false
	}
	ms, err := decodeManagers(managed)
	return err == nil && len(ms) > 0
}

// updateCreated is Update of a create with no managers (the usual one):
// its entry is written straight from the object (createdFields).
func (s *Schema) updateCreated(new []byte, opts UpdateOptions) ([]kapi.ManagedFieldsEntry, error) {
	raw, ok := s.createdStored(new, opts.Ignore)
	if !ok {
		newObj, err := s.liveObject(new)
		if err != nil {
			return nil, err
		}
		raw = s.createdFields(newObj, opts.Ignore)
	}
	if raw == nil {
		return nil, nil
	}
	if opts.Manager == "" {
		opts.Manager = "unknown"
	}
	if opts.Now.IsZero() {
		opts.Now = kapi.Now()
	}
	// The entry, its time and its fields in one allocation, where they
	// were three.
	b := &struct {
		entry  [1]kapi.ManagedFieldsEntry
		t      kapi.Time
		fields kapi.FieldsV1
	}{t: opts.Now, fields: kapi.FieldsV1{Raw: raw}}
	b.entry[0] = kapi.ManagedFieldsEntry{
		Manager: opts.Manager, Operation: OperationUpdate, APIVersion: opts.APIVersion, Time: &b.t,
		FieldsType: "FieldsV1", FieldsV1: &b.fields, Subresource: opts.Subresource,
	}
	return b.entry[:], nil
}
