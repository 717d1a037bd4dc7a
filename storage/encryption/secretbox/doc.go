// Package secretbox is the cipher of the secretbox provider of package
// encryption: XSalsa20 and Poly1305, as NaCl's secretbox, with 32-byte keys.
// It is a module of its own because it needs golang.org/x/crypto, which
// kapi's root module does not require: only those who use secretbox get it.
//
//	store, err := encryption.New(backend, config, encryption.WithCipher("secretbox", secretbox.New))
//
// # Stored format
//
// As kube-apiserver's: after the provider's "k8s:enc:secretbox:v1:" and the
// key's name, a 24-byte random nonce, then the box (Poly1305 tag and
// ciphertext). Secretbox authenticates no additional data, so unlike
// aesgcm a value is not bound to the storage key it is written under.
package secretbox
