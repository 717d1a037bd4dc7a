package names

import (
	"regexp"
	"testing"
)

// TestUID: UIDs are random RFC 4122 version 4 UUIDs in their usual
// text form, as Kubernetes makes them.
func TestUID(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		uid := UID()
		if !form.MatchString(uid) {
			t.Fatalf("UID %q is not a version 4 UUID", uid)
		}
		if seen[uid] {
			t.Fatalf("UID %q made twice", uid)
		}
		seen[uid] = true
	}
}
