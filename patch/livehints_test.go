package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

type hintPort struct {
	Name string `json:"name"`
	Port int32  `json:"port,omitempty"`
}

// hintKeyed is an object with ports; hintNamed's schema declares its
// ports' names only.
type hintKeyed struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Ports           []hintPort `json:"ports,omitempty" listType:"map" listMapKey:"name"`
}

type hintNamed struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Ports           []struct {
		Name string `json:"name"`
	} `json:"ports,omitempty" listType:"map" listMapKey:"name"`
}

// TestLiveHintValidatedBySchema: a live tree that is all its hint is not
// validated again only when the hint was validated with the apply's
// schema. The same object (one uid, one tree) read with a schema it fits
// and then with one it does not is refused the second time.
func TestLiveHintValidatedBySchema(t *testing.T) {
	config, err := ParseConfiguration([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`))
	if err != nil {
		t.Fatal(err)
	}
	obj := &hintKeyed{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hint-validated-by-schema"}, Ports: []hintPort{{Name: "a", Port: 1}}}
	apply := func(typ reflect.Type) error {
		s, err := SchemaOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = s.ApplyMerged(nil, config, nil, ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Force: true, Live: obj})
		return err
	}
	if err := apply(reflect.TypeFor[hintKeyed]()); err != nil {
		t.Fatalf("with its own schema: %v", err)
	}
	if err := apply(reflect.TypeFor[hintNamed]()); !errors.Is(err, ErrNotApplicable) {
		t.Fatalf("with a schema without its ports' port: %v, want ErrNotApplicable", err)
	}
}

// TestLiveHintChangesNothing: applies to live objects read with hints (the
// trees of the object's earlier versions, kept as an apply keeps them)
// give what they give without.
func TestLiveHintChangesNothing(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[hintKeyed]())
	if err != nil {
		t.Fatal(err)
	}
	config, err := ParseConfiguration([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"b"}},"ports":[{"name":"b","port":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	versions := []*hintKeyed{
		{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hint-changes-nothing", ResourceVersion: "1"}, Ports: []hintPort{{Name: "a", Port: 1}}},
		{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hint-changes-nothing", ResourceVersion: "2", Labels: map[string]string{"a": "b"}}, Ports: []hintPort{{Name: "a", Port: 1}, {Name: "b", Port: 3}}},
		{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hint-changes-nothing", ResourceVersion: "2", Labels: map[string]string{"a": "b"}}, Ports: []hintPort{{Name: "a", Port: 1}, {Name: "b", Port: 3}}},
		{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hint-changes-nothing", ResourceVersion: "3", Labels: map[string]string{"a": "c"}}, Ports: []hintPort{{Name: "a", Port: 2}}},
	}
	apply := func(obj *hintKeyed) string {
		m, managed, err := s.ApplyMerged(nil, config, nil, ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Force: true, Now: kapi.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), Live: obj})
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.JSON()
		if err != nil {
			t.Fatal(err)
		}
		entries, err := json.Marshal(managed)
		if err != nil {
			t.Fatal(err)
		}
		return string(out) + string(entries)
	}
	for i, v := range versions {
		hinted := apply(v)
		clearLiveHints()
		if plain := apply(v); hinted != plain {
			t.Errorf("version %d: %s from a hint, %s without", i, hinted, plain)
		}
	}
}

func clearLiveHints() {
	for j := range liveHints {
		for k := range liveHints[j] {
			liveHints[j][k].Store(nil)
		}
	}
}

// TestLiveHintsOfObjectsInOneSet: objects applied to in turn whose uids
// fall in one set of hints each keep theirs, so each apply takes the typed
// path; with one hint a slot, each replaced the other's, and both took the
// whole-tree path at every apply.
func TestLiveHintsOfObjectsInOneSet(t *testing.T) {
	clearLiveHints()
	s, err := SchemaOf(reflect.TypeFor[hintKeyed]())
	if err != nil {
		t.Fatal(err)
	}
	config, err := ParseConfiguration([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"ports":[{"name":"a","port":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*hintKeyed
	var set *ways[liveHint, *liveHint]
	for i := 0; len(objs) < cacheWays; i++ {
		obj := &hintKeyed{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: fmt.Sprintf("hints-in-one-set-%d", i)}, Ports: []hintPort{{Name: "a", Port: 1}}}
		if in, _ := liveHintSet(obj); set == nil || in == set {
			set = in
			objs = append(objs, obj)
		}
	}
	managed, err := s.Update(nil, []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"ports":[{"name":"a","port":1}]}`), nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for i, obj := range objs {
			obj.ManagedFields = managed
			if round > 0 && s.typedLiveOf(obj) == nil {
				t.Errorf("round %d, object %d: no hint, the whole-tree path", round, i)
			}
			if _, _, err := s.ApplyMerged(nil, config, managed, ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Force: true, Live: obj}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One more object in the set replaces the oldest hint, the first's.
	extra := &hintKeyed{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "hints-in-one-set-extra"}}
	storeHint(set, &liveHint{uid: string(extra.UID), schema: s, tree: map[string]any{}})
	for i, obj := range objs {
		if got := liveHintOf(obj) != nil; got != (i > 0) {
			t.Errorf("object %d keeps its hint: %v", i, got)
		}
	}
}

// TestValidFromRandom holds validFrom to valid: random live trees, each
// from a validated tree whose parts it shares here and there.
func TestValidFromRandom(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(7))
	shared, invalid := 0, 0
	for _, s := range []*Schema{s, withDeduced(s)} {
		for i := 0; i < 3000; i++ {
			hint := randomValue(r, s, 0)
			if !valid(hint, s, true) {
				continue
			}
			v := mutate(r, hint, s, 0)
			// Graft the hint's own parts into v, as a build from it does.
			if vm, ok := v.(map[string]any); ok {
				if hm, ok := hint.(map[string]any); ok {
					for _, k := range slices.Sorted(maps.Keys(hm)) {
						if r.Intn(2) == 0 {
							vm[k] = hm[k]
							shared++
						}
					}
				}
			}
			want := valid(v, s, true)
			if !want {
				invalid++
			}
			if got := validFrom(v, hint, s); got != want {
				t.Fatalf("validFrom %v, valid %v of %#v from %#v", got, want, v, hint)
			}
		}
	}
	if shared < 1000 || invalid < 100 {
		t.Errorf("only %d parts shared, %d trees invalid", shared, invalid)
	}
	t.Logf("%d parts shared, %d trees invalid", shared, invalid)
}
