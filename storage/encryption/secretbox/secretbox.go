package secretbox

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"

	"github.com/kapi-dev/kapi/storage/encryption"
)

const nonceSize = 24

// New is the cipher of one secretbox key; the secret is 32 bytes.
func New(secret []byte) (encryption.Cipher, error) {
	if len(secret) != 32 {
		return nil, fmt.Errorf("secret is not of the expected length, got %d, expected one of [32]", len(secret))
	}
	var c box
	copy(c.key[:], secret)
	return &c, nil
}

type box struct{ key [32]byte }

var _ encryption.Cipher = (*box)(nil)

var errOpen = errors.New("secretbox: the value does not open under this key")

// Seal writes a random nonce, then the box. additionalData is ignored:
// secretbox has none.
func (c *box) Seal(dst, plaintext, _ []byte) ([]byte, error) {
	var nonce [nonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	return secretbox.Seal(append(dst, nonce[:]...), plaintext, &nonce, &c.key), nil
}

// Open reads what Seal wrote.
func (c *box) Open(dst, ciphertext, _ []byte) ([]byte, error) {
	if len(ciphertext) < nonceSize+secretbox.Overhead {
		return nil, errOpen
	}
	var nonce [nonceSize]byte
	copy(nonce[:], ciphertext)
	out, ok := secretbox.Open(dst, ciphertext[nonceSize:], &nonce, &c.key)
	if !ok {
		return nil, errOpen
	}
	return out, nil
}
