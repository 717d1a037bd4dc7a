package apiserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
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
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const path = "/apis/example.com/v1/namespaces/default/widgets"
	c.do(http.MethodPost, path+"?fieldManager=a", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`).mustCode(t, http.StatusCreated)
	// put writes color as manager and returns the managers recorded.
	put := func(manager, color string) []string {
		t.Helper()
		var obj map[string]any
		c.get(path+"/w").mustCode(t, http.StatusOK).into(t, &obj)
		obj["spec"].(map[string]any)["color"] = color
		c.do(http.MethodPut, path+"/w?fieldManager="+manager, obj).mustCode(t, http.StatusOK)
		var got struct {
			Metadata struct {
				ManagedFields []struct{ Manager string }
			}
		}
		c.get(path+"/w").mustCode(t, http.StatusOK).into(t, &got)
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
