package encryption_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// Secrets of the tests' keys: 32, 16 and 32 bytes.
var (
	secret1 = bytes.Repeat([]byte{1}, 32)
	secret2 = bytes.Repeat([]byte{2}, 16)
	secret3 = bytes.Repeat([]byte{3}, 32)
)

func key(name string, secret []byte) encryption.Key {
	return encryption.Key{Name: name, Secret: base64.StdEncoding.EncodeToString(secret)}
}

// config is one rule: resources, with providers in order.
func config(resources []string, providers ...encryption.ProviderConfig) encryption.Config {
	return encryption.Config{
		Kind: encryption.ConfigKind, APIVersion: encryption.ConfigAPIVersion,
		Resources: []encryption.ResourceConfig{{Resources: resources, Providers: providers}},
	}
}

func aesgcm(keys ...encryption.Key) encryption.ProviderConfig {
	return encryption.ProviderConfig{AESGCM: &encryption.KeysConfig{Keys: keys}}
}

var identity = encryption.ProviderConfig{Identity: &encryption.IdentityConfig{}}

// everything encrypts every key under k1, and reads k2 too.
var everything = config([]string{"*.*"}, aesgcm(key("k1", secret1), key("k2", secret2)))

func mustNew(t testing.TB, backend storage.Interface, c encryption.Config, opts ...encryption.Option) storage.Interface {
	t.Helper()
	s, err := encryption.New(backend, c, opts...)
	if err != nil {
		t.Fatalf("encryption.New: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Interface {
			m := memory.New()
			t.Cleanup(func() { m.Close() })
			return mustNew(t, m, everything)
		})
	})
	t.Run("bolt", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Interface {
			return mustNew(t, mustOpenBolt(t, filepath.Join(t.TempDir(), "kapi.db")), everything)
		})
	})
}

func mustOpenBolt(t testing.TB, path string) *bolt.Store {
	t.Helper()
	b, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// bare is a backend with none of the optional methods.
type bare struct{ storage.Interface }

// TestOptionalMethods: the wrapper has Close and Compact exactly when the
// backend has them, so that callers probing for them are not misled.
func TestOptionalMethods(t *testing.T) {
	m := memory.New()
	defer m.Close()
	for name, tc := range map[string]struct {
		backend    storage.Interface
		canCompact bool
		canClose   bool
	}{
		"memory": {m, true, true},
		"bare":   {bare{m}, false, false},
		"closer": {struct {
			storage.Interface
			io.Closer
		}{m, m}, false, true},
		"compactor": {struct {
			storage.Interface
			storagetest.Compactor
		}{m, m}, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, tc.backend, everything)
			if _, ok := s.(storagetest.Compactor); ok != tc.canCompact {
				t.Errorf("Compact: %v, want %v", ok, tc.canCompact)
			}
			if _, ok := s.(io.Closer); ok != tc.canClose {
				t.Errorf("Close: %v, want %v", ok, tc.canClose)
			}
		})
	}
}

// TestStoredFormat checks what reaches the backend against kube-apiserver's
// layout, decrypting it with crypto/cipher directly: prefix, key name,
// 12-byte nonce, then AES-GCM with the storage key as additional data.
func TestStoredFormat(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, everything)
	const k, plaintext = "/widgets.example.com/default/a", `{"spec":{"color":"Red"}}`
	if _, err := s.Create(ctx, k, []byte(plaintext)); err != nil {
		t.Fatal(err)
	}
	raw := mustGet(t, m, k)
	rest, ok := bytes.CutPrefix(raw, []byte("k8s:enc:aesgcm:v1:k1:"))
	if !ok {
		t.Fatalf("stored %q, want the prefix k8s:enc:aesgcm:v1:k1:", raw)
	}
	block, _ := aes.NewCipher(secret1)
	aead, _ := cipher.NewGCM(block)
	if len(rest) != 12+len(plaintext)+aead.Overhead() {
		t.Errorf("%d bytes after the prefix, want nonce (12) + %d + tag (%d)", len(rest), len(plaintext), aead.Overhead())
	}
	got, err := aead.Open(nil, rest[:12], rest[12:], []byte(k))
	if err != nil || string(got) != plaintext {
		t.Errorf("AES-GCM open with the key as additional data: %q, %v", got, err)
	}
	if _, err := aead.Open(nil, rest[:12], rest[12:], nil); err == nil {
		t.Error("the value opens without the storage key as additional data")
	}
	if kv := mustGet(t, s, k); string(kv) != plaintext {
		t.Errorf("read through the wrapper: %q", kv)
	}
	// Two writes of one value differ: the nonce is fresh.
	if _, err := s.Update(ctx, k, []byte(plaintext), 0); err != nil {
		t.Fatal(err)
	}
	if again := mustGet(t, m, k); bytes.Equal(again, raw) {
		t.Error("the same value was stored twice as the same bytes")
	}
}

func mustGet(t testing.TB, s storage.Interface, key string) []byte {
	t.Helper()
	kv, err := s.Get(context.Background(), key, 0)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return kv.Value
}

// TestResourceSelection: each resource gets the rule that names it, else
// its group's, else "*.*"; a resource no rule names is stored in clear,
// and keys outside the server's prefix too.
func TestResourceSelection(t *testing.T) {
	ctx := t.Context()
	c, err := encryption.ParseConfig([]byte(`
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [events]
  providers: [{identity: {}}]
- resources: [widgets.example.com, secrets]
  providers:
  - aesgcm: {keys: [{name: w, secret: ` + base64.StdEncoding.EncodeToString(secret1) + `}]}
- resources: ['*.apps']
  providers:
  - aesgcm: {keys: [{name: apps, secret: ` + base64.StdEncoding.EncodeToString(secret2) + `}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, c, encryption.WithKeyPrefix("/registry/"))
	for _, tc := range []struct{ key, stored string }{
		{"/registry/widgets.example.com/default/a", "k8s:enc:aesgcm:v1:w:"},
		{"/registry/secrets/default/a", "k8s:enc:aesgcm:v1:w:"},
		{"/registry/deployments.apps/default/a", "k8s:enc:aesgcm:v1:apps:"},
		{"/registry/events/default/a", "{"},
		{"/registry/gadgets.example.com/default/a", "{"},
		{"/registry/widgets.other.com/default/a", "{"},
		{"/widgets.example.com/default/a", "{"}, // not under /registry/
	} {
		t.Run(tc.key, func(t *testing.T) {
			if _, err := s.Create(ctx, tc.key, []byte(`{"x":1}`)); err != nil {
				t.Fatal(err)
			}
			if raw := mustGet(t, m, tc.key); !bytes.HasPrefix(raw, []byte(tc.stored)) {
				t.Errorf("stored %q, want it to begin %q", raw, tc.stored)
			}
			if got := mustGet(t, s, tc.key); string(got) != `{"x":1}` {
				t.Errorf("read %q", got)
			}
		})
	}
}

// TestRotation walks kube's rotation: a new key added second (read only),
// then first (writes), Rewrite, then the old key removed.
func TestRotation(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	old, both, next := aesgcm(key("old", secret1)), aesgcm(key("new", secret3), key("old", secret1)), aesgcm(key("new", secret3))
	widgets := []string{"widgets.example.com"}

	s := mustNew(t, m, config(widgets, old))
	for i := range 1200 { // more than one page of Rewrite
		if _, err := s.Create(ctx, fmt.Sprintf("/widgets.example.com/ns/w%04d", i), fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Create(ctx, "/widgets.example.com/ns/plain", []byte(`{"n":"plain"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, "/widgets.example.com/ns/lost", []byte("k8s:enc:aesgcm:v1:gone:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")); err != nil {
		t.Fatal(err)
	}

	s = mustNew(t, m, config(widgets, both, identity))
	if got := mustGet(t, s, "/widgets.example.com/ns/w0007"); string(got) != `{"n":7}` {
		t.Fatalf("under the old key, read with both: %q", got)
	}
	res, err := encryption.Rewrite(ctx, s, "/widgets.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if want := (encryption.RewriteResult{Rewritten: 1201, Unreadable: 1}); res != want {
		t.Errorf("Rewrite: %+v, want %+v", res, want)
	}
	if res, err := encryption.Rewrite(ctx, s, "/widgets.example.com/"); err != nil || res != (encryption.RewriteResult{Current: 1201, Unreadable: 1}) {
		t.Errorf("second Rewrite: %+v, %v; want everything current", res, err)
	}

	s = mustNew(t, m, config(widgets, next))
	list, err := s.List(ctx, "/widgets.example.com/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range list.Items {
		raw := mustGet(t, m, kv.Key)
		if kv.Key == "/widgets.example.com/ns/lost" {
			if !bytes.Equal(kv.Value, raw) {
				t.Errorf("unreadable value read as %q, want it as stored", kv.Value)
			}
			continue
		}
		if !bytes.HasPrefix(raw, []byte("k8s:enc:aesgcm:v1:new:")) {
			t.Errorf("%s stored as %.30q after Rewrite", kv.Key, raw)
		}
		var v struct{ N any }
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			t.Errorf("%s read with the new key only: %q, %v", kv.Key, kv.Value, err)
		}
	}
	if len(list.Items) != 1202 {
		t.Errorf("%d items", len(list.Items))
	}
}

// TestRewriteRaces: a write racing with Rewrite wins, and Rewrite counts
// the value as it finds it when it reads it again.
func TestRewriteRaces(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	widgets := []string{"widgets.example.com"}
	old := mustNew(t, m, config(widgets, aesgcm(key("old", secret1))))
	if _, err := old.Create(ctx, "/widgets.example.com/ns/a", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Create(ctx, "/widgets.example.com/ns/b", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	rotated := mustNew(t, m, config(widgets, aesgcm(key("new", secret3), key("old", secret1))))
	racing := &racingStore{Interface: m, onUpdate: func(key string) {
		switch key {
		case "/widgets.example.com/ns/a": // updated under the new key meanwhile
			if _, err := rotated.Update(ctx, key, []byte(`{"v":2}`), 0); err != nil {
				t.Error(err)
			}
		case "/widgets.example.com/ns/b": // deleted meanwhile
			if _, err := m.Delete(ctx, key, 0); err != nil {
				t.Error(err)
			}
		}
	}}
	s := mustNew(t, racing, config(widgets, aesgcm(key("new", secret3), key("old", secret1))))
	res, err := encryption.Rewrite(ctx, s, "/")
	if err != nil {
		t.Fatal(err)
	}
	if want := (encryption.RewriteResult{Current: 1}); res != want {
		t.Errorf("Rewrite: %+v, want %+v", res, want)
	}
	if got := mustGet(t, rotated, "/widgets.example.com/ns/a"); string(got) != `{"v":2}` {
		t.Errorf("the racing update was lost: %q", got)
	}
}

// racingStore runs onUpdate before each Update's first attempt at a key.
type racingStore struct {
	storage.Interface
	onUpdate func(key string)
	seen     map[string]bool
}

func (r *racingStore) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[key] {
		r.seen[key] = true
		r.onUpdate(key)
	}
	return r.Interface.Update(ctx, key, value, expect)
}

// TestUnreadable: a value no provider opens — its key removed, altered,
// moved under another key, or plaintext without identity — reaches
// readers as a value that does not decode, on every read path, and can be
// deleted.
func TestUnreadable(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, config([]string{"*.*"}, aesgcm(key("k1", secret1))))
	value := []byte(`{"spec":{"color":"Red"}}`)
	for _, k := range []string{"/w/a", "/w/b"} {
		if _, err := s.Create(ctx, k, value); err != nil {
			t.Fatal(err)
		}
	}
	sealedA, sealedB := mustGet(t, m, "/w/a"), mustGet(t, m, "/w/b")
	altered := bytes.Clone(sealedA)
	altered[len(altered)-1] ^= 1

	rev, _ := m.Revision(ctx)
	events, err := s.Watch(ctx, "/w/", rev)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, key string
		stored    []byte
		wantRead  []byte // nil: the stored bytes
	}{
		{"altered", "/w/altered", altered, nil},
		{"moved", "/w/moved", sealedB, nil}, // b's value under another key
		{"unknown key", "/w/unknown", []byte("k8s:enc:aesgcm:v1:k9:" + strings.Repeat("x", 40)), nil},
		{"other provider", "/w/other", []byte("k8s:enc:secretbox:v1:k1:" + strings.Repeat("x", 40)), nil},
		{"short", "/w/short", []byte("k8s:enc:aesgcm:v1:k1:"), nil},
		{"plaintext", "/w/plain", value, []byte{}},
	}
	for _, tc := range cases {
		if _, err := m.Create(ctx, tc.key, tc.stored); err != nil {
			t.Fatal(err)
		}
		if tc.wantRead == nil {
			tc.wantRead = tc.stored
		}
		check := func(how string, got []byte) {
			t.Helper()
			var v any
			if !bytes.Equal(got, tc.wantRead) || json.Unmarshal(got, &v) == nil {
				t.Errorf("%s: %s read %q, want %q, which does not decode", tc.name, how, got, tc.wantRead)
			}
		}
		check("Get", mustGet(t, s, tc.key))
		list, err := s.List(ctx, tc.key, storage.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("List: %+v, %v", list, err)
		}
		check("List", list.Items[0].Value)
		ev := <-events
		check("Watch", ev.Value)
		deleted, err := s.Delete(ctx, tc.key, 0)
		if err != nil {
			t.Errorf("%s: Delete: %v", tc.name, err)
		}
		check("Delete", deleted.Value)
		ev = <-events
		if ev.Type != storage.Delete {
			t.Fatalf("%s: event %v, want the deletion", tc.name, ev.Type)
		}
		check("Watch (deleted)", ev.Value)
		check("Watch (deleted, Prev)", ev.Prev)
	}
	if got := mustGet(t, s, "/w/a"); !bytes.Equal(got, value) {
		t.Errorf("a readable value beside them: %q", got)
	}
}

// TestWatchDecrypts: events carry plaintext, Prev included, and a watch
// ends when its context does, with no event after.
func TestWatchDecrypts(t *testing.T) {
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, everything)
	ctx, cancel := context.WithCancel(t.Context())
	events, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "/k", []byte("v2"), 0); err != nil {
		t.Fatal(err)
	}
	if ev := <-events; string(ev.Value) != "v1" || ev.Prev != nil {
		t.Errorf("create: %q (prev %q)", ev.Value, ev.Prev)
	}
	if ev := <-events; string(ev.Value) != "v2" || string(ev.Prev) != "v1" {
		t.Errorf("update: %q (prev %q)", ev.Value, ev.Prev)
	}
	cancel()
	for ev := range events {
		t.Errorf("event after cancel: %+v", ev)
	}
}

func TestNewErrors(t *testing.T) {
	m := memory.New()
	defer m.Close()
	for _, tc := range []struct {
		name string
		opts []encryption.Option
		want string
	}{
		{"key prefix", []encryption.Option{encryption.WithKeyPrefix("registry")}, `key prefix "registry"`},
		{"nil cipher", []encryption.Option{encryption.WithCipher("secretbox", nil)}, `WithCipher("secretbox", nil)`},
		{"unknown provider", []encryption.Option{encryption.WithCipher("kms", encryption.NewAESGCM)}, `WithCipher("kms"): the providers with keys are aesgcm, secretbox and aescbc`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := encryption.New(m, everything, tc.opts...)
			if !errors.Is(err, encryption.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want ErrConfig mentioning %s", err, tc.want)
			}
		})
	}
	if _, err := encryption.New(nil, everything); !errors.Is(err, encryption.ErrConfig) {
		t.Errorf("New(nil): %v", err)
	}
	if _, err := encryption.Rewrite(t.Context(), m, "/"); !errors.Is(err, encryption.ErrConfig) {
		t.Errorf("Rewrite of an unwrapped store: %v", err)
	}
}
