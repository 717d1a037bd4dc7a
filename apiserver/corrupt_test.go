package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A stored widget that no longer decodes (its value truncated while no
// server ran) is neither hidden nor stuck: reads name it, lists say which
// objects are unreadable, and a DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential removes it, for a caller
// authorized for unsafe-delete-ignore-read-errors too, as kube-apiserver.
func TestCorruptObject(t *testing.T) {
	const key = "/widgets.example.com/default/bad"
	t.Run("memory", func(t *testing.T) {
		store := memory.New()
		testCorruptObject(t, func() storage.Interface { return store }, func() {
			kv, err := store.Get(context.Background(), key, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Update(context.Background(), key, kv.Value[:len(kv.Value)/2], 0); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("bolt", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "kapi.db")
		var store *bolt.Store
		open := func() storage.Interface {
			var err error
			if store, err = bolt.Open(path); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			return store
		}
		testCorruptObject(t, open, func() {
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			truncateBolt(t, path, key)
		})
	})
}

// truncateBolt cuts the latest stored value of key in half, in the bolt
// file itself: its history bucket holds each version under the key, 0x00
// 0x01 and the revision, as a flags byte, the create revision, the value.
func truncateBolt(t *testing.T, path, key string) {
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("history"))
		prefix := append([]byte(key), 0, 1)
		var last, record []byte
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			last, record = bytes.Clone(k), bytes.Clone(v)
		}
		if last == nil {
			return fmt.Errorf("no version of %s in the file", key)
		}
		const header = 9
		return b.Put(last, record[:header+(len(record)-header)/2])
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testCorruptObject(t *testing.T, open func() storage.Interface, corrupt func()) {
	var allowUnsafe atomic.Bool
	authz := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		if a.Verb == "unsafe-delete-ignore-read-errors" && !allowUnsafe.Load() {
			return apiserver.DecisionDeny, "the test says no", nil
		}
		return apiserver.DecisionAllow, "", nil
	})
	start := func(store storage.Interface) (*httptest.Server, func()) {
		api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithAuthorization(authz),
			apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		if err := widgetapi.Register(api); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(api)
		stop := func() { api.Close(); hs.Close() }
		t.Cleanup(stop)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if code, _ := call(t, hs, http.MethodGet, "/readyz", ""); code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the server is not ready")
			}
		}
		return hs, stop
	}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	widget := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q},"spec":{"color":"Red"}}`, name)
	}
	hs, stop := start(open())
	for _, name := range []string{"bad", "good"} {
		mustCall(t, hs, http.StatusCreated, http.MethodPost, widgets, widget(name))
	}
	// A dependent of the widget that will be unreadable: the collector
	// must not take an owner it cannot read for one that is gone.
	var bad struct{ Metadata kapi.ObjectMeta }
	if _, err := getJSON(hs, widgets+"/bad", &bad); err != nil {
		t.Fatal(err)
	}
	mustCall(t, hs, http.StatusCreated, http.MethodPost, widgets, fmt.Sprintf(
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"child","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"bad","uid":%q}]},"spec":{"color":"Red"}}`,
		bad.Metadata.UID))
	mustCall(t, hs, http.StatusCreated, http.MethodPost, "/apis/example.com/v1/namespaces/other/widgets", widget("elsewhere"))
	stop()
	corrupt()
	hs, _ = start(open())

	const key = "/widgets.example.com/default/bad"
	var internal kapi.Status
	t.Run("get", func(t *testing.T) {
		st := mustCall(t, hs, http.StatusInternalServerError, http.MethodGet, widgets+"/bad", "")
		prefix := "Internal error occurred: StorageError: corrupt object, Code: 7, Key: " + key + ", ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision="
		if st.Reason != kapi.StatusReasonInternalError || !strings.HasPrefix(st.Message, prefix) || !strings.HasSuffix(st.Message, ": unexpected end of JSON input") {
			t.Fatalf("GET of an unreadable object: %s %q, want InternalError %q…", st.Reason, st.Message, prefix)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || "Internal error occurred: "+st.Details.Causes[0].Message != st.Message {
			t.Fatalf("the cause repeats the error, as kube-apiserver's: %+v", st.Details)
		}
		internal = st
		mustCall(t, hs, http.StatusOK, http.MethodGet, widgets+"/good", "")
	})
	t.Run("list", func(t *testing.T) {
		for _, path := range []string{widgets, "/apis/example.com/v1/widgets", widgets + "?limit=1"} {
			st := mustCall(t, hs, http.StatusInternalServerError, http.MethodGet, path, "")
			want := "failed to read one or more widgets.example.com from the storage: " + strings.TrimPrefix(internal.Message, "Internal error occurred: ")
			if st.Reason != kapi.StatusReasonStoreReadError || st.Message != want {
				t.Fatalf("LIST %s: %s %q, want StorageReadError %q", path, st.Reason, st.Message, want)
			}
			d := st.Details
			if d == nil || d.Name != "list" || d.Kind != "widgets" || d.Group != "example.com" || len(d.Causes) != 1 ||
				d.Causes[0].Field != key || d.Causes[0].Type != kapi.CauseTypeUnexpectedServerError {
				t.Fatalf("LIST %s: details %+v, want one UnexpectedServerResponse cause naming %s", path, d, key)
			}
		}
		mustCall(t, hs, http.StatusOK, http.MethodGet, "/apis/example.com/v1/namespaces/other/widgets", "")
		// Deleting the collection would list it first: nothing goes.
		mustCall(t, hs, http.StatusInternalServerError, http.MethodDelete, widgets, "")
		mustCall(t, hs, http.StatusOK, http.MethodGet, widgets+"/good", "")
	})
	// A watch gets the list's answer, before any event: a watch-list
	// informer must not take the state without the unreadable object for
	// the whole collection (kube-apiserver's cacher cannot initialize over
	// a corrupt object and refuses every watch of the resource until then).
	t.Run("watch", func(t *testing.T) {
		list := mustCall(t, hs, http.StatusInternalServerError, http.MethodGet, widgets, "")
		for _, query := range []string{
			"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
			"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true",
			"?watch=true",
			"?watch=true&resourceVersion=0",
			"?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=1",
			"?watch=true&resourceVersion=1",
		} {
			for _, path := range []string{widgets, "/apis/example.com/v1/widgets"} {
				// timeoutSeconds: a watch that is served ends, and fails the test.
				st := mustCall(t, hs, http.StatusInternalServerError, http.MethodGet, path+query+"&timeoutSeconds=1", "")
				if st.Reason != list.Reason || st.Message != list.Message || st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0] != list.Details.Causes[0] {
					t.Fatalf("WATCH %s%s: %s %q %+v, want the list's %s %q %+v", path, query, st.Reason, st.Message, st.Details, list.Reason, list.Message, list.Details)
				}
			}
		}
		mustCall(t, hs, http.StatusOK, http.MethodGet, "/apis/example.com/v1/namespaces/other/widgets?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1", "")
	})
	t.Run("create", func(t *testing.T) {
		mustCall(t, hs, http.StatusConflict, http.MethodPost, widgets, widget("bad"))
	})
	t.Run("delete", func(t *testing.T) {
		st := mustCall(t, hs, http.StatusInternalServerError, http.MethodDelete, widgets+"/bad", `{"propagationPolicy":"Background"}`)
		if st.Message != internal.Message {
			t.Fatalf("an ordinary DELETE: %q, want %q", st.Message, internal.Message)
		}
	})
	const unsafe = `"ignoreStoreReadErrorWithClusterBreakingPotential":true`
	t.Run("unsafe delete with other options", func(t *testing.T) {
		for _, tc := range []struct{ body, query, want string }{
			{`{` + unsafe + `,"propagationPolicy":"Orphan"}`, "", `ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy`},
			{`{` + unsafe + `}`, "?gracePeriodSeconds=0&orphanDependents=false", `[ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .orphanDependents, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds]`},
			{`{` + unsafe + `,"preconditions":{"uid":"x"}}`, "", `ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions`},
		} {
			st := mustCall(t, hs, http.StatusUnprocessableEntity, http.MethodDelete, widgets+"/bad"+tc.query, tc.body)
			if want := `DeleteOptions.meta.k8s.io "" is invalid: ` + tc.want; st.Message != want {
				t.Errorf("%s%s: %q,\nwant %q", tc.body, tc.query, st.Message, want)
			}
		}
		st := mustCall(t, hs, http.StatusUnprocessableEntity, http.MethodDelete, widgets, `{`+unsafe+`}`)
		if want := `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`; st.Message != want {
			t.Errorf("deletecollection: %q, want %q", st.Message, want)
		}
	})
	t.Run("unsafe delete not authorized", func(t *testing.T) {
		st := mustCall(t, hs, http.StatusForbidden, http.MethodDelete, widgets+"/bad", `{`+unsafe+`}`)
		if want := `widgets.example.com "bad" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: the test says no`; st.Message != want {
			t.Fatalf("%q, want %q", st.Message, want)
		}
	})
	allowUnsafe.Store(true)
	t.Run("unsafe delete of a readable object", func(t *testing.T) {
		st := mustCall(t, hs, http.StatusConflict, http.MethodDelete, widgets+"/good", `{`+unsafe+`}`)
		want := `Operation cannot be fulfilled on widgets.example.com "good": StorageError: invalid object, Code: 4, Key: /widgets.example.com/default/good, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`
		if st.Message != want {
			t.Fatalf("%q, want %q", st.Message, want)
		}
		mustCall(t, hs, http.StatusNotFound, http.MethodDelete, widgets+"/nothing", `{`+unsafe+`}`)
	})
	t.Run("unsafe delete", func(t *testing.T) {
		mustCall(t, hs, http.StatusOK, http.MethodGet, widgets+"/child", "")
		mustCall(t, hs, http.StatusOK, http.MethodDelete, widgets+"/bad?dryRun=All", `{`+unsafe+`}`)
		mustCall(t, hs, http.StatusInternalServerError, http.MethodGet, widgets+"/bad", "")
		st := mustCall(t, hs, http.StatusOK, http.MethodDelete, widgets+"/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
		if st.Status != kapi.StatusSuccess || st.Details == nil || st.Details.Name != "bad" || st.Details.Kind != "Widget" {
			t.Fatalf("the answer of an unsafe delete: %+v", st)
		}
		mustCall(t, hs, http.StatusNotFound, http.MethodGet, widgets+"/bad", "")
		mustCall(t, hs, http.StatusOK, http.MethodGet, widgets, "")
		mustCall(t, hs, http.StatusCreated, http.MethodPost, widgets, widget("bad"))
		// Its dependent is the collector's, as that of any owner gone.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if code, _ := call(t, hs, http.MethodGet, widgets+"/child", ""); code == http.StatusNotFound {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the dependent of the deleted unreadable object was not collected")
			}
		}
	})
}

func getJSON(hs *httptest.Server, path string, into any) (int, error) {
	resp, err := hs.Client().Get(hs.URL + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(into)
}

func call(t *testing.T, hs *httptest.Server, method, path, body string) (int, kapi.Status) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st kapi.Status
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &st)
	return resp.StatusCode, st
}

func mustCall(t *testing.T, hs *httptest.Server, code int, method, path, body string) kapi.Status {
	t.Helper()
	got, st := call(t, hs, method, path, body)
	if got != code {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, got, code, st.Message)
	}
	return st
}
