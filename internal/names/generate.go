package names

import "crypto/rand"

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
