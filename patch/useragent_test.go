package patch_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/patch"
)

// kube-apiserver's prefixFromUserAgent
// (k8s.io/apiserver v0.37.2 pkg/endpoints/handlers/create.go:269) stops at
// the last whole rune that fits in 128 bytes; cutting bytes leaves invalid
// UTF-8 in the manager's name.
func TestUserAgentManagerCutsWholeCharacters(t *testing.T) {
	got := patch.UserAgentManager(strings.Repeat("a", 127) + "é/1.0")
	if want := strings.Repeat("a", 127); got != want {
		t.Errorf("UserAgentManager = %q (valid UTF-8: %v), want %q", got, utf8.ValidString(got), want)
	}
}
