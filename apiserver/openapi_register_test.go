package apiserver_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
)

// Register builds the document: it must return for these types too.
func TestRegisterRecursiveTypes(t *testing.T) {
	s, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := within(t, func() error {
		return apiserver.Register(s, apiserver.Resource[testRecursiveKinds]{Group: "example.com", Version: "v1", Kind: "Rec", Plural: "recs"})
	}); err != nil {
		t.Errorf("Register of recursive map, slice and array types: %v", err)
	}
	if err := within(t, func() error {
		return apiserver.Register(s, apiserver.Resource[testPointerCycle]{Group: "example.com", Version: "v1", Kind: "P", Plural: "ps"})
	}); err == nil {
		t.Errorf("Register of a pointer type without end succeeded")
	}
}

type (
	testTreeMap   map[string]testTreeMap
	testSelfList  []testSelfList
	testArrayTree [2]*testArrayTree
	testMapA      map[string]testListB
	testListB     []testMapA
	testPP        *testPP
)

type testRecursiveKinds struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Tree            testTreeMap   `json:"tree"`
	List            testSelfList  `json:"list"`
	Array           testArrayTree `json:"array"`
	A               testMapA      `json:"a"`
	B               *testListB    `json:"b,omitempty"`
}

type testPointerCycle struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	P               testPP `json:"p,omitempty"`
}

// within runs f, failing the test rather than hanging it if f does not
// return in a few seconds.
func within[T any](t *testing.T, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("did not return in 10s")
		panic("not reached")
	}
}
