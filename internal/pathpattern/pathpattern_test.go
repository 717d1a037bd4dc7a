package pathpattern_test

import (
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/internal/pathpattern"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, pattern string
		ok            bool
	}{
		{"path", "/healthz", true},
		{"prefix", "/apis/*", true},
		{"everything", "*", true},
		{"root", "/", true},
		{"relative", "healthz", false},
		{"empty", "", false},
		{"star inside", "/apis/*/v1", false},
		{"two stars", "/a**", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := pathpattern.Check(tc.pattern); (err == nil) != tc.ok {
				t.Errorf("Check(%q) = %v, want ok %v", tc.pattern, err, tc.ok)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		name, pattern, path string
		match               bool
	}{
		{"exact", "/healthz", "/healthz", true},
		{"exact, longer path", "/healthz", "/healthz/ping", false},
		{"prefix", "/healthz*", "/healthz/ping", true},
		{"prefix itself", "/apis/*", "/apis/", true},
		{"prefix, shorter path", "/apis/*", "/apis", false},
		{"everything", "*", "/anything", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pathpattern.Match(tc.pattern, tc.path); got != tc.match {
				t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.match)
			}
		})
	}
}

func ExampleMatch() {
	fmt.Println(pathpattern.Match("/healthz*", "/healthz/etcd"), pathpattern.Match("/healthz", "/healthz/etcd"))
	// Output: true false
}
