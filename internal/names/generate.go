package names

import (
	"crypto/rand"
	"encoding/hex"
)

// Generate is a name made from a generateName: base, cut to leave room in
// 63 characters, and five random characters from the alphabet Kubernetes
// uses (no vowels, no confusable digits), as kube-apiserver's
// SimpleNameGenerator makes them.
func Generate(base string) string {
	const alphabet, suffix = "bcdfghjklmnpqrstvwxz2456789", 5
	if len(base) > 63-suffix {
		base = base[:63-suffix]
	}
	b := make([]byte, suffix)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return base + string(b)
}

// UID is a random RFC 4122 version 4 UUID, an object's metadata.uid.
func UID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	// 8-4-4-4-12 hex digits, as fmt's %x of each group wrote them, in one
	// allocation: every create and every observed request makes one.
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}
