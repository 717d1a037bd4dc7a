package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// Cipher encrypts and decrypts values under one key.
type Cipher interface {
	// Seal appends to dst the encryption of plaintext and returns the
	// result. A cipher that authenticates additional data binds the value
	// to additionalData, the storage key it is written under.
	Seal(dst, plaintext, additionalData []byte) ([]byte, error)
	// Open appends to dst the plaintext of a value Seal wrote and returns
	// the result; it is an error if the value was not sealed under this
	// key (and additionalData), or was altered since.
	Open(dst, ciphertext, additionalData []byte) ([]byte, error)
}

// NewCipherFunc makes the cipher of one key from its secret (the decoded
// base64 of [Key].Secret). A secret of the wrong size is an error.
type NewCipherFunc func(secret []byte) (Cipher, error)

// NewAESGCM is the cipher of the aesgcm provider: AES-GCM with a random
// 12-byte nonce written before the ciphertext, and the storage key as
// additional data, as kube-apiserver's. The secret is 16, 24 or 32 bytes
// (AES-128, -192, -256).
//
// A random nonce bounds what one key may safely encrypt: rotate keys well
// before 2³² writes (Kubernetes advises every 200,000).
func NewAESGCM(secret []byte) (Cipher, error) {
	switch len(secret) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("secret is not of the expected length, got %d, expected one of [16 24 32]", len(secret))
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCMWithRandomNonce(block) // nonce ‖ ciphertext ‖ tag
	if err != nil {
		return nil, err
	}
	return aesGCM{aead}, nil
}

type aesGCM struct{ aead cipher.AEAD }

var _ Cipher = aesGCM{}

func (c aesGCM) Seal(dst, plaintext, additionalData []byte) ([]byte, error) {
	return c.aead.Seal(dst, nil, plaintext, additionalData), nil
}

func (c aesGCM) Open(dst, ciphertext, additionalData []byte) ([]byte, error) {
	return c.aead.Open(dst, nil, ciphertext, additionalData)
}

// encryptedPrefix begins every encrypted value, whatever its provider: no
// JSON, protobuf or CBOR document begins so.
const encryptedPrefix = "k8s:enc:"

// A provider writes values one way and reads back what it wrote.
type provider interface {
	// seal turns plaintext into the value stored under key.
	seal(plaintext []byte, key string) ([]byte, error)
	// open turns a stored value back into plaintext: ok is false if the
	// value is not this provider's or does not open; current is true if
	// seal would have written it as it is (same key).
	open(value []byte, key string) (plaintext []byte, current, ok bool)
}

// identityProvider stores plaintext as it is.
type identityProvider struct{}

func (identityProvider) seal(plaintext []byte, _ string) ([]byte, error) { return plaintext, nil }

func (identityProvider) open(value []byte, _ string) ([]byte, bool, bool) {
	// An encrypted value is not plaintext: a later provider may open it.
	if bytes.HasPrefix(value, []byte(encryptedPrefix)) {
		return nil, false, false
	}
	return value, true, true
}

// keyedProvider writes "k8s:enc:NAME:v1:" + key name + ":" + ciphertext
// under its first key and reads under each.
type keyedProvider struct {
	prefix string // "k8s:enc:aesgcm:v1:"
	keys   []namedCipher
}

type namedCipher struct {
	prefix string // key name + ":"
	cipher Cipher
}

func (p *keyedProvider) seal(plaintext []byte, key string) ([]byte, error) {
	k := p.keys[0]
	dst := make([]byte, 0, len(p.prefix)+len(k.prefix)+len(plaintext)+64)
	dst = append(append(dst, p.prefix...), k.prefix...)
	return k.cipher.Seal(dst, plaintext, []byte(key))
}

func (p *keyedProvider) open(value []byte, key string) ([]byte, bool, bool) {
	rest, ok := bytes.CutPrefix(value, []byte(p.prefix))
	if !ok {
		return nil, false, false
	}
	// Key names may prefix one another ("a" and "a:b"): try every match.
	for i, k := range p.keys {
		if ciphertext, ok := bytes.CutPrefix(rest, []byte(k.prefix)); ok {
			if plaintext, err := k.cipher.Open(nil, ciphertext, []byte(key)); err == nil {
				return plaintext, i == 0, true
			}
		}
	}
	return nil, false, false
}

// chain is the providers of one resource, in order.
type chain struct {
	providers []provider
}

func (c *chain) seal(plaintext []byte, key string) ([]byte, error) {
	return c.providers[0].seal(plaintext, key)
}

// open tries each provider in turn, as kube-apiserver does: a provider
// that cannot open a value does not stop a later one from trying.
func (c *chain) open(value []byte, key string) (plaintext []byte, current, ok bool) {
	for i, p := range c.providers {
		if plaintext, current, ok := p.open(value, key); ok {
			return plaintext, current && i == 0, true
		}
	}
	return nil, false, false
}
