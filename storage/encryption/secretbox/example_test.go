package secretbox_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/encryption/secretbox"
	"github.com/kapi-dev/kapi/storage/memory"
)

func ExampleNew() {
	config, err := encryption.ParseConfig([]byte(`
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ['*.*']
  providers:
  - secretbox:
      keys:
      - name: key1
        secret: dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE=
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	backend := memory.New()
	defer backend.Close()
	store, err := encryption.New(backend, config, encryption.WithCipher("secretbox", secretbox.New))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	store.Create(ctx, "/secrets/default/db", []byte(`{"data":{"password":"aHVudGVyMg=="}}`))
	kv, _ := store.Get(ctx, "/secrets/default/db", 0)
	raw, _ := backend.Get(ctx, "/secrets/default/db", 0)
	fmt.Printf("%s\n%s… %d bytes\n", kv.Value, raw.Value[:26], len(raw.Value))
	// Output:
	// {"data":{"password":"aHVudGVyMg=="}}
	// k8s:enc:secretbox:v1:key1:… 102 bytes
}
