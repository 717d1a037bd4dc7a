package encryption_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
)

// FuzzParseConfig: any file is a Config or an ErrConfig, never a panic;
// a Config is a store or an ErrConfig; a store returns what it was given.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(kubeExample))
	f.Add([]byte(exampleConfig))
	f.Add([]byte(`{"kind":"EncryptionConfiguration","apiVersion":"apiserver.config.k8s.io/v1","resources":[{"resources":["*.*"],"providers":[{"identity":{}}]}]}`))
	f.Add([]byte("kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nresources: [{resources: ['*.', a.b, '*.c'], providers: [{aesgcm: {keys: [{name: 'a:b', secret: c2VjcmV0IGlzIHNlY3VyZQ==}]}}]}]"))
	f.Add([]byte("kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nresources: [{resources: [a], providers: [{kms: {name: x, cachesize: 3}}]}]"))
	f.Add([]byte("&a [*a]"))
	m := memory.New()
	f.Cleanup(func() { m.Close() })
	f.Fuzz(func(t *testing.T, file []byte) {
		c, err := encryption.ParseConfig(file)
		if err != nil {
			if !errors.Is(err, encryption.ErrConfig) {
				t.Fatalf("ParseConfig: %v is not ErrConfig", err)
			}
			return
		}
		s, err := encryption.New(m, c, encryption.WithCipher("secretbox", encryption.NewAESGCM))
		if err != nil {
			if !errors.Is(err, encryption.ErrConfig) {
				t.Fatalf("New: %v is not ErrConfig", err)
			}
			return
		}
		for _, key := range []string{"/a/x", "/a.b/x", "/secrets/x", "/widgets.example.com/ns/x"} {
			want := []byte(`{"key":"` + key + `"}`)
			if _, err := s.Update(context.Background(), key, want, 0); err != nil {
				if _, err := s.Create(context.Background(), key, want); err != nil {
					t.Fatal(err)
				}
			}
			if got := mustGet(t, s, key); !bytes.Equal(got, want) {
				t.Fatalf("%s: wrote %q, read %q", key, want, got)
			}
		}
	})
}

// FuzzRead: the value decoder. Whatever the backend holds, a read returns
// its plaintext, the stored bytes if they are encrypted and do not open,
// or an empty value; and what is written reads back.
func FuzzRead(f *testing.F) {
	m := memory.New()
	f.Cleanup(func() { m.Close() })
	c := config([]string{"widgets.example.com"}, aesgcm(key("k1", secret1), key("k1:k2", secret2)), identity)
	c.Resources = append(c.Resources, encryption.ResourceConfig{Resources: []string{"secrets"}, Providers: []encryption.ProviderConfig{aesgcm(key("k1", secret1))}})
	s := mustNew(f, m, c)
	keys := []string{"/widgets.example.com/ns/a", "/secrets/ns/a", "/other/a", "/"}
	ctx := context.Background()
	for _, k := range keys {
		if _, err := s.Create(ctx, k, []byte("{}")); err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(k)), mustGet(f, m, k), []byte("{}"))
	}
	f.Add(uint8(0), []byte("k8s:enc:aesgcm:v1:k1:"), []byte(nil))
	f.Add(uint8(0), []byte("k8s:enc:aesgcm:v1:k1:k2:0123456789ab"), []byte("k8s:enc:"))
	f.Add(uint8(1), []byte("k8s:enc:secretbox:v1:k1:0123456789ab"), []byte{0xff})
	f.Fuzz(func(t *testing.T, which uint8, stored, plaintext []byte) {
		k := keys[int(which)%len(keys)]
		if _, err := m.Update(ctx, k, stored, 0); err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, k)
		switch {
		case bytes.Equal(got, stored):
		case len(got) == 0:
			if bytes.HasPrefix(stored, []byte("k8s:enc:")) {
				t.Fatalf("encrypted %q read as empty", stored)
			}
		case !bytes.HasPrefix(stored, []byte("k8s:enc:aesgcm:v1:k1:")):
			t.Fatalf("%q read as %q", stored, got)
		}
		if _, err := s.Update(ctx, k, plaintext, 0); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, s, k); !bytes.Equal(got, plaintext) {
			t.Fatalf("wrote %q, read %q", plaintext, got)
		}
	})
}
