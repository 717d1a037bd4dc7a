package recorder

import (
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestSourceIPs: X-Forwarded-For's addresses, then X-Real-Ip's, then the
// peer's, each once, keeping only what net.ParseIP reads as an address
// (no zones, no names, nothing empty).
func TestSourceIPs(t *testing.T) {
	for _, tc := range []struct {
		forwarded, real, remote string
	}{
		{"", "", "192.0.2.1:1234"},
		{"203.0.113.7, 198.51.100.2", "", "192.0.2.1:1234"},
		{"203.0.113.7,,  , 203.0.113.7", "198.51.100.9", "[2001:db8::1]:443"},
		{"fe80::1%eth0, ::ffff:192.0.2.3, example.com, 2001:db8::2", " 2001:db8::2 ", "192.0.2.1"},
		{"1.2.3", "256.1.1.1", "not an address"},
		{"::", "0.0.0.0", "[fe80::1%25lo]:80"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Forwarded-For", tc.forwarded)
		r.Header.Set("X-Real-Ip", tc.real)
		r.RemoteAddr = tc.remote
		var want []string
		host, _, err := net.SplitHostPort(tc.remote)
		if err != nil {
			host = tc.remote
		}
		for _, s := range append(strings.Split(tc.forwarded, ","), tc.real, host) {
			if s = strings.TrimSpace(s); net.ParseIP(s) != nil && !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
		if got := sourceIPs(r); !slices.Equal(got, want) {
			t.Errorf("%+v: %q, want %q", tc, got, want)
		}
	}
}

// TestUpperVerb: metrics verbs are the verbs in upper case.
func TestUpperVerb(t *testing.T) {
	for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
		"head", "post", "put", "options", "propfind", "", "Get"} {
		if got := upperVerb(v); got != strings.ToUpper(v) {
			t.Errorf("upperVerb(%q) = %q", v, got)
		}
	}
}
