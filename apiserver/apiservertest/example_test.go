package apiservertest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// A test of a user's own code starts a kapi server with the user's
// resources and points a client at srv.URL (kubectl's --server,
// client-go's rest.Config.Host). The server stops when the test ends.
func ExampleNew() {
	testWidgets := func(t *testing.T) {
		srv := apiservertest.New(t, widgetapi.Register)

		resp, err := srv.Client().Get(srv.URL + "/apis/example.com/v1/namespaces/default/widgets")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || list.Kind != "WidgetList" || len(list.Items) != 0 {
			t.Errorf("got %d %s with %d items", resp.StatusCode, list.Kind, len(list.Items))
		}
	}
	_ = testWidgets // in a real test file: func TestWidgets(t *testing.T) { ... }
}

// TestExampleNew runs the example's test body, so the example stays true.
func TestExampleNew(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register)
	resp, err := srv.Client().Get(srv.URL + "/apis/example.com/v1/namespaces/default/widgets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
}
