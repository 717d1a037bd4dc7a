package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// An update records managedFields by comparing the objects as Go values
// only where the old one's stored value is this server's encoding of it
// (the watch cache's offered object): a value written otherwise, here
// with a member the type no longer has, is compared as JSON, as before,
// and the field manager, which cannot read it, keeps the entries as they
// were (a comparison of the objects would have recorded the write).
func TestManagedFieldsOfValueNotWritten(t *testing.T) {
	store := memory.New()
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); hs.Close() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if code, _ := call(t, hs, http.MethodGet, "/readyz", ""); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server is not ready")
		}
	}
	const path = "/apis/example.com/v1/namespaces/default/widgets"
	mustCall(t, hs, http.StatusCreated, http.MethodPost, path+"?fieldManager=a",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`)
	// put writes color as manager and returns the managers recorded.
	put := func(manager, color string) []string {
		t.Helper()
		var obj map[string]any
		if _, err := getJSON(hs, path+"/w", &obj); err != nil {
			t.Fatal(err)
		}
		obj["spec"].(map[string]any)["color"] = color
		body, _ := json.Marshal(obj)
		mustCall(t, hs, http.StatusOK, http.MethodPut, path+"/w?fieldManager="+manager, string(body))
		var got struct {
			Metadata struct {
				ManagedFields []struct{ Manager string }
			}
		}
		if _, err := getJSON(hs, path+"/w", &got); err != nil {
			t.Fatal(err)
		}
		var managers []string
		for _, e := range got.Metadata.ManagedFields {
			managers = append(managers, e.Manager)
		}
		return managers
	}
	if got := put("b", "Blue"); !slices.Contains(got, "b") {
		t.Fatalf("managers %v after b's write", got)
	}
	const key = "/widgets.example.com/default/w"
	kv, err := store.Get(context.Background(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Replace(kv.Value, []byte(`"spec":{`), []byte(`"spec":{"retired":"x",`), 1)
	if bytes.Equal(value, kv.Value) {
		t.Fatalf("no spec in %s", kv.Value)
	}
	if _, err := store.Update(context.Background(), key, value, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	if got := put("c", "Green"); slices.Contains(got, "c") {
		t.Errorf("managers %v after c's write from a value this server did not write", got)
	}
}
