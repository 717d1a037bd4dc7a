package etcd_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// encrypted is a config encrypting every resource with AES-GCM under
// the first of keys.
func encrypted(keys ...encryption.Key) encryption.Config {
	return encryption.Config{
		Kind: encryption.ConfigKind, APIVersion: encryption.ConfigAPIVersion,
		Resources: []encryption.ResourceConfig{{
			Resources: []string{"*.*"},
			Providers: []encryption.ProviderConfig{{AESGCM: &encryption.KeysConfig{Keys: keys}}},
		}},
	}
}

var (
	keyA = encryption.Key{Name: "a", Secret: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa}, 32))}
	keyB = encryption.Key{Name: "b", Secret: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xb}, 16))}
)

func mustEncrypt(t testing.TB, s storage.Interface, c encryption.Config) storage.Interface {
	t.Helper()
	e, err := encryption.New(s, c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEncryptedConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustEncrypt(t, mustStore(t, freshPrefix()), encrypted(keyA, keyB))
	})
}

// TestEncryptedAtRest: etcd holds only ciphertext; a second replica with
// the same configuration reads it; after a rotation through one replica,
// etcd holds only the new key's ciphertext.
func TestEncryptedAtRest(t *testing.T) {
	ctx := t.Context()
	prefix := freshPrefix()
	client := mustClient(t)
	a := mustEncrypt(t, mustStore(t, prefix), encrypted(keyA))
	const key, plaintext = "/widgets.example.com/default/w", `{"spec":{"selector":{"app":"zebra-confidential-7731"}}}`
	if _, err := a.Create(ctx, key, []byte(plaintext)); err != nil {
		t.Fatal(err)
	}
	raw := func() []byte {
		t.Helper()
		resp, err := client.Get(ctx, prefix+"data"+key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd Get: %v, %v", resp, err)
		}
		return resp.Kvs[0].Value
	}
	if v := raw(); !bytes.HasPrefix(v, []byte("k8s:enc:aesgcm:v1:a:")) || bytes.Contains(v, []byte("zebra")) {
		t.Errorf("etcd holds %q", v)
	}

	b := mustEncrypt(t, mustStore(t, prefix), encrypted(keyB, keyA))
	if kv, err := b.Get(ctx, key, 0); err != nil || string(kv.Value) != plaintext {
		t.Errorf("the other replica reads %q, %v", kv.Value, err)
	}
	res, err := encryption.Rewrite(ctx, b, "/")
	if err != nil || res != (encryption.RewriteResult{Rewritten: 1}) {
		t.Errorf("Rewrite: %+v, %v", res, err)
	}
	if v := raw(); !bytes.HasPrefix(v, []byte("k8s:enc:aesgcm:v1:b:")) {
		t.Errorf("after the rotation etcd holds %.30q, want it under the new key", v)
	}
	onlyB := mustEncrypt(t, mustStore(t, prefix), encrypted(keyB))
	if kv, err := onlyB.Get(ctx, key, 0); err != nil || string(kv.Value) != plaintext {
		t.Errorf("with the new key only: %q, %v", kv.Value, err)
	}
}
