package encryption_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
)

// What only the widget's spec holds: none of it may reach the disk.
var secrets = []string{"zebra-confidential-7731", "sekret-port"}

const widgetJSON = `{"apiVersion":"example.com/v1","kind":"Widget",
	"metadata":{"name":"w1","namespace":"default"},
	"spec":{"color":"Red","selector":{"app":"zebra-confidential-7731"},"ports":[{"name":"sekret-port","port":8443}]}}`

// TestBoltFileHasNoPlaintext drives the example server over HTTP on an
// encrypted bolt file: the widget reads back whole through the API, and
// the file holds none of its spec. The same run without encryption finds
// the spec in the file, so the search can fail.
func TestBoltFileHasNoPlaintext(t *testing.T) {
	for _, tc := range []struct {
		name    string
		encrypt bool
	}{{"encrypted", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kapi.db")
			db := mustOpenBolt(t, path) // closed after the server
			var store storage.Interface = db
			if tc.encrypt {
				c := config([]string{"widgets.example.com"}, aesgcm(key("key1", secret1)))
				store = mustNew(t, db, c)
			}
			srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
			base := srv.URL + "/apis/example.com/v1/namespaces/default/widgets"
			do(t, srv.Client(), "POST", base, "application/json", widgetJSON, http.StatusCreated)
			// A second version, so that history holds two.
			do(t, srv.Client(), "PATCH", base+"/w1", "application/merge-patch+json", `{"spec":{"size":3}}`, http.StatusOK)
			got := do(t, srv.Client(), "GET", base+"/w1", "", "", http.StatusOK)
			list := do(t, srv.Client(), "GET", base+"?resourceVersion=0", "", "", http.StatusOK)
			for _, s := range secrets {
				if !strings.Contains(got, s) || !strings.Contains(list, s) {
					t.Errorf("%s is not in what the API serves:\n%s\n%s", s, got, list)
				}
			}
			// Straight from the store too, not only the watch cache.
			kv, err := store.Get(context.Background(), "/widgets.example.com/default/w1", 0)
			if err != nil || !bytes.Contains(kv.Value, []byte(secrets[0])) {
				t.Errorf("Get through the wrapper: %q, %v", kv.Value, err)
			}

			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if found := bytes.Contains(file, []byte(s)); found == tc.encrypt {
					t.Errorf("%q in the file: %v", s, found)
				}
			}
			if n := bytes.Count(file, []byte("k8s:enc:aesgcm:v1:key1:")); tc.encrypt && n < 2 {
				t.Errorf("%d encrypted values in the file, want both versions of the widget", n)
			}
		})
	}
}

func do(t *testing.T, client *http.Client, method, url, contentType, body string, want int) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	return string(b)
}

// TestCorruptWidget: a widget whose key has left the configuration is a
// corrupt object to the API: a GET or list of it fails naming its key, and
// a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential removes it.
func TestCorruptWidget(t *testing.T) {
	db := mustOpenBolt(t, filepath.Join(t.TempDir(), "kapi.db")) // closed after the server
	ctx := context.Background()
	old := mustNew(t, db, config([]string{"widgets.example.com"}, aesgcm(key("old", secret1))))
	if _, err := old.Create(ctx, "/widgets.example.com/default/lost", []byte(strings.Replace(widgetJSON, `"w1"`, `"lost"`, 1))); err != nil {
		t.Fatal(err)
	}
	store := mustNew(t, db, config([]string{"widgets.example.com"}, aesgcm(key("new", secret3))))
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	base := srv.URL + "/apis/example.com/v1/namespaces/default/widgets"
	do(t, srv.Client(), "POST", base, "application/json", widgetJSON, http.StatusCreated)

	// A value that no longer decrypts is a corrupt object: reads name it,
	// and only an unsafe delete removes it.
	got := do(t, srv.Client(), "GET", base, "", "", http.StatusInternalServerError)
	if !strings.Contains(got, `"reason":"StorageReadError"`) || !strings.Contains(got, `"field":"/widgets.example.com/default/lost"`) {
		t.Errorf("list with a corrupt widget: %s", got)
	}
	got = do(t, srv.Client(), "GET", base+"/lost", "", "", http.StatusInternalServerError)
	if !strings.Contains(got, "corrupt object") || !strings.Contains(got, "/widgets.example.com/default/lost") {
		t.Errorf("GET of the corrupt widget: %s", got)
	}
	do(t, srv.Client(), "DELETE", base+"/lost", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`, http.StatusOK)
	got = do(t, srv.Client(), "GET", base, "", "", http.StatusOK)
	if !strings.Contains(got, `"name":"w1"`) || strings.Contains(got, `"name":"lost"`) {
		t.Errorf("list after the unsafe delete: %s", got)
	}
}
