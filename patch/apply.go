package patch

import (
	"errors"
	"fmt"
	"maps"

	"github.com/kapi-dev/kapi"
)

// ApplyOptions say who applies, and how.
type ApplyOptions struct {
	Manager     string    // the fieldManager; required
	APIVersion  string    // "example.com/v1": recorded in the entry
	Subresource string    // "" or "status"
	Force       bool      // take ownership of conflicting fields
	Now         kapi.Time // the entry's time; zero means now
	// Ignore are top-level fields neither merged nor owned here, as
	// kube-apiserver resets them: "status" on the main resource, "spec"
	// (and more) on /status.
	Ignore []string
	// Convert, if set, serves managers whose entries were recorded in
	// another version than APIVersion (see Converter).
	Convert Converter
	// Live, if set, is the live object as a Go value, a pointer to a
	// struct whose JSON is the live object's: ApplyMerged reads the
	// object from it rather than from its JSON where it can tell what
	// reading the JSON gives (see typedTree), and from its json.Marshal
	// elsewhere: ApplyMerged's live is then not read, and may be nil.
	Live any
}

// Converter returns obj, the JSON of an object in the write's version, in
// another version of its kind, with that version's schema. A manager
// records its fields in the version it wrote; as structured-merge-diff
// does, a write in another version is compared with them in their version:
// the object before and after the write are both converted, and the fields
// that changed there are the manager's conflicts (apply) or leave its set.
type Converter func(obj []byte, apiVersion string) ([]byte, *Schema, error)

// UpdateOptions say who wrote, and how.
type UpdateOptions struct {
	Manager     string // the fieldManager; "" is recorded as "unknown"
	APIVersion  string
	Subresource string
	Now         kapi.Time
	Ignore      []string
	Convert     Converter // as ApplyOptions.Convert
	// Old and New, if both set, are the objects (pointers to structs of
	// one type) whose JSON old and new are, but for the resourceVersion,
	// which neither document holds (a stored value's JSON): Update then
	// compares them as Go values, reading only the members that differ.
	// A caller that cannot vouch for that (a stored value not written
	// from its object, say) leaves them nil.
	Old, New any
}

var errNoAPIVersion = errors.New("patch: the options' APIVersion is required")

// beforeFirstApply owns what an object had before its first apply, so the
// apply does not take it over silently.
const beforeFirstApply = "before-first-apply"

// serverOwned are the fields kube-apiserver never records as owned: the
// object's identity and what the server writes. metadata itself is listed
// because an empty metadata object is a member of a set.
var serverOwned = func() fieldSet {
	s := fieldSet{}
	s.insert(fieldPath{fieldElement("apiVersion")})
	s.insert(fieldPath{fieldElement("kind")})
	s.insert(fieldPath{fieldElement("metadata")})
	for _, f := range []string{"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"} {
		s.insert(fieldPath{fieldElement("metadata"), fieldElement(f)})
	}
	return s
}()

// Apply merges config, an apply configuration (a partial object in JSON),
// into live (the current object's JSON; nil or {} when it does not exist)
// as opts.Manager, and returns the object and its new managedFields.
//
// Fields in the configuration that another manager set to a different
// value are conflicts: a *ConflictError unless opts.Force, which takes them
// over. Fields the manager applied before and leaves out now are removed
// unless another manager owns them. metadata.managedFields in live and
// config is ignored, and never in the result. A config that is not an
// object of the schema's shape is ErrMalformed; a live object or
// managedFields that cannot be read is ErrNotApplicable.
func (s *Schema) Apply(live, config []byte, managed []kapi.ManagedFieldsEntry, opts ApplyOptions) ([]byte, []kapi.ManagedFieldsEntry, error) {
	c, err := ParseConfiguration(config)
	if err != nil {
		return nil, nil, err
	}
	m, entries, err := s.ApplyMerged(live, c, managed, opts)
	if err != nil {
		return nil, nil, err
	}
	out, err := m.JSON()
	if err != nil {
		return nil, nil, err
	}
	return out, entries, nil
}

// ApplyMerged is Apply of a configuration read (ParseConfiguration), with
// the object as a Merged: a server that holds the live object and the
// configuration decoded has the result as a Go value from them
// (Merged.Decode), without writing its JSON and decoding that again.
// The entries returned may share their field sets' bytes (FieldsV1.Raw)
// with managed's, as Update's do: neither is to be changed in place.
func (s *Schema) ApplyMerged(live []byte, config *Configuration, managed []kapi.ManagedFieldsEntry, opts ApplyOptions) (*Merged, []kapi.ManagedFieldsEntry, error) {
	if opts.Manager == "" {
		return nil, nil, fmt.Errorf("%w: fieldManager is required for apply", ErrMalformed)
	}
	if opts.APIVersion == "" {
		return nil, nil, errNoAPIVersion // the caller's bug: entries without one cannot be read back
	}
	cfg := config.tree
	// A shape applied lately is valid, and its set is kept.
	applied := shapeApplied(s, opts.Ignore, config.shape)
	if applied == nil {
		if err := validate(cfg, s, make(fieldPath, 0, pathDepth), false); err != nil {
			return nil, nil, fmt.Errorf("%w: apply configuration: %v", ErrMalformed, err)
		}
	}
	tl := s.typedLiveOf(opts.Live) // nil: the whole tree
	var liveObj map[string]any
	wholeTree := func() error {
		tl = nil
		var err error
		liveObj, err = s.liveTree(live, opts.Live)
		return err
	}
	if tl == nil {
		if err := wholeTree(); err != nil {
			return nil, nil, err
		}
	}
	ms, err := decodeManagers(managed)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotApplicable, err)
	}
	if tl != nil && (len(ms) == 0 || ms.otherVersions(opts)) {
		if err := wholeTree(); err != nil {
			return nil, nil, err
		}
	}
	now := opts.Now
	if now.IsZero() {
		now = kapi.Now()
	}
	ignore := ignoreFilter(opts.Ignore)
	// kube-apiserver merges the ignored fields and resets them afterwards:
	// they are not applied, but a change to them still stamps the entry.
	touchesIgnored := false
	for _, f := range opts.Ignore {
		if cv, ok := cfg[f]; ok {
			var lv any
			var lok bool
			if tl != nil {
				var known bool
				if lv, lok, known = tl.member(f); !known {
					if err := wholeTree(); err != nil {
						return nil, nil, err
					}
				}
			}
			if tl == nil {
				lv, lok = liveObj[f]
			}
			if mv, _ := merge(lv, lok, cv, true, s.Field(f)); !lok || !equalValues(lv, mv) {
				touchesIgnored = true
			}
		}
	}
	if len(ms) == 0 {
		s.update(map[string]any{}, liveObj, ms, UpdateOptions{
			Manager: beforeFirstApply, APIVersion: opts.APIVersion, Subresource: opts.Subresource, Now: now, Ignore: opts.Ignore,
		})
	}

	applier := &fieldManager{name: opts.Manager, operation: OperationApply, subresource: opts.Subresource, apiVersion: opts.APIVersion}
	id := applier.id()
	var lastSet fieldSet
	if prev := ms[id]; prev != nil {
		// raw: the entry's bytes, written back when the set applied now
		// is the one applied before (the usual re-apply).
		lastSet, applier.time, applier.raw = prev.set, prev.time, prev.raw
	}
	// cfg's set is the same with the ignored members as without: they
	// are filtered out of it, and the key names them.
	if applied == nil {
		applied = appliedSetOf(cfg, s, ignore, opts.Ignore, config.shape)
	}
	applier.set = applied.set
	ms[id] = applier
	// Only what the applier applied before and no longer applies can go;
	// re-applying the same fields (the usual apply) removes nothing, and
	// pruning would walk the object six times for it.
	prune := !sameSet(lastSet, applied.final.set) && !lastSet.subsetOf(applier.set)
	var c comparison
	var typed *typedResult
	if tl != nil && !prune {
		if typed, c = tl.apply(s, cfg, opts.Ignore); typed == nil {
			tl = nil
		}
	}
	var result any
	if typed == nil {
		// Without them (the typed walk passes over them, with no copy
		// of cfg); config is never changed.
		cfg = without(cfg, opts.Ignore)
		if liveObj == nil {
			if err := wholeTree(); err != nil {
				return nil, nil, err
			}
		}
		merged, _ := merge(liveObj, true, cfg, true, s)
		result = merged
		if prune {
			result = s.prune(merged, ms, lastSet)
		}
		if len(ms) > 1 {
			// What the apply changes matters only where another manager
			// may own it: a manager alone (a controller's re-apply,
			// kubectl apply after the first) compares nothing.
			c = compareObjects(liveObj, result, s)
		}
	}

	var versions versionedComparisons
	if len(ms) > 1 {
		c.filter(ignore)
		versions = versionedComparisons{own: opts.APIVersion, c: &c}
	}
	conflicts := map[string]fieldSet{}
	for mid, m := range ms {
		if mid == id {
			continue
		}
		cm := versions.of(m.apiVersion, liveObj, result, opts.Convert, ignore)
		if cm == nil {
			delete(ms, mid)
			continue
		}
		if own := m.set.intersect(cm.added.union(cm.modified)); len(own) > 0 {
			conflicts[mid] = own
		}
	}
	if len(conflicts) > 0 && !opts.Force {
		return nil, nil, conflictError(conflicts, ms)
	}
	for mid, m := range ms {
		if mid != id {
			cm := versions.of(m.apiVersion, liveObj, result, opts.Convert, ignore) // made above
			m.set = m.set.minus(conflicts[mid]).minus(cm.removed)
		}
	}
	applier.set, applier.parsed = applied.final.set, applied.final // applier.set less serverOwned
	ms.dropEmpty()

	var unchanged bool
	if typed != nil {
		unchanged = typed.unchanged
	} else {
		unchanged = equalValues(liveObj, result)
	}
	if touchesIgnored || !unchanged {
		applier.stamp = now
		applier.time = &applier.stamp
	}
	if typed != nil {
		m := &tl.merged // made with tl: one allocation
		*m = Merged{typed: typed, config: cfg}
		return m, ms.encode(), nil
	}
	if unchanged {
		result = liveObj
	}
	return &Merged{obj: result, live: liveObj, config: cfg}, ms.encode(), nil
}

// update moves the fields that changed from old to new to the manager's
// Update entry.
func (s *Schema) update(oldObj, newObj map[string]any, ms managerSet, opts UpdateOptions) {
	c := compareObjects(oldObj, newObj, s)
	s.record(&c, oldObj, newObj, ms, opts)
}

// record is update with the comparison made: the objects are needed only
// to compare them in the versions of managers that wrote in another.
func (s *Schema) record(c *comparison, oldObj, newObj any, ms managerSet, opts UpdateOptions) {
	if opts.Manager == "" {
		opts.Manager = "unknown"
	}
	ignore := ignoreFilter(opts.Ignore)
	c.filter(ignore)
	changed := c.added.union(c.modified)
	own := changed.minus(serverOwned)
	writer := &fieldManager{name: opts.Manager, operation: OperationUpdate, subresource: opts.Subresource, apiVersion: opts.APIVersion}
	wid := writer.id()
	// The usual write: its manager writes again fields it owns already,
	// and its set stays as it was read (written back so), without the two
	// copies of it that taking the changes out and putting them back make.
	prev := ms[wid]
	kept := prev != nil && ownsAlready(prev.set, changed, c.removed)
	versions := versionedComparisons{own: opts.APIVersion, c: c}
	for id, m := range ms {
		if kept && id == wid {
			continue // its version is the write's: cm is c
		}
		cm := versions.of(m.apiVersion, oldObj, newObj, opts.Convert, ignore)
		if cm == nil {
			m.set = fieldSet{} // dropped below
			continue
		}
		m.set = m.set.minus(cm.added.union(cm.modified)).minus(cm.removed)
	}
	ms.dropEmpty()
	if len(own) > 0 {
		t := opts.Now
		if kept {
			prev.time = &t
		} else {
			if prev = ms[wid]; prev != nil {
				own = own.union(prev.set)
				if prev.parsed != nil && own.equal(prev.parsed.set) {
					// What it owned before, written back as it was read.
					own, writer.parsed, writer.raw = prev.parsed.set, prev.parsed, prev.raw
				}
			}
			writer.set, writer.time = own, &t
			ms[wid] = writer
		}
	}
	ms.capUpdaters()
}

// ownsAlready says whether a write that changed and removed these paths
// leaves its manager's set, set, as it was: it owned every path it changed
// but the server's (which it never owns), and no path it removed.
func ownsAlready(set, changed, removed fieldSet) bool {
	if len(set) == 0 {
		return false
	}
	some := false // own is not empty: the entry is stamped
	for k := range changed {
		_, server := serverOwned[k]
		_, has := set[k]
		if server == has {
			return false
		}
		some = some || !server
	}
	if !some {
		return false
	}
	for k := range removed {
		if _, has := set[k]; has {
			return false
		}
	}
	return true
}

// prune removes from the merged object what the applier owned before and
// no longer applies, unless another manager owns it: structured-merge-diff's
// three steps, so that what survives matches kube-apiserver's.
func (s *Schema) prune(merged any, ms managerSet, lastSet fieldSet) any {
	if len(lastSet) == 0 {
		return merged
	}
	last := withNamedFields(lastSet, s)
	p0 := s.removeAll(merged, last)
	all := fieldSet{}
	for _, m := range ms {
		all = all.union(m.set)
	}
	// Server-owned metadata is nobody's to remove, even from a
	// configuration that leaves metadata out.
	all = all.union(serverOwned)
	mergedSet := s.namedSet(merged)
	p1 := s.removeAll(merged, mergedSet.minus(s.namedSet(p0).union(withNamedFields(all, s))))
	return s.removeAll(merged, mergedSet.minus(s.namedSet(p1)).intersect(last))
}

func (s *Schema) removeAll(v any, rm fieldSet) any {
	out := removeItems(v, s, nil, rm, rm.prefixes())
	if out == nil {
		return map[string]any{}
	}
	return out
}

func (s *Schema) namedSet(v any) fieldSet {
	set := fieldSet{}
	toSet(v, s, nil, set)
	return withNamedFields(set, s)
}

func (c *comparison) filter(keep func(fieldPath) bool) {
	c.added, c.modified, c.removed = c.added.filter(keep), c.modified.filter(keep), c.removed.filter(keep)
}

// ignoreFilter keeps the paths outside the ignored top-level fields.
func ignoreFilter(ignore []string) func(fieldPath) bool {
	return func(p fieldPath) bool {
		for _, f := range ignore {
			if p[0].kind == 'f' && p[0].field == f {
				return false
			}
		}
		return true
	}
}

// liveObject reads a stored object: {} when there is none.
func (s *Schema) liveObject(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return map[string]any{}, nil
	}
	m, err := decodeUnmanaged(b)
	if err != nil {
		return nil, fmt.Errorf("%w: object: %v", ErrNotApplicable, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: object is not a JSON object", ErrNotApplicable)
	}
	if err := validate(m, s, make(fieldPath, 0, pathDepth), true); err != nil {
		return nil, fmt.Errorf("%w: object: %v", ErrNotApplicable, err)
	}
	return m, nil
}

// versionedComparisons are the comparisons of one write's before and
// after: in the write's own version, and in the others asked for.
type versionedComparisons struct {
	own       string
	c         *comparison            // in own
	byVersion map[string]*comparison // the others', made when one is asked for; ownComparison: c
}

// ownComparison in byVersion stands for the write's own comparison, which
// is not kept there so that it may stay on its caller's stack.
var ownComparison = new(comparison)

// of compares before and after in apiVersion, converted there unless they
// are in it already. It is nil for a version the converter does not know
// (ErrUnknownVersion): the manager's entry goes. Without a converter, or
// when a conversion fails otherwise, the comparison is the write's own:
// the manager's paths are taken as they are, where structured-merge-diff
// would fail the write (ownership is advisory; the write is not).
func (vc *versionedComparisons) of(apiVersion string, before, after any, convert Converter, keep func(fieldPath) bool) *comparison {
	if apiVersion == vc.own {
		return vc.c
	}
	if c, ok := vc.byVersion[apiVersion]; ok {
		if c == ownComparison {
			return vc.c
		}
		return c
	}
	c := ownComparison
	if convert != nil {
		b, schema, err := convertObject(before, apiVersion, convert)
		if err == nil {
			var a any
			if a, _, err = convertObject(after, apiVersion, convert); err == nil {
				cv := compareObjects(b, a, schema)
				cv.filter(keep)
				c = &cv
			}
		}
		if errors.Is(err, ErrUnknownVersion) {
			c = nil
		}
	}
	if vc.byVersion == nil {
		vc.byVersion = map[string]*comparison{}
	}
	vc.byVersion[apiVersion] = c
	if c == ownComparison {
		return vc.c
	}
	return c
}

// without is cfg without the members names names, a copy if it has one.
func without(cfg map[string]any, names []string) map[string]any {
	out := cfg
	for _, f := range names {
		if _, ok := out[f]; ok {
			if sameMap(out, cfg) {
				out = maps.Clone(cfg)
			}
			delete(out, f)
		}
	}
	return out
}

func convertObject(obj any, apiVersion string, convert Converter) (map[string]any, *Schema, error) {
	data, err := encodeJSON(obj)
	if err != nil {
		return nil, nil, err
	}
	data, schema, err := convert(data, apiVersion)
	if err != nil {
		return nil, nil, err
	}
	m, err := schema.liveObject(data)
	return m, schema, err
}
