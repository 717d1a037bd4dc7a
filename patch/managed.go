package patch

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
)

// The operations of a managedFields entry.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// MaxManagerLength is kube-apiserver's limit on a manager's name, in bytes.
const MaxManagerLength = 128

// UserAgentManager is the manager kube-apiserver records a write without a
// fieldManager for: its User-Agent up to the first "/", without the
// characters that are not printable, cut to MaxManagerLength bytes.
func UserAgentManager(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	name = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, name)
	if len(name) > MaxManagerLength { // at a character's start, as kube-apiserver cuts it
		i := MaxManagerLength
		for i > 0 && !utf8.RuneStart(name[i]) {
			i--
		}
		name = name[:i]
	}
	return name
}

// maxUpdateManagers is how many Update entries kube-apiserver keeps; older
// ones are folded into "ancient-changes".
const maxUpdateManagers = 10

// fieldManager is one managedFields entry, decoded.
type fieldManager struct {
	name, operation, subresource string
	apiVersion                   string // of the last write; part of the identity only for Update
	set                          fieldSet
	time                         *kapi.Time
	stamp                        kapi.Time // what time points to when the write stamps the entry: no allocation of its own
	// parsed is the entry's FieldsV1 as read, while set is still it.
	parsed *parsedSet
	// raw is the FieldsV1 the entry was read with (nil if none), which
	// encode writes back, shared, when it is parsed's encoding: a copy of
	// parsedSets' bytes is made only for a set written otherwise.
	raw []byte
}

// id identifies a manager as Kubernetes does: the JSON of its entry without
// time and fields, and without apiVersion for Apply. Conflict messages are
// grouped and sorted by it.
func (m *fieldManager) id() string {
	apiVersion := m.apiVersion
	if m.operation == OperationApply {
		apiVersion = ""
	}
	k := managerKey{m.name, m.operation, apiVersion, m.subresource}
	// Every write names each of its object's managers, the same few: a
	// slot keeps the id of the key that hashed there last.
	slot := &managerIDs[managerSlot(&k)]
	if e := slot.Load(); e != nil && e.key == k {
		return e.id
	}
	id := k.id()
	slot.Store(&managerID{key: k, id: id})
	return id
}

// managerSlot is the slot of managerIDs that keeps k's id.
func managerSlot(k *managerKey) uint32 { return k.hash() >> (32 - slotBits) }

// managerKey is what identifies a manager.
type managerKey struct{ name, operation, apiVersion, subresource string }

// managerIDs are the ids made lately, by their keys' hash.
var managerIDs [1 << slotBits]atomic.Pointer[managerID]

// slotBits is how many of a hash's bits pick a slot of managerIDs or
// recentParsed: its top bits, which every byte hashed moves (FNV's
// multiply carries a byte's bits up only, so its low bits are the low
// bits of the bytes: "controller-1" and "controller-q" shared a slot).
const slotBits = 6

type managerID struct {
	key managerKey
	id  string
}

// hash is FNV-1a of k's strings, each ended by a byte no string of an
// entry holds where it matters (a key that hashes alike is compared).
func (k *managerKey) hash() uint32 {
	h := uint32(2166136261)
	for _, s := range [...]string{k.name, k.operation, k.apiVersion, k.subresource} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * 16777619
		}
		h = (h ^ 0xff) * 16777619
	}
	return h
}

// id is the key's JSON: json.Marshal of the entry, without its
// reflection: fields in the order of kapi.ManagedFieldsEntry, empty ones
// left out.
func (k *managerKey) id() string {
	var arr [128]byte
	b := append(arr[:0], '{')
	for _, f := range [...]struct{ name, value string }{
		{"manager", k.name}, {"operation", k.operation}, {"apiVersion", k.apiVersion}, {"subresource", k.subresource},
	} {
		if f.value == "" {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		b = appendJSONString(b, f.value)
	}
	return string(append(b, '}'))
}

// describe is how a conflict message names the manager.
func describeManager(name, operation, apiVersion, subresource string) string {
	s := fmt.Sprintf("%q", name)
	if subresource != "" {
		s += fmt.Sprintf(" with subresource %q", subresource)
	}
	if operation == OperationUpdate {
		s += " using " + apiVersion
	}
	return s
}

// managerSet is an object's managers by id.
type managerSet map[string]*fieldManager

func decodeManagers(entries []kapi.ManagedFieldsEntry) (managerSet, error) {
	out := make(managerSet, len(entries))
	all := make([]fieldManager, len(entries)) // one allocation for them all
	for i, e := range entries {
		if e.Operation != OperationApply && e.Operation != OperationUpdate {
			return nil, fmt.Errorf("managedFields[%d]: operation must be `Apply` or `Update`", i)
		}
		if e.APIVersion == "" {
			return nil, fmt.Errorf("managedFields[%d]: apiVersion must not be empty", i)
		}
		if e.FieldsType != "FieldsV1" {
			return nil, fmt.Errorf("managedFields[%d]: invalid fieldsType %q", i, e.FieldsType)
		}
		var set fieldSet
		var parsed *parsedSet
		if e.FieldsV1 != nil && e.FieldsV1.Raw != nil {
			var err error
			if parsed, err = parseFieldSetCached(e.FieldsV1.Raw); err != nil {
				return nil, fmt.Errorf("managedFields[%d]: %v", i, err)
			}
			set = parsed.set
		} else {
			set = fieldSet{}
		}
		// time is e's: a manager's time is replaced, never changed in
		// place, and encode writes a copy.
		m := &all[i]
		*m = fieldManager{name: e.Manager, operation: e.Operation, subresource: e.Subresource, apiVersion: e.APIVersion, set: set, parsed: parsed, time: e.Time}
		if parsed != nil {
			m.raw = e.FieldsV1.Raw
		}
		out[m.id()] = m
	}
	return out, nil
}

// encode writes the entries in kube-apiserver's order: Apply before Update,
// then oldest first, then by manager, apiVersion and subresource.
func (ms managerSet) encode() []kapi.ManagedFieldsEntry {
	if len(ms) == 0 {
		return nil
	}
	out := make([]kapi.ManagedFieldsEntry, 0, len(ms))
	// The entries' fields and times, in one allocation where they were two
	// per entry.
	parts := make([]struct {
		fields kapi.FieldsV1
		t      kapi.Time
	}, len(ms))
	for _, m := range ms {
		var raw []byte
		if m.parsed != nil && sameSet(m.set, m.parsed.set) {
			// The set as read, shared with the entry it was read from;
			// else a copy of the cache's, which a FieldsV1 decoded into
			// again would change.
			if raw = m.raw; !bytes.Equal(raw, m.parsed.encoded) {
				raw = bytes.Clone(m.parsed.encoded)
			}
		} else {
			raw, _ = m.set.MarshalJSON()
		}
		p := &parts[len(out)]
		p.fields.Raw = raw
		e := kapi.ManagedFieldsEntry{
			Manager: m.name, Operation: m.operation, APIVersion: m.apiVersion,
			FieldsType: "FieldsV1", FieldsV1: &p.fields, Subresource: m.subresource,
		}
		if m.time != nil {
			p.t = *m.time
			e.Time = &p.t
		}
		out = append(out, e)
	}
	sortEntries(out)
	return out
}

// sortEntries puts entries in kube-apiserver's order (see encode).
func sortEntries(out []kapi.ManagedFieldsEntry) {
	slices.SortFunc(out, compareEntries) // no two entries compare equal: their ids differ
}

func compareEntries(p, q kapi.ManagedFieldsEntry) int {
	if c := strings.Compare(p.Operation, q.Operation); c != 0 {
		return c
	}
	if c := cmp.Compare(unixSeconds(p.Time), unixSeconds(q.Time)); c != 0 {
		return c
	}
	if c := strings.Compare(p.Manager, q.Manager); c != 0 {
		return c
	}
	if c := strings.Compare(p.APIVersion, q.APIVersion); c != 0 {
		return c
	}
	return strings.Compare(p.Subresource, q.Subresource)
}

func unixSeconds(t *kapi.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.Unix()
}

// dropEmpty removes managers that own nothing.
func (ms managerSet) dropEmpty() {
	for id, m := range ms {
		if len(m.set) == 0 {
			delete(ms, id)
		}
	}
}

// capUpdaters folds the oldest Update managers into one "ancient-changes"
// entry per apiVersion while there are more than kube-apiserver keeps.
func (ms managerSet) capUpdaters() {
	var updaters []string
	for id, m := range ms {
		if m.operation == OperationUpdate {
			updaters = append(updaters, id)
		}
	}
	if len(updaters) <= maxUpdateManagers {
		return
	}
	sort.Slice(updaters, func(i, j int) bool {
		a, b := unixSeconds(ms[updaters[i]].time), unixSeconds(ms[updaters[j]].time)
		if a != b {
			return a < b
		}
		return updaters[i] < updaters[j]
	})
	first := map[string]string{}
	length := len(updaters)
	for i := 0; i < len(updaters) && length > maxUpdateManagers; i++ {
		id := updaters[i]
		m := ms[id]
		bucket := &fieldManager{name: "ancient-changes", operation: OperationUpdate, apiVersion: m.apiVersion}
		bid := bucket.id()
		f, ok := first[m.apiVersion]
		if !ok {
			first[m.apiVersion] = id
			continue
		}
		if _, ok := ms[bid]; !ok {
			bucket.set = ms[f].set
			delete(ms, f)
			ms[bid] = bucket
		}
		ms[bid].set = m.set.union(ms[bid].set)
		ms[bid].time = m.time
		delete(ms, id)
		length--
	}
}

// Conflict is one field another manager owns with a different value than
// the one being applied.
type Conflict struct {
	Manager     string // the owner's fieldManager
	Operation   string // how it set the field: OperationApply or OperationUpdate
	APIVersion  string // the apiVersion of its write (named in the message for Update)
	Subresource string // "" or the subresource it wrote through
	Field       string // the path, as .spec.ports[name="http"].port
}

// Message is the conflict as a StatusCause message: conflict with "mgr"
// using example.com/v1.
func (c Conflict) Message() string {
	return "conflict with " + describeManager(c.Manager, c.Operation, c.APIVersion, c.Subresource)
}

// ConflictError is an Apply refused because of conflicts (409 Conflict at
// the HTTP layer, reason Conflict). Conflicts are grouped by manager, in
// kube-apiserver's order.
type ConflictError struct {
	Conflicts []Conflict
}

// Error is kube-apiserver's message for the conflicts.
func (e *ConflictError) Error() string {
	if len(e.Conflicts) == 1 {
		c := e.Conflicts[0]
		return fmt.Sprintf("Apply failed with 1 conflict: %s: %s", c.Message(), c.Field)
	}
	var lines []string
	for i, c := range e.Conflicts {
		if i == 0 || !sameManager(c, e.Conflicts[i-1]) {
			lines = append(lines, "conflicts with "+describeManager(c.Manager, c.Operation, c.APIVersion, c.Subresource)+":")
		}
		lines = append(lines, "- "+c.Field)
	}
	return fmt.Sprintf("Apply failed with %d conflicts: %s", len(e.Conflicts), strings.Join(lines, "\n"))
}

func sameManager(a, b Conflict) bool {
	return a.Manager == b.Manager && a.Operation == b.Operation && a.Subresource == b.Subresource &&
		(a.Operation == OperationApply || a.APIVersion == b.APIVersion)
}

// Causes are the details.causes of kube-apiserver's 409: one per conflict,
// type FieldManagerConflict.
func (e *ConflictError) Causes() []kapi.StatusCause {
	out := make([]kapi.StatusCause, len(e.Conflicts))
	for i, c := range e.Conflicts {
		out[i] = kapi.StatusCause{Type: kapi.CauseTypeFieldManagerConflict, Message: c.Message(), Field: c.Field}
	}
	return out
}

// conflictError lists the conflicts per manager, managers sorted by id.
func conflictError(conflicts map[string]fieldSet, ms managerSet) *ConflictError {
	ids := make([]string, 0, len(conflicts))
	for id := range conflicts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	e := &ConflictError{}
	for _, id := range ids {
		m := ms[id]
		for _, p := range conflicts[id].paths() {
			e.Conflicts = append(e.Conflicts, Conflict{
				Manager: m.name, Operation: m.operation, APIVersion: m.apiVersion, Subresource: m.subresource, Field: p.String(),
			})
		}
	}
	return e
}
