package secretbox_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	naclsecretbox "golang.org/x/crypto/nacl/secretbox"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/encryption/secretbox"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var secret = bytes.Repeat([]byte{7}, 32)

func config(keys ...encryption.Key) encryption.Config {
	return encryption.Config{
		Kind: encryption.ConfigKind, APIVersion: encryption.ConfigAPIVersion,
		Resources: []encryption.ResourceConfig{{
			Resources: []string{"*.*"},
			Providers: []encryption.ProviderConfig{{Secretbox: &encryption.KeysConfig{Keys: keys}}},
		}},
	}
}

func key(name string, secret []byte) encryption.Key {
	return encryption.Key{Name: name, Secret: base64.StdEncoding.EncodeToString(secret)}
}

func mustNew(t testing.TB, backend storage.Interface, c encryption.Config) storage.Interface {
	t.Helper()
	s, err := encryption.New(backend, c, encryption.WithCipher("secretbox", secretbox.New))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		m := memory.New()
		t.Cleanup(func() { m.Close() })
		return mustNew(t, m, config(key("k1", secret), key("k2", bytes.Repeat([]byte{8}, 32))))
	})
}

// TestStoredFormat opens what reaches the backend with x/crypto directly:
// kube-apiserver's layout, prefix, key name, 24-byte nonce, box.
func TestStoredFormat(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, config(key("k1", secret)))
	const k, plaintext = "/secrets/default/a", `{"data":{"password":"hunter2"}}`
	if _, err := s.Create(ctx, k, []byte(plaintext)); err != nil {
		t.Fatal(err)
	}
	raw, err := m.Get(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := bytes.CutPrefix(raw.Value, []byte("k8s:enc:secretbox:v1:k1:"))
	if !ok || len(rest) != 24+naclsecretbox.Overhead+len(plaintext) {
		t.Fatalf("stored %q", raw.Value)
	}
	var nonce [24]byte
	var key [32]byte
	copy(nonce[:], rest)
	copy(key[:], secret)
	if got, ok := naclsecretbox.Open(nil, rest[24:], &nonce, &key); !ok || string(got) != plaintext {
		t.Errorf("secretbox.Open: %q, %v", got, ok)
	}
	if got, err := s.Get(ctx, k, 0); err != nil || string(got.Value) != plaintext {
		t.Errorf("read through the wrapper: %q, %v", got.Value, err)
	}
}

func TestKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := secretbox.New(make([]byte, n)); err == nil {
			t.Errorf("a %d-byte key is accepted", n)
		}
	}
	m := memory.New()
	defer m.Close()
	_, err := encryption.New(m, config(key("k", make([]byte, 16))), encryption.WithCipher("secretbox", secretbox.New))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("resources[0].providers[0]: secretbox.keys[0].secret: secret is not of the expected length, got 16, expected one of [32]")) {
		t.Errorf("New: %v", err)
	}
}

// FuzzOpen: the value decoder. Any bytes opened under a key are a
// plaintext or an error, never a panic, and only what Seal wrote opens.
func FuzzOpen(f *testing.F) {
	c, err := secretbox.New(secret)
	if err != nil {
		f.Fatal(err)
	}
	sealed, _ := c.Seal(nil, []byte("plaintext"), nil)
	f.Add(sealed, []byte("plaintext"))
	f.Add(sealed[:24], []byte{})
	f.Add([]byte{}, []byte(nil))
	f.Fuzz(func(t *testing.T, value, plaintext []byte) {
		if got, err := c.Open(nil, value, nil); err == nil && len(value) != 24+naclsecretbox.Overhead+len(got) {
			t.Fatalf("%q opened as %q", value, got)
		}
		sealed, err := c.Seal([]byte("prefix"), plaintext, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Open([]byte("dst"), sealed[len("prefix"):], nil)
		if err != nil || !bytes.Equal(got, append([]byte("dst"), plaintext...)) {
			t.Fatalf("round trip of %q: %q, %v", plaintext, got, err)
		}
	})
}

// TestOtherSecret: a value sealed under a secret reads as unreadable under
// another secret of the same key name.
func TestOtherSecret(t *testing.T) {
	m := memory.New()
	defer m.Close()
	s := mustNew(t, m, config(key("k1", secret)))
	ctx := context.Background()
	if _, err := s.Create(ctx, "/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	other := mustNew(t, m, config(key("k1", bytes.Repeat([]byte{9}, 32))))
	got, err := other.Get(ctx, "/a", 0)
	if err != nil || !bytes.HasPrefix(got.Value, []byte("k8s:enc:secretbox:v1:k1:")) {
		t.Errorf("read under another secret of the same name: %q, %v; want the stored value, unreadable", got.Value, err)
	}
}
