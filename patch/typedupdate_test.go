package patch

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// TestTypedUpdateRandom holds the typed comparison of an update to the
// documents' (compareStored, and the decoding fallback), its oracle: over
// random objects changed at random (maps, list-maps, sets, atomic lists,
// nil or empty, status, metadata's labels, annotations, owners) by several
// managers in turn, on the main resource or /status, Update with the Go
// values and Update of the documents alone give the same managedFields,
// byte for byte, and the same error.
func TestTypedUpdateRandom(t *testing.T) {
	checkTypedUpdateRandom(t, 1, race.Cases(800))
}

func TestTypedUpdateRandomSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("more seeds")
	}
	for seed := int64(2); seed <= 4; seed++ {
		checkTypedUpdateRandom(t, seed, race.Cases(500))
	}
}

func checkTypedUpdateRandom(t *testing.T, seed int64, n int) {
	t.Helper()
	s, seedTree := typedWidgetSeed(t)
	r := rand.New(rand.NewSource(seed))
	var steps, typed, changed int
	for i := range n {
		old := randomWidget(r, s, seedTree)
		if old == nil {
			continue
		}
		old.UID, old.ResourceVersion = fmt.Sprint("uid-", seed, "-", i), "5"
		data, _ := json.Marshal(old)
		created, err := s.Update(nil, data, nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0))})
		if err != nil {
			continue
		}
		old.ManagedFields = created
		for step := range 6 {
			next := changedWidget(r, s, old)
			if next == nil {
				continue
			}
			opts := UpdateOptions{Manager: []string{"a", "b", "a", "creator"}[r.Intn(4)], APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(int64(2+step), 0))}
			switch r.Intn(3) {
			case 0:
				opts.Ignore = []string{"status"}
			case 1:
				opts.Ignore, opts.Subresource = []string{"spec", "metadata"}, "status"
			}
			steps++
			entries, isTyped, isChanged := checkTypedUpdate(t, s, old, next, opts)
			if isTyped {
				typed++
			}
			if isChanged {
				changed++
			}
			// The next write's old object: what decoding next's stored
			// value gives, as a server's cache holds it.
			again := new(typedWidget)
			if !decodeInto(next, again) {
				break
			}
			again.ManagedFields, again.ResourceVersion = entries, fmt.Sprint(step+10)
			old = again
		}
	}
	t.Logf("%d updates: %d typed, %d with changes", steps, typed, changed)
	if typed < steps*3/4 || changed < typed/2 {
		t.Errorf("the typed comparison took %d of %d updates, %d with changes: too few to test it", typed, steps, changed)
	}
}

// changedWidget is old changed at random: its tree changed and decoded,
// or a copy of it changed as a Go value (sharing what it does not change,
// as a server's next object shares its old one's parts; nil or empty
// where JSON leaves both out; a time's nanoseconds, which JSON drops;
// strings that are not UTF-8).
func changedWidget(r *rand.Rand, s *Schema, old *typedWidget) *typedWidget {
	if r.Intn(2) == 0 {
		tree, _, ok := typedTree(old, nil)
		if !ok {
			return nil
		}
		next := new(typedWidget)
		if !decodeInto(mutate(r, tree, s, 0), next) {
			return nil
		}
		next.ManagedFields = old.ManagedFields
		next.ResourceVersion = []string{old.ResourceVersion, ""}[r.Intn(2)]
		return next
	}
	next := *old
	for range 1 + r.Intn(3) {
		switch r.Intn(15) {
		case 0:
			next.Labels = map[string]string{}
		case 1:
			next.Labels = map[string]string{"a": fmt.Sprint(r.Intn(3))}
		case 2:
			next.Annotations = nil
		case 3:
			next.OwnerReferences = append([]kapi.OwnerReference(nil), kapi.OwnerReference{APIVersion: "v1", Kind: "K", Name: "n", UID: fmt.Sprint(r.Intn(2))})
		case 4:
			next.Spec.Args = []string{}
		case 5:
			next.Spec.Tags = []string{"a", []string{"b", "c"}[r.Intn(2)]}
		case 6:
			next.Spec.Ports = []typedPort{{Name: "http", Port: int32(80 + r.Intn(2))}, {Name: "dns"}}[:1+r.Intn(2)]
		case 7:
			next.Spec.Selector = map[string]string{}
		case 8:
			n := int32(r.Intn(3))
			next.Spec.Replicas = &n
		case 9:
			next.Spec.Inner.Deep.C = []string{"", "d", "e"}[r.Intn(3)]
		case 10:
			next.Status.Phase = []string{"", "Running", "Done"}[r.Intn(3)]
		case 11:
			next.Status.Conditions = []kapi.Condition{{Type: "Ready", Status: []string{"True", "False"}[r.Intn(2)],
				LastTransitionTime: kapi.NewTime(time.Unix(1_750_000_000, int64(r.Intn(2))*5000))}}
		case 12:
			next.Spec.Extra = []any{map[string]any{"k": fmt.Sprint(r.Intn(2))}, nil}[r.Intn(2)]
		case 14:
			// Not UTF-8: written as U+FFFD, which old's decoding holds.
			next.Spec.Color = []string{"\xff", "\ufffd"}[r.Intn(2)]
			next.Status.Phase = "\xfe"
		case 13:
			next.Spec.Template = []*struct {
				Image string `json:"image,omitempty"`
			}{nil, {Image: "i"}, {}}[r.Intn(3)]
		}
	}
	next.ResourceVersion = []string{old.ResourceVersion, ""}[r.Intn(2)]
	return &next
}

// checkTypedUpdate records the write of old into next both ways and
// compares what they give; it returns the typed way's entries, whether
// the typed comparison took the write and whether it found changes.
func checkTypedUpdate(t *testing.T, s *Schema, old, next *typedWidget, opts UpdateOptions) (entries []kapi.ManagedFieldsEntry, isTyped, isChanged bool) {
	t.Helper()
	oldJSON, newJSON := storedJSON(old, true), storedJSON(next, false)
	whole, wholeErr := s.Update(oldJSON, newJSON, old.ManagedFields, opts)
	opts.Old, opts.New = old, next
	typed, typedErr := s.Update(oldJSON, newJSON, old.ManagedFields, opts)
	if (wholeErr == nil) != (typedErr == nil) || wholeErr != nil && wholeErr.Error() != typedErr.Error() {
		t.Fatalf("%s to %s: errors\n%v\n%v", oldJSON, newJSON, wholeErr, typedErr)
	}
	we, _ := json.Marshal(whole)
	te, _ := json.Marshal(typed)
	if string(we) != string(te) {
		t.Fatalf("%s to %s as %+v: managedFields\n%s\n%s", oldJSON, newJSON, opts, we, te)
	}
	c, ok := compareTyped(old, next, s)
	if !ok {
		return typed, false, false
	}
	// The sets themselves, which the entries need not show all of.
	l, lerr := s.liveObject(oldJSON)
	rt, rerr := s.liveObject(newJSON)
	if lerr != nil || rerr != nil {
		t.Fatalf("%s to %s: the typed comparison took objects liveObject refuses: %v, %v", oldJSON, newJSON, lerr, rerr)
	}
	want := compareObjects(l, rt, s)
	for i, pair := range [3][2]fieldSet{{c.added, want.added}, {c.modified, want.modified}, {c.removed, want.removed}} {
		if !pair[0].equal(pair[1]) && len(pair[0])+len(pair[1]) > 0 {
			t.Fatalf("%s to %s: set %d (added, modified, removed) %v, want %v", oldJSON, newJSON, i, pair[0], pair[1])
		}
	}
	return typed, true, len(c.added)+len(c.modified)+len(c.removed) > 0
}

// storedJSON is w's JSON as a stored value writes it: without its
// resourceVersion, with its managedFields or without.
func storedJSON(w *typedWidget, managed bool) []byte {
	c := *w
	c.ResourceVersion = ""
	if !managed {
		c.ManagedFields = nil
	}
	data, err := json.Marshal(&c)
	if err != nil {
		panic(err)
	}
	return data
}

// FuzzTypedUpdate: an object written by a manager and then by others,
// each write's new object the fuzzer's: the typed comparison gives what
// the documents' does.
func FuzzTypedUpdate(f *testing.F) {
	f.Add(typedSeed, `{"spec":{"color":"red","ports":[{"name":"http","port":81}]},"metadata":{"labels":{}}}`, `{"status":{"phase":"x"}}`, false)
	f.Add(typedSeed, `{"metadata":{"labels":{"a":"2"},"ownerReferences":[]},"spec":{"inner":{"deep":{"c":"e"}}}}`, typedSeed, true)
	f.Add(`{"metadata":{"uid":"u"},"spec":{"inner":{"deep":{}}}}`, `{"spec":{"args":[],"extra":{"k":1}}}`, `{}`, false)
	s, err := SchemaOf(reflect.TypeFor[typedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, oldDoc, nextDoc, thenDoc string, ignoreStatus bool) {
		first, old := new(typedWidget), new(typedWidget)
		if json.Unmarshal([]byte(oldDoc), first) != nil || !decodeInto(first, old) {
			return
		}
		old.UID = "fuzz"
		created, err := s.Update(nil, storedJSON(old, false), nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0))})
		if err != nil {
			return
		}
		old.ManagedFields = created
		opts := UpdateOptions{APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2, 0))}
		if ignoreStatus {
			opts.Ignore = []string{"status"}
		}
		for i, doc := range []string{nextDoc, thenDoc} {
			next := new(typedWidget)
			if json.Unmarshal([]byte(doc), next) != nil {
				return
			}
			next.UID, next.ManagedFields = old.UID, old.ManagedFields
			opts.Manager = []string{"a", "b"}[i]
			entries, _, _ := checkTypedUpdate(t, s, old, next, opts)
			again := new(typedWidget)
			if !decodeInto(next, again) {
				return
			}
			again.ManagedFields = entries
			old = again
		}
	})
}

// BenchmarkTypedUpdate records an update of one field of typedSeed's
// widget as a server does, from the objects' JSON alone ("json") and with
// the objects too ("typed"), the old one what decoding its JSON gives.
func BenchmarkTypedUpdate(b *testing.B) {
	s, err := SchemaOf(reflect.TypeFor[typedWidget]())
	if err != nil {
		b.Fatal(err)
	}
	old, next := new(typedWidget), new(typedWidget)
	if err := json.Unmarshal([]byte(typedSeed), old); err != nil {
		b.Fatal(err)
	}
	opts := UpdateOptions{Manager: "kubectl", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0)), Ignore: []string{"status"}}
	old.ManagedFields, err = s.Update(nil, storedJSON(old, false), nil, opts)
	if err != nil {
		b.Fatal(err)
	}
	*next = *old
	next.Spec.Color, next.Generation = "red", old.Generation+1
	oldJSON, newJSON := storedJSON(old, true), storedJSON(next, false)
	for _, typed := range []bool{false, true} {
		b.Run(map[bool]string{false: "json", true: "typed"}[typed], func(b *testing.B) {
			opts := opts
			if typed {
				opts.Old, opts.New = old, next
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Update(oldJSON, newJSON, old.ManagedFields, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Update compares Old and New as Go values only where it can: given
// values it cannot compare (one of them missing, of two types, not
// pointers to structs, of a type the typed plan refuses), it records the
// write from the documents, as it does without them.
func TestTypedUpdateFallsBack(t *testing.T) {
	s, _ := typedWidgetSeed(t)
	old := &typedWidget{TypeMeta: kapi.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "u"}}
	old.Spec.Color = "Red"
	oldJSON := storedJSON(old, false)
	created, err := s.Update(nil, oldJSON, nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0))})
	if err != nil {
		t.Fatal(err)
	}
	next := *old
	next.Spec.Color, next.Spec.Size = "Blue", 3
	newJSON := storedJSON(&next, false)
	opts := UpdateOptions{Manager: "a", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(2, 0))}
	want, err := s.Update(oldJSON, newJSON, created, opts)
	if err != nil || len(want) != 2 {
		t.Fatalf("from the documents: %v, %v", want, err)
	}
	stored := &storedWidget{} // a type typedValid refuses (stored_test.go)
	for _, tc := range []struct {
		name     string
		old, new any
	}{
		{"old only", old, nil},
		{"new only", nil, &next},
		{"two types", old, stored},
		{"not pointers", *old, next},
		{"a pointer to a string", new(string), new(string)},
		{"a nil pointer", (*typedWidget)(nil), &next},
		{"a type the plan refuses", stored, stored},
	} {
		opts := opts
		opts.Old, opts.New = tc.old, tc.new
		got, err := s.Update(oldJSON, newJSON, created, opts)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, want)
		}
	}
}
