package cors_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/cors"
)

// next answers 200 "next" to every request, so that a test can tell whether
// the policy let it through.
var next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("next"))
})

func MustPolicy(t *testing.T, origins ...string) *cors.Policy {
	t.Helper()
	p, err := cors.New(origins)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serve(h http.Handler, method, origin string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/apis/example.com/v1/widgets", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler(t *testing.T) {
	h := MustPolicy(t, `^https?://localhost(:\d+)?$`, `//console\.example\.com(:|$)`).Handler(next)
	for _, tc := range []struct {
		name, method, origin string
		code                 int
		allowed              bool
	}{
		{"preflight from an allowed origin", http.MethodOptions, "http://localhost:8080", http.StatusNoContent, true},
		{"GET from an allowed origin", http.MethodGet, "http://localhost:8080", http.StatusOK, true},
		{"DELETE from an allowed origin", http.MethodDelete, "https://localhost", http.StatusOK, true},
		{"a pattern pinned by // and (:|$), any scheme and port", http.MethodGet, "http://console.example.com:8443", http.StatusOK, true},
		{"a pinned pattern, a longer host", http.MethodGet, "https://console.example.com.evil.test", http.StatusOK, false},
		{"preflight from another origin", http.MethodOptions, "https://evil.test", http.StatusOK, false},
		{"GET from another origin", http.MethodGet, "https://evil.test", http.StatusOK, false},
		{"anchored pattern, longer origin", http.MethodGet, "http://localhost:8080.evil.test", http.StatusOK, false},
		{"no Origin", http.MethodGet, "", http.StatusOK, false},
		{"no Origin, OPTIONS", http.MethodOptions, "", http.StatusOK, false},
		{"null origin", http.MethodGet, "null", http.StatusOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, tc.method, tc.origin)
			if w.Code != tc.code {
				t.Errorf("code %d, want %d", w.Code, tc.code)
			}
			if got := w.Header().Get("Vary"); got != "Origin" {
				t.Errorf("Vary %q, want Origin", got)
			}
			got := w.Header().Get("Access-Control-Allow-Origin")
			if !tc.allowed {
				for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials"} {
					if v := w.Header().Get(k); v != "" {
						t.Errorf("%s: %q, want none", k, v)
					}
				}
				if w.Body.String() != "next" {
					t.Errorf("body %q: the request did not reach the handler", w.Body)
				}
				return
			}
			if got != tc.origin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.origin)
			}
			for k, want := range map[string]string{
				"Access-Control-Allow-Methods":     "POST, GET, OPTIONS, PUT, DELETE, PATCH",
				"Access-Control-Allow-Headers":     "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since",
				"Access-Control-Expose-Headers":    "Date",
				"Access-Control-Allow-Credentials": "true",
			} {
				if v := w.Header().Get(k); v != want {
					t.Errorf("%s: %q, want %q", k, v, want)
				}
			}
			if tc.method == http.MethodOptions && w.Body.Len() != 0 {
				t.Errorf("a preflight reached the handler: %q", w.Body)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	p, err := cors.New([]string{"^https://.*$"}, cors.WithAllowedMethods("GET"), cors.WithAllowedHeaders("Authorization"),
		cors.WithExposedHeaders("Warning", "Audit-Id"), cors.WithCredentials(false))
	if err != nil {
		t.Fatal(err)
	}
	w := serve(p.Handler(next), http.MethodOptions, "https://a.test")
	for k, want := range map[string]string{
		"Access-Control-Allow-Methods":     "GET",
		"Access-Control-Allow-Headers":     "Authorization",
		"Access-Control-Expose-Headers":    "Warning, Audit-Id",
		"Access-Control-Allow-Credentials": "false",
	} {
		if v := w.Header().Get(k); v != want {
			t.Errorf("%s: %q, want %q", k, v, want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := cors.New(nil); !errors.Is(err, cors.ErrNoOrigins) {
		t.Errorf("no patterns: %v, want ErrNoOrigins", err)
	}
	_, err := cors.New([]string{`^ok$`, `(unclosed`, `[z-a]`, ``, `example\.com`, `example\.com$`})
	if err == nil {
		t.Fatal("bad patterns compiled")
	}
	// kube-apiserver's checks of --cors-allowed-origins: not empty, and
	// pinned to the start and end of the host (CVE-2022-1996).
	for _, want := range []string{`"(unclosed"`, `"[z-a]"`, `empty`, `"example\\.com": regular expression does not pin`,
		`"example\\.com$": regular expression does not pin`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// FuzzHandler feeds hostile Origin headers and methods: the handler never
// panics, answers a preflight only for an allowed origin, and echoes only
// the origin it was sent.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{"http://localhost:1", "null", "", "http://localhost:1 http://evil", "\x00", "https://console.example.com\r\nX: y"} {
		f.Add(s, "OPTIONS")
		f.Add(s, "GET")
	}
	p, err := cors.New([]string{`^https?://localhost(:\d+)?$`, `//console\.example\.com(:|$)`})
	if err != nil {
		f.Fatal(err)
	}
	h := p.Handler(next)
	f.Fuzz(func(t *testing.T, origin, method string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Method = method
		r.Header["Origin"] = []string{origin}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		allowed := origin != "" && p.Allowed(origin)
		if got := w.Header().Get("Access-Control-Allow-Origin"); allowed && got != origin || !allowed && got != "" {
			t.Fatalf("origin %q: Access-Control-Allow-Origin %q", origin, got)
		}
		if preflight := allowed && method == http.MethodOptions; preflight != (w.Code == http.StatusNoContent) {
			t.Fatalf("origin %q, method %q: code %d", origin, method, w.Code)
		}
	})
}
