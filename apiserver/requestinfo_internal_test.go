package apiserver

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestRoutedPathSegments: routedPath splits a path as strings.SplitN with
// routedSegments pieces, without a slice of its own.
func TestRoutedPathSegments(t *testing.T) {
	for _, target := range []string{
		"/", "//", "/apis", "/apis/", "/api/v1", "/apis/example.com/v1/namespaces/a/widgets/w",
		"/apis/example.com/v1/namespaces/a/widgets/w/status", "/apis/example.com/v1//namespaces/a/widgets/w",
		"/apis/example.com/v1/namespaces/a/widgets/w/status/x/y/z", "/a/b/c/d/e/f/g/h/i", "/a/b/c/d/e/f/g/h/i/j",
		"/a/b/c/d/e/f/g/h", "/a//////////b", "/apis/example.com/v1/namespaces/a/widgets/w%2Fx/s%2Ft/u/v/w",
	} {
		r := httptest.NewRequest("GET", target, nil)
		var segments [routedSegments]string
		path, parts := routedPath(r, &segments)
		var want []string
		if trimmed := strings.Trim(r.URL.EscapedPath(), "/"); trimmed != "" {
			want = strings.SplitN(trimmed, "/", routedSegments)
		}
		if r.URL.RawPath != "" {
			for i, p := range want {
				want[i] = strings.ReplaceAll(p, "%2F", "/")
			}
		}
		if !slices.Equal(parts, want) || path != r.URL.Path {
			t.Errorf("%s: %q %q, want %q %q", target, path, parts, r.URL.Path, want)
		}
	}
}
