package encryption_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The file kube-apiserver's --encryption-provider-config takes: widgets
// are encrypted with AES-GCM under key1; everything else is stored as it is.
const exampleConfig = `
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [widgets.example.com]
  providers:
  - aesgcm:
      keys:
      - name: key1
        secret: dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE= # head -c 32 /dev/urandom | base64
  - identity: {} # reads widgets written before encryption was on
`

func ExampleNew() {
	ctx := context.Background()
	config, err := encryption.ParseConfig([]byte(exampleConfig))
	if err != nil {
		fmt.Println(err)
		return
	}
	backend := memory.New() // or bolt.Open(...), etcd.New(...)
	defer backend.Close()
	store, err := encryption.New(backend, config)
	if err != nil {
		fmt.Println(err)
		return
	}
	// store goes to apiserver.New(apiserver.WithStorage(store)).

	store.Create(ctx, "/widgets.example.com/default/w", []byte(`{"spec":{"color":"Red"}}`))
	store.Create(ctx, "/gadgets.example.com/default/g", []byte(`{"spec":{"color":"Red"}}`))

	w, _ := store.Get(ctx, "/widgets.example.com/default/w", 0)
	fmt.Printf("read:   %s\n", w.Value)
	raw, _ := backend.Get(ctx, "/widgets.example.com/default/w", 0)
	fmt.Printf("stored: %s + nonce, ciphertext, tag (%d bytes)\n", raw.Value[:23], len(raw.Value))
	g, _ := backend.Get(ctx, "/gadgets.example.com/default/g", 0)
	fmt.Printf("gadget: %s\n", g.Value)
	// Output:
	// read:   {"spec":{"color":"Red"}}
	// stored: k8s:enc:aesgcm:v1:key1: + nonce, ciphertext, tag (75 bytes)
	// gadget: {"spec":{"color":"Red"}}
}

func ExampleRewrite() {
	ctx := context.Background()
	backend := memory.New()
	defer backend.Close()
	key1 := encryption.Key{Name: "key1", Secret: "dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE="}
	key2 := encryption.Key{Name: "key2", Secret: "YW5vdGhlciB0aGlydHktdHdvLWJ5dGUgc2VjcmV0ISE="}
	withKeys := func(keys ...encryption.Key) encryption.Config {
		return encryption.Config{
			Kind: encryption.ConfigKind, APIVersion: encryption.ConfigAPIVersion,
			Resources: []encryption.ResourceConfig{{
				Resources: []string{"widgets.example.com"},
				Providers: []encryption.ProviderConfig{{AESGCM: &encryption.KeysConfig{Keys: keys}}},
			}},
		}
	}

	before, _ := encryption.New(backend, withKeys(key1))
	before.Create(ctx, "/widgets.example.com/default/a", []byte(`{}`))
	before.Create(ctx, "/widgets.example.com/default/b", []byte(`{}`))

	// Rotate: key2 first on every replica, key1 still read; then rewrite.
	during, _ := encryption.New(backend, withKeys(key2, key1))
	during.Create(ctx, "/widgets.example.com/default/c", []byte(`{}`))
	result, err := encryption.Rewrite(ctx, during, "/widgets.example.com/")
	fmt.Printf("%+v %v\n", result, err)

	// key1 can go.
	after, _ := encryption.New(backend, withKeys(key2))
	list, _ := after.List(ctx, "/widgets.example.com/", storage.ListOptions{})
	for _, kv := range list.Items {
		raw, _ := backend.Get(ctx, kv.Key, 0)
		fmt.Println(kv.Key, string(kv.Value), bytes.HasPrefix(raw.Value, []byte("k8s:enc:aesgcm:v1:key2:")))
	}
	// Output:
	// {Rewritten:2 Current:1 Unreadable:0} <nil>
	// /widgets.example.com/default/a {} true
	// /widgets.example.com/default/b {} true
	// /widgets.example.com/default/c {} true
}

func ExampleParseConfig() {
	// Strict, as kube-apiserver: a misspelt field is an error.
	_, err := encryption.ParseConfig([]byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresource: []\n"))
	fmt.Println(err)

	// What the file says is checked by New, every problem at once.
	config, _ := encryption.ParseConfig([]byte(`
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ['*.example.com', widgets.example.com]
  providers:
  - aesgcm: {keys: [{name: key1, secret: c2hvcnQ=}]}
`))
	backend := memory.New()
	defer backend.Close()
	_, err = encryption.New(backend, config)
	fmt.Println(err)
	// Output:
	// encryption: invalid configuration: yaml: unmarshal errors:
	//   line 3: field resource not found in type encryption.Config
	// encryption: invalid configuration: resources[0].providers[0]: aesgcm.keys[0].secret: secret is not of the expected length, got 5, expected one of [16 24 32]
	// resources[0].resources: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked
}

func ExampleWithKeyPrefix() {
	// A server whose keys live under /registry/ (apiserver.WithKeyPrefix)
	// names the same prefix here, so that resources are found in its keys.
	config, _ := encryption.ParseConfig([]byte(exampleConfig))
	backend := memory.New()
	defer backend.Close()
	store, _ := encryption.New(backend, config, encryption.WithKeyPrefix("/registry/"))

	ctx := context.Background()
	store.Create(ctx, "/registry/widgets.example.com/default/w", []byte(`{}`))
	raw, _ := backend.Get(ctx, "/registry/widgets.example.com/default/w", 0)
	fmt.Println(bytes.HasPrefix(raw.Value, []byte("k8s:enc:aesgcm:v1:key1:")))
	// Output:
	// true
}
