// Package encryption encrypts values at rest, as kube-apiserver's
// EncryptionConfiguration does, for any backend: [New] takes a
// [storage.Interface] and returns one that encrypts what is written and
// decrypts what is read (Get, List, Watch, and the value a Delete returns).
//
//	config, err := encryption.ParseConfig(file) // kube's YAML, as it is
//	store, err := encryption.New(bolt, config)
//	srv, err := apiserver.New(apiserver.WithStorage(store))
//
// # Configuration
//
// [Config] is kube-apiserver's EncryptionConfiguration
// (apiserver.config.k8s.io/v1), so a file written for a cluster reads here
// unchanged, and is checked as kube-apiserver checks it. Rules name
// resources ("widgets.example.com", "*.example.com", "*.*"); the first rule
// naming a resource wins, by name, then group, then "*.*", and a resource
// no rule names is stored in clear. A resource is the first path segment
// of a storage key after the server's key prefix ([WithKeyPrefix]), which
// is the qualified resource name kapi stores an object under.
//
// Each rule lists providers: aesgcm (built in), secretbox (the nested
// module github.com/kapi-dev/kapi/storage/encryption/secretbox, passed
// with [WithCipher]: it needs golang.org/x/crypto, which the root module
// does not require) and identity (no encryption). The first provider, with
// its first key, writes; every provider and every key reads. kms is
// refused.
//
// # Stored format
//
// As kube-apiserver writes it: "k8s:enc:aesgcm:v1:" + key name + ":" +
// a 12-byte random nonce + AES-GCM ciphertext and tag, the storage key
// being the additional data, so that a value copied under another key
// does not decrypt; "k8s:enc:secretbox:v1:" + key name + ":" + a 24-byte
// random nonce + the secretbox (XSalsa20-Poly1305), which has no
// additional data. Identity writes the value as it is; it reads any value
// that does not begin "k8s:enc:".
//
// # Key rotation
//
// Add the new key first in its provider (or a new provider first),
// keeping the old ones after it, on every replica: new writes use it, old
// values still read. Then [Rewrite] re-writes every value that is not yet
// under the new key, with conditional updates, and the old key can go.
// Encrypting a resource that was stored in clear, or decrypting one, is
// the same dance with identity as the old or the new provider.
//
// # Values that do not decrypt
//
// A value that no provider opens (its key is gone, it was altered, or it
// is plaintext and the rule has no identity provider) is what Kubernetes
// calls a corrupt object. Readers get it so that it cannot decode — the
// stored bytes when they begin "k8s:enc:", an empty value otherwise —
// rather than an error, so that lists and watches go on around it, and a
// Delete of its key goes through the wrapper untouched, so it can be
// removed (Kubernetes' unsafe deletion of corrupt objects).
package encryption
