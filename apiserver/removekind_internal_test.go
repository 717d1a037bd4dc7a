package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
)

// thing is a kind registered while serving.
type thing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	Spec            string `json:"spec,omitempty"`
}

// A kind removed gives back what its kept lists held in the server's list
// budget (its runs and its watches' initial frames), so that the budget
// counts only the lists of kinds served.
func TestRemovedKindLeavesTheListBudget(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	do := func(method, path, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code
	}
	do("GET", "/apis", "") // serving
	if err := RegisterKind[thing](s, Resource[thing]{Group: "example.com", Version: "v1", Kind: "Thing", Plural: "things"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if code := do("POST", "/apis/example.com/v1/things", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"`+name+`"},"spec":"x"}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	for range 2 { // the second list keeps its runs
		if code := do("GET", "/apis/example.com/v1/things", ""); code != http.StatusOK {
			t.Fatalf("list: %d", code)
		}
	}
	if s.lists.Held() == 0 {
		t.Fatal("the lists of things are not counted in the budget")
	}
	if err := s.Remove("example.com", "Thing"); err != nil {
		t.Fatal(err)
	}
	if n := s.lists.Held(); n != 0 {
		t.Errorf("the budget still counts %d bytes of a removed kind's lists", n)
	}
}
