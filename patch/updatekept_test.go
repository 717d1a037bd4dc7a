package patch

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// TestUpdateKeptIsRecord holds updateKept to record, entry for entry, on
// random writes to random objects whose entries are the writer's own (as
// it created them), another updater's, an applier's, entries it cannot
// take (empty, unreadable, written twice) and the writer's in another
// version.
func TestUpdateKeptIsRecord(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2e9, 0)), Ignore: []string{"status"}}
	then := kapi.NewTime(time.Unix(1e9, 0))
	entry := func(manager, operation, apiVersion, raw string) kapi.ManagedFieldsEntry {
		e := kapi.ManagedFieldsEntry{Manager: manager, Operation: operation, APIVersion: apiVersion, FieldsType: "FieldsV1", Time: &then}
		if raw != "" {
			e.FieldsV1 = &kapi.FieldsV1{Raw: []byte(raw)}
		}
		return e
	}
	others := []kapi.ManagedFieldsEntry{
		entry("a", OperationUpdate, "example.com/v1", `{"f:spec":{"f:color":{},"f:tags":{}}}`),
		entry("a", OperationUpdate, "example.com/v1", `{"f:metadata":{"f:labels":{"f:x":{}}}}`),
		entry("k", OperationApply, "example.com/v1beta1", `{"f:spec":{"f:args":{}}}`),
		entry("k", OperationApply, "example.com/v1", `{"f:spec":{"f:replicas":{}}}`),
		entry("b", OperationUpdate, "example.com/v1beta1", `{"f:spec":{"f:selector":{}}}`),
		entry("e", OperationUpdate, "example.com/v1", `{}`),
		entry("n", OperationUpdate, "example.com/v1", ""),
		entry("u", OperationUpdate, "example.com/v1", `{"f:spec":`),
		entry("o", "Other", "example.com/v1", `{"f:spec":{"f:args":{}}}`),
	}
	kept, keptWithOthers := 0, 0
	for i := 0; i < 8000; i++ {
		oldV := randomValue(r, s, 0)
		newV := mutate(r, oldV, s, 0)
		old, _ := json.Marshal(oldV)
		new, _ := json.Marshal(newV)
		oldObj, oerr := s.liveObject(old)
		newObj, nerr := s.liveObject(new)
		if oerr != nil || nerr != nil {
			continue
		}
		owned := oldObj // the writer created it, or wrote some other fields of it
		if r.Intn(2) == 0 {
			if other, err := s.liveObject(mustJSON(mutate(r, oldV, s, 0))); err == nil {
				owned = other
			}
		}
		managed := createdGeneral(s, owned, opts)
		if managed == nil {
			continue
		}
		for range r.Intn(3) {
			managed = append(managed, others[r.Intn(len(others))])
		}
		r.Shuffle(len(managed), func(i, j int) { managed[i], managed[j] = managed[j], managed[i] })
		c := compareObjects(oldObj, newObj, s)
		got, ok := updateKept(&c, managed, opts)
		if !ok {
			continue
		}
		kept++
		if len(managed) > 1 {
			keptWithOthers++
		}
		ms, err := decodeManagers(managed)
		if err != nil {
			t.Fatalf("%s\n%s\n%s\nkept entries decodeManagers refuses: %v", old, new, entriesJSON(managed), err)
		}
		c = compareObjects(oldObj, newObj, s)
		s.record(&c, oldObj, newObj, ms, opts)
		if want := ms.encode(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\n%s\n%s\nupdateKept: %s\nrecord:     %s", old, new, entriesJSON(managed), entriesJSON(got), entriesJSON(want))
		}
	}
	if kept < 40 || keptWithOthers < 10 {
		t.Errorf("only %d of 8000 writes were kept, %d beside other entries", kept, keptWithOthers)
	}
	t.Logf("%d of 8000 writes were kept, %d beside other entries", kept, keptWithOthers)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A write that removes a field another manager owns takes it from that
// manager: not kept, however much of it is the writer's.
func TestUpdateKeptNotWhenAnotherLosesAField(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2e9, 0))}
	managed := []kapi.ManagedFieldsEntry{
		{Manager: "a", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)}},
		{Manager: "b", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}},
	}
	c, ok := compareStored([]byte(`{"spec":{"color":"red","replicas":1}}`), []byte(`{"spec":{"replicas":2}}`), s)
	if !ok {
		t.Fatal("not compared as written")
	}
	if got, ok := updateKept(&c, managed, opts); ok {
		t.Fatalf("kept: %s", entriesJSON(got))
	}
	got, err := s.Update([]byte(`{"spec":{"color":"red","replicas":1}}`), []byte(`{"spec":{"replicas":2}}`), managed, opts)
	if err != nil || len(got) != 1 || got[0].Manager != "b" {
		t.Fatalf("Update: %s, %v; want b's entry alone", entriesJSON(got), err)
	}
}

// A kept entry's set is the one read (no copy of it is made), never the
// cache of parsed sets: a FieldsV1 decoded into again changes its bytes in
// place, which must change no later write's entries.
func TestUpdateKeptSharesWhatItRead(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2e9, 0))}
	const set = `{"f:spec":{"f:color":{},"f:replicas":{}}}`
	old, new := []byte(`{"spec":{"color":"red","replicas":1}}`), []byte(`{"spec":{"color":"red","replicas":2}}`)
	write := func() ([]kapi.ManagedFieldsEntry, []kapi.ManagedFieldsEntry) {
		managed := []kapi.ManagedFieldsEntry{{Manager: "b", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(set)}}}
		got, err := s.Update(old, new, managed, opts)
		if err != nil || len(got) != 1 || string(got[0].FieldsV1.Raw) != set {
			t.Fatalf("Update: %s, %v; want b's entry as it was", entriesJSON(got), err)
		}
		return managed, got
	}
	managed, got := write()
	if &got[0].FieldsV1.Raw[0] != &managed[0].FieldsV1.Raw[0] {
		t.Error("the kept entry's set is a copy of the one read")
	}
	// As FieldsV1.UnmarshalJSON writes another set of the same length.
	if err := got[0].FieldsV1.UnmarshalJSON([]byte(`{"f:spec":{"f:colour":{},"f:replica":{}}}`)); err != nil {
		t.Fatal(err)
	}
	write()
}

// An apply's entries share the sets they were read with as an update's
// do: the applier's, applying the set it applied before, and another
// manager's it leaves alone keep their bytes, and a FieldsV1 decoded into
// in place changes no later apply's entries.
func TestApplySharesWhatItRead(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	opts := ApplyOptions{Manager: "a", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2e9, 0))}
	config := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"color":"red"}}`)
	live := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"color":"red","replicas":1}}`)
	const applied, updated = `{"f:spec":{"f:color":{}}}`, `{"f:spec":{"f:replicas":{}}}`
	apply := func() ([]kapi.ManagedFieldsEntry, []kapi.ManagedFieldsEntry) {
		managed := []kapi.ManagedFieldsEntry{
			{Manager: "a", Operation: OperationApply, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(applied)}},
			{Manager: "b", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(updated)}},
		}
		_, got, err := s.Apply(live, config, managed, opts)
		if err != nil || len(got) != 2 || string(got[0].FieldsV1.Raw) != applied || string(got[1].FieldsV1.Raw) != updated {
			t.Fatalf("Apply: %s, %v; want both entries as they were", entriesJSON(got), err)
		}
		return managed, got
	}
	managed, got := apply()
	for i := range got {
		if &got[i].FieldsV1.Raw[0] != &managed[i].FieldsV1.Raw[0] {
			t.Errorf("%s's set is a copy of the one read", got[i].Manager)
		}
	}
	if err := got[0].FieldsV1.UnmarshalJSON([]byte(`{"f:spec":{"f:colour":{}}}`)); err != nil {
		t.Fatal(err)
	}
	apply()
}

// The usual write of one's own object again is one allocation for its
// entries, with their field sets and times, when it has one or two
// managers (an entry's FieldsV1 and Time were an allocation each).
func TestUpdateKeptAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	then := kapi.NewTime(time.Unix(1e9, 0))
	opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2e9, 0)), Ignore: []string{"status"}}
	writer := kapi.ManagedFieldsEntry{Manager: "b", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", Time: &then,
		FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)}}
	other := kapi.ManagedFieldsEntry{Manager: "a", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", Time: &then,
		FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:x":{}}}}`)}}
	oldObj, err := s.liveObject([]byte(`{"spec":{"color":"red"}}`))
	if err != nil {
		t.Fatal(err)
	}
	newObj, err := s.liveObject([]byte(`{"spec":{"color":"blue"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, managed := range [][]kapi.ManagedFieldsEntry{{writer}, {other, writer}} {
		c := compareObjects(oldObj, newObj, s)
		var out []kapi.ManagedFieldsEntry
		allocs := testing.AllocsPerRun(100, func() {
			var ok bool
			if out, ok = updateKept(&c, managed, opts); !ok {
				t.Fatal("updateKept did not keep the entries")
			}
		})
		if w := out[len(out)-1]; len(out) != len(managed) || w.Manager != "b" || !w.Time.Time.Equal(opts.Now.Time) || string(w.FieldsV1.Raw) != string(writer.FieldsV1.Raw) {
			t.Errorf("entries %+v", out)
		}
		if allocs > 1 {
			t.Errorf("%d entries kept: %v allocations, want 1", len(managed), allocs)
		}
	}
}
