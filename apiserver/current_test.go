package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

type gadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            gadgetSpec   `json:"spec,omitempty"`
	Status          gadgetStatus `json:"status,omitempty"`
}

type gadgetSpec struct {
	Size  int               `json:"size,omitempty"`
	Parts map[string]string `json:"parts,omitempty"`
}

type gadgetStatus struct {
	Conditions []kapi.Condition  `json:"conditions,omitempty"`
	Counts     map[string]int    `json:"counts,omitempty"`
	Last       *kapi.Time        `json:"last,omitempty"`
	Extra      map[string]string `json:"extra,omitempty"`
}

// Writes start from the watch cache's objects (current), which every reader
// shares: no write may change one, even through a defaulter that changes
// the status it carries over in place, or a delete that marks it.
func TestWritesLeaveCachedObjectsAlone(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	err = Register(srv, Resource[gadget]{
		Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true, Status: true,
		Default: func(g *gadget) {
			for i := range g.Status.Conditions {
				g.Status.Conditions[i].Message += "!"
			}
			if g.Status.Counts != nil {
				g.Status.Counts["defaulted"]++
			}
			if g.Status.Last != nil {
				*g.Status.Last = kapi.Time{}
			}
			if g.Spec.Parts != nil {
				g.Spec.Parts["defaulted"] = "yes"
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, contentType, body string, want int) {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
		}
	}
	const path = "/apis/example.com/v1/namespaces/default/gadgets"
	do("POST", path, "application/json", `{"metadata":{"name":"a","finalizers":["x/y"]},"spec":{"size":1,"parts":{"p":"1"}}}`, http.StatusCreated)
	res := srv.resources[0]
	key := res.key("default", "a")
	// cached is the cached item and its object, which the test holds, so
	// that the cache keeps it and the next write starts from it.
	cached := func() (*watch.Item, kapi.Object) {
		it := cachedAt(t, srv, res, key)
		obj, err := cachedObject(it)
		if err != nil {
			t.Fatal(err)
		}
		return it, obj
	}
	before, beforeObj := cached()
	// check says whether the item the last write started from is still
	// what its stored value says.
	check := func(step string) {
		t.Helper()
		fresh, err := res.decodeStored(storage.KeyValue{Key: before.Key, Value: before.Value, ModRevision: before.Revision})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(beforeObj, fresh) {
			t.Fatalf("%s changed the cached object: %+v, its stored value %+v", step, beforeObj, fresh)
		}
		before, beforeObj = cached()
	}
	do("PUT", path+"/a/status", "application/json", `{"metadata":{"name":"a"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Up","message":"m","lastTransitionTime":"2030-01-01T00:00:00Z"}],"counts":{"c":1},"last":"2030-01-01T00:00:00Z","extra":{"e":"1"}}}`, http.StatusOK)
	check("status")
	for i, body := range []string{
		`{"metadata":{"name":"a","finalizers":["x/y"]},"spec":{"size":2,"parts":{"p":"2"}}}`,
		`{"metadata":{"name":"a","finalizers":["x/y"]},"spec":{"size":3}}`,
	} {
		do("PUT", path+"/a", "application/json", body, http.StatusOK)
		check("PUT " + string(rune('1'+i)))
	}
	do("PATCH", path+"/a", "application/merge-patch+json", `{"spec":{"size":4}}`, http.StatusOK)
	check("PATCH")
	do("PATCH", path+"/a?fieldManager=m&force=true", "application/apply-patch+yaml", "metadata: {name: a}\nspec: {size: 5}\n", http.StatusOK)
	check("apply")
	do("DELETE", path+"/a", "", "", http.StatusOK) // marked: the finalizer holds it
	check("DELETE")
}

type stamped struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            stampedSpec `json:"spec"`
}

type stampedSpec struct {
	Size  int            `json:"size,omitempty"`
	At    kapi.Time      `json:"at"`
	Micro kapi.MicroTime `json:"micro"`
	Tags  []string       `json:"tags,omitempty"`
	Seen  *kapi.Time     `json:"seen,omitempty"`
}

// The old object a write's hooks receive is what decoding the stored value
// gives, though the write before it stored an object whose Go value JSON
// does not carry whole (the watch cache keeps the image of that object,
// not the object: see offer).
func TestOldObjectIsTheStoredOne(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var olds []*stamped
	err = Register(srv, Resource[stamped]{
		Group: "example.com", Version: "v1", Kind: "Stamped", Plural: "stampeds", Namespaced: true,
		Default: func(s *stamped) {
			now := time.Now() // nanoseconds, a monotonic reading, Local
			s.Spec.At, s.Spec.Micro, s.Spec.Seen = kapi.Time{Time: now}, kapi.MicroTime{Time: now.In(time.FixedZone("x", 3600))}, &kapi.Time{}
			if s.Spec.Tags == nil {
				s.Spec.Tags = []string{}
			}
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
		},
		Validate: func(_ context.Context, _, old *stamped) FieldErrors {
			if old != nil {
				olds = append(olds, old)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/stampeds"
	res := srv.resources[0]
	for i, w := range []struct {
		method, path, contentType, body string
		code                            int
	}{
		{"POST", path, "application/json", `{"metadata":{"name":"a"},"spec":{"size":1}}`, http.StatusCreated},
		{"PUT", path + "/a", "application/json", `{"metadata":{"name":"a"},"spec":{"size":2}}`, http.StatusOK},
		{"PATCH", path + "/a", "application/merge-patch+json", `{"spec":{"size":3}}`, http.StatusOK},
		{"PATCH", path + "/a?fieldManager=m&force=true", "application/apply-patch+yaml", "metadata: {name: a}\nspec: {size: 4}\n", http.StatusOK},
		{"PATCH", path + "/a", "application/merge-patch+json", `{"spec":{"size":5}}`, http.StatusOK},
	} {
		var stored any
		if i > 0 {
			it := cachedAt(t, srv, res, res.key("default", "a"))
			if stored, err = res.decodeStored(storage.KeyValue{Key: it.Key, Value: it.Value, ModRevision: it.Revision}); err != nil {
				t.Fatal(err)
			}
		}
		serve(t, srv, w.method, w.path, w.contentType, w.body, w.code)
		if i == 0 {
			continue
		}
		if len(olds) != i {
			t.Fatalf("%s: Validate saw %d old objects, want %d", w.method, len(olds), i)
		}
		if old := olds[i-1]; !reflect.DeepEqual(old, stored) {
			t.Errorf("%s %s: the old object\n%#v\nis not what its stored value decodes to\n%#v", w.method, w.path, old, stored)
		}
	}
}

// racingStore lets another writer store the same bytes just before the
// armed Update, and waits until the hub has seen that write, as when two
// clients PUT the same object at once.
type racingStore struct {
	storage.Interface
	armed atomic.Bool
	srv   *Server
}

func (s *racingStore) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	if s.armed.CompareAndSwap(true, false) {
		rev, err := s.Interface.Update(ctx, key, append([]byte(nil), value...), expect) // the other writer, equal bytes
		if err != nil {
			panic(err)
		}
		if err := s.srv.hub.WaitFor(ctx, rev); err != nil {
			panic(err)
		}
	}
	return s.Interface.Update(ctx, key, value, expect)
}

type labelled struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Size int `json:"size"`
	} `json:"spec"`
}

// Two clients write equal bytes at once: the cache takes the loser's
// offered image for the winner's event; the loser's retry must not change
// it (a defaulter fills in the maps it is given).
func TestRetryAfterAnEqualWrite(t *testing.T) {
	store := &racingStore{Interface: memory.New()}
	srv, err := New(WithStorage(store))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	store.srv = srv
	var n atomic.Int64
	var olds []*labelled
	err = Register(srv, Resource[labelled]{
		Group: "example.com", Version: "v1", Kind: "Labelled", Plural: "labelleds", Namespaced: true,
		Default: func(s *labelled) {
			if s.Labels != nil { // an ordinary defaulter: fills in a map it was given
				s.Labels["defaulted"] = strconv.FormatInt(n.Add(1), 10)
			}
		},
		Validate: func(_ context.Context, _, old *labelled) FieldErrors {
			if old != nil {
				olds = append(olds, old)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/labelleds"
	serve(t, srv, "POST", path, "application/json", `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"size":1}}`, http.StatusCreated)
	res := srv.resources[0]
	cachedAt(t, srv, res, res.key("default", "a"))
	store.armed.Store(true)
	serve(t, srv, "PUT", path+"/a", "application/json", `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"size":2}}`, http.StatusOK)
	// The PUT lost the race, retried and wrote again; its first attempt's
	// object was taken by the cache for the other writer's equal bytes.
	if len(olds) != 2 {
		t.Fatalf("Validate saw %d old objects", len(olds))
	}
	kv, err := store.Get(t.Context(), res.key("default", "a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := store.Get(t.Context(), res.key("default", "a"), kv.ModRevision-1)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := res.decodeStored(prev)
	if err != nil {
		t.Fatal(err)
	}
	if old := olds[1]; !reflect.DeepEqual(old, stored) {
		t.Errorf("the retry's old object has labels %v; the value stored at its revision %s", old.Labels, prev.Value)
	}
}
