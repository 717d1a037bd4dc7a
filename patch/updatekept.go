package patch

import (
	"bytes"

	"github.com/kapi-dev/kapi"
)

// updateKept is record's usual write, made without a managerSet: the
// writer's Update entry owns every field the write changed already
// (ownsAlready) and no other entry owns one it changed or removed, so that
// every entry stays as it was read but for the writer's time. A client
// writing its own object again does no more than that, and reading the
// entries into a managerSet, recording and encoding them again was a
// third of recording its write. ok false for anything else (an entry
// record would change, drop or fold, or that decodeManagers refuses or
// reads twice): the caller records it. The result is record's, entry for
// entry (TestUpdateKeptIsRecord).
func updateKept(c *comparison, managed []kapi.ManagedFieldsEntry, opts UpdateOptions) ([]kapi.ManagedFieldsEntry, bool) {
	if opts.Manager == "" {
		opts.Manager = "unknown"
	}
	c.filter(ignoreFilter(opts.Ignore)) // as record filters it (again: the same)
	changed := c.added.union(c.modified)
	writer, updaters := -1, 0
	var buf [maxUpdateManagers + 2]*parsedSet
	sets := buf[:0]
	for i, e := range managed {
		if e.Operation != OperationApply && e.Operation != OperationUpdate || e.APIVersion == "" ||
			e.FieldsType != "FieldsV1" || e.FieldsV1 == nil || e.FieldsV1.Raw == nil {
			return nil, false
		}
		for _, o := range managed[:i] {
			if sameManagerEntry(e, o) {
				return nil, false // decodeManagers keeps the last
			}
		}
		p, err := parseFieldSetCached(e.FieldsV1.Raw)
		if err != nil || len(p.set) == 0 {
			return nil, false
		}
		sets = append(sets, p)
		if e.Operation == OperationUpdate {
			updaters++
		}
		if e.Operation == OperationUpdate && e.Manager == opts.Manager && e.APIVersion == opts.APIVersion && e.Subresource == opts.Subresource {
			writer = i
		} else if p.set.meets(changed) || p.set.meets(c.removed) {
			return nil, false // it loses fields
		}
	}
	if writer < 0 || updaters > maxUpdateManagers || !ownsAlready(sets[writer].set, changed, c.removed) {
		return nil, false
	}
	out := newEntries(len(managed))
	for i, e := range managed {
		// The set as read, shared with managed (not with the cache of
		// parsed sets, which a FieldsV1 decoded into would change).
		raw := e.FieldsV1.Raw
		if !bytes.Equal(raw, sets[i].encoded) {
			raw = bytes.Clone(sets[i].encoded)
		}
		out.fields[i].Raw = raw
		out.entries[i] = kapi.ManagedFieldsEntry{
			Manager: e.Manager, Operation: e.Operation, APIVersion: e.APIVersion, FieldsType: "FieldsV1",
			FieldsV1: &out.fields[i], Subresource: e.Subresource,
		}
		if i == writer {
			out.times[i] = opts.Now
		} else if e.Time != nil {
			out.times[i] = *e.Time
		}
		if i == writer || e.Time != nil {
			out.entries[i].Time = &out.times[i]
		}
	}
	sortEntries(out.entries)
	return out.entries, true
}

// entryBlock is n entries with their field sets and times. An entry's
// FieldsV1 and Time were an allocation each, two thirds of updateKept's;
// most objects have one or two managers, whose block is one allocation of
// their size (a larger one would cost the collector more bytes than it
// saves it allocations), and more take three. The entries point into it;
// nothing changes it once they are returned.
type entryBlock struct {
	entries []kapi.ManagedFieldsEntry
	fields  []kapi.FieldsV1
	times   []kapi.Time
}

func newEntries(n int) entryBlock {
	switch n {
	case 1:
		b := new(struct {
			entries [1]kapi.ManagedFieldsEntry
			fields  [1]kapi.FieldsV1
			times   [1]kapi.Time
		})
		return entryBlock{b.entries[:], b.fields[:], b.times[:]}
	case 2:
		b := new(struct {
			entries [2]kapi.ManagedFieldsEntry
			fields  [2]kapi.FieldsV1
			times   [2]kapi.Time
		})
		return entryBlock{b.entries[:], b.fields[:], b.times[:]}
	}
	return entryBlock{make([]kapi.ManagedFieldsEntry, n), make([]kapi.FieldsV1, n), make([]kapi.Time, n)}
}

// sameManagerEntry says whether two entries are one manager's (have one
// id: for Apply, apiVersion aside).
func sameManagerEntry(a, b kapi.ManagedFieldsEntry) bool {
	return a.Manager == b.Manager && a.Operation == b.Operation && a.Subresource == b.Subresource &&
		(a.Operation == OperationApply || a.APIVersion == b.APIVersion)
}
