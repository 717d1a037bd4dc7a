package requestinfo

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/names"
)

// TestRoutedPathSegments: RoutedPath splits a path as strings.SplitN with
// Segments pieces, without a slice of its own.
func TestRoutedPathSegments(t *testing.T) {
	for _, target := range []string{
		"/", "//", "/apis", "/apis/", "/api/v1", "/apis/example.com/v1/namespaces/a/widgets/w",
		"/apis/example.com/v1/namespaces/a/widgets/w/status", "/apis/example.com/v1//namespaces/a/widgets/w",
		"/apis/example.com/v1/namespaces/a/widgets/w/status/x/y/z", "/a/b/c/d/e/f/g/h/i", "/a/b/c/d/e/f/g/h/i/j",
		"/a/b/c/d/e/f/g/h", "/a//////////b", "/apis/example.com/v1/namespaces/a/widgets/w%2Fx/s%2Ft/u/v/w",
	} {
		r := httptest.NewRequest("GET", target, nil)
		var segments [Segments]string
		path, parts := RoutedPath(r, &segments)
		var want []string
		if trimmed := strings.Trim(r.URL.EscapedPath(), "/"); trimmed != "" {
			want = strings.SplitN(trimmed, "/", Segments)
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

// FuzzOf: any method and target read without a panic, and a list or watch
// is authorized for a name only when its field selector names one that is
// a valid path segment.
func FuzzOf(f *testing.F) {
	for _, seed := range []struct{ method, target string }{
		{"GET", "/apis/example.com/v1/namespaces/a/widgets/w"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets?fieldSelector=metadata.name%3Dw"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets?watch=1&fieldSelector=metadata.name%3D..&labelSelector=a%3Db"},
		{"DELETE", "/api/v1/namespaces/a/widgets?labelSelector=a+in+(b"},
		{"PATCH", "/api/v1/namespaces/a/status"},
		{"PROPFIND", "/healthz"},
	} {
		f.Add(seed.method, seed.target)
	}
	f.Fuzz(func(t *testing.T, method, target string) {
		r, err := http.NewRequest(method, "http://kapi"+target, nil)
		if err != nil || r.URL.Host != "kapi" {
			return
		}
		a := Of(r)
		if (a.Verb == "list" || a.Verb == "watch") && a.Name != "" {
			if a.Name != selectedName(r.URL.Query().Get("fieldSelector")) || len(names.IsPathSegmentName(a.Name)) > 0 {
				t.Errorf("%s %s: %s authorized for name %q", method, target, a.Verb, a.Name)
			}
		}
	})
}
