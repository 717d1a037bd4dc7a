package storedmeta

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/watch"
)

type widget struct {
	kapi.TypeMeta `json:",inline"`
	Metadata      kapi.ObjectMeta   `json:"metadata"`
	Spec          map[string]string `json:"spec,omitempty"`
}

func (w *widget) GetTypeMeta() *kapi.TypeMeta     { return &w.TypeMeta }
func (w *widget) GetObjectMeta() *kapi.ObjectMeta { return &w.Metadata }

// check holds Meta of the widget stored as value to what decoding it gives:
// the same metadata, or (read without decoding) the same name, namespace,
// uid and resourceVersion of an object with nothing else the collector
// reads.
func check(t *testing.T, value []byte) {
	t.Helper()
	decoded := 0
	decode := func(it *watch.Item) (kapi.Object, error) {
		decoded++
		w := &widget{}
		if err := json.Unmarshal(it.Value, w); err != nil {
			return nil, err
		}
		w.Metadata.ResourceVersion = strconv.FormatInt(it.Revision, 10)
		return w, nil
	}
	it := &watch.Item{Key: "k", Revision: 42, Value: value}
	want, wantErr := decode(it)
	decoded = 0
	got, err := Meta(it, true, decode)
	if wantErr != nil {
		return // a value the cache holds decodes
	}
	if err != nil {
		t.Fatalf("%s: %v", value, err)
	}
	m := want.GetObjectMeta()
	if decoded == 1 {
		if got != m && !reflect.DeepEqual(got, m) {
			t.Errorf("%s: decoded %+v, want %+v", value, got, m)
		}
		return
	}
	if m.OwnerReferences != nil || m.Finalizers != nil || m.DeletionTimestamp != nil {
		t.Errorf("%s: read without decoding an object the collector acts on", value)
	}
	short := kapi.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
	if !reflect.DeepEqual(*got, short) {
		t.Errorf("%s: read %+v, want %+v", value, *got, short)
	}
}

func TestMetaIsDecoded(t *testing.T) {
	now := kapi.Now()
	for _, m := range []kapi.ObjectMeta{
		{},
		{Name: "a"},
		{Name: "a", Namespace: "ns", UID: "u-1", Generation: 3, CreationTimestamp: now, Labels: map[string]string{"ownerReferences": "x"}, Annotations: map[string]string{"finalizers": `{"uid":"no"}`}},
		{Name: "a", UID: "u", ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Apply"}}},
		{Name: "a", UID: "u", OwnerReferences: []kapi.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "o", UID: "ou"}}},
		{Name: "a", UID: "u", Finalizers: []string{"orphan"}},
		{Name: "a", UID: "u", DeletionTimestamp: &now},
		{Name: "a<b>\u2028", Namespace: "n\"s", UID: "u\\"},
		{Name: "é", UID: "ü"},
	} {
		value, err := json.Marshal(&widget{TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "v1"}, Metadata: m, Spec: map[string]string{"metadata": "{}"}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, value)
	}
	for _, value := range []string{
		`{"metadata":{"name":"a","uid":"u"}}`,
		` { "kind" : "W" , "metadata" : { "name" : "a" , "uid" : "u" } , "spec" : {} } `,
		`{"spec":{"metadata":"{\\"name\\":1}"},"metadata":{"name":"a"}}`,
		`{"metadata":{"na\u006de":"a","uid":"u"}}`,
		`{"metadata":{"name":"a\u0062","uid":"u"}}`,
		`{"metadata":{"name":"a","ownerReferences":[]}}`,
		`{"metadata":{"name":"a","deletionTimestamp":null}}`,
		`{"metadata":null}`,
		`{"metadata":{}}`,
		`{}`,
		`{"metadata":{"name":1}}`,
		`{"metadata":{"name":"a",}}`,
		`{"metadata":{"name":"a"`,
		`[]`,
	} {
		check(t, []byte(value))
	}
}

// A value the invariant does not promise (not json.Marshal's) is decoded,
// never read wrongly: fuzzed, Meta agrees with decoding wherever decoding
// succeeds.
func FuzzMeta(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","namespace":"n","uid":"u","labels":{"a":"b"}}}`))
	f.Add([]byte(`{"metadata":{"name":"a","finalizers":["x"]}}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		var probe map[string]json.RawMessage
		if json.Unmarshal(value, &probe) != nil || caseVariants(value) {
			return // outside the invariant: duplicate or case-folded names
		}
		check(t, value)
	})
}

// caseVariants says whether value may hold a name the invariant excludes:
// one twice in an object, or one encoding/json matches case-insensitively.
// Conservatively, any object member named twice at any depth, or a name
// other than those written that folds to a field's.
func caseVariants(value []byte) bool {
	dec := json.NewDecoder(bytesReader(value))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return true
				}
				key := k.(string)
				folded := strings.ToLower(key)
				if seen[folded] || folds(key) {
					return true
				}
				seen[folded] = true
				if walk() {
					return true
				}
			}
			_, err = dec.Token()
			return err != nil
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, err = dec.Token()
			return err != nil
		}
		return false
	}
	return walk()
}

// TestMetaOfKeptObject: an item holding its object gives that object's
// metadata, read neither from the value nor by decoding.
func TestMetaOfKeptObject(t *testing.T) {
	w := &widget{Metadata: kapi.ObjectMeta{Name: "a", UID: "u", ResourceVersion: "42", Finalizers: []string{"f"}}}
	it := watch.NewItem("k", 42, w)
	got, err := Meta(it, true, func(*watch.Item) (kapi.Object, error) {
		t.Error("decoded an item that holds its object")
		return &widget{}, nil
	})
	if err != nil || got != &w.Metadata {
		t.Errorf("Meta = %p, %v; want the kept object's metadata %p", got, err, &w.Metadata)
	}
}
