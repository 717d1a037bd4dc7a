package healthz_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/healthz"
)

func TestHandler(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ok := healthz.Check{Name: "ping", Check: func(context.Context) error { return nil }}
	bad := healthz.Check{Name: "store", Check: func(context.Context) error { return errors.New("secret reason") }}
	get := func(h http.Handler, target string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(healthz.Handler("readyz", []healthz.Check{ok}, quiet), "/readyz"); code != 200 || body != "ok" {
		t.Errorf("passing: %d %q", code, body)
	}
	if code, body := get(healthz.Handler("readyz", []healthz.Check{ok}, quiet), "/readyz?verbose"); code != 200 || body != "[+]ping ok\nreadyz check passed\n" {
		t.Errorf("verbose: %d %q", code, body)
	}
	code, body := get(healthz.Handler("readyz", []healthz.Check{ok, bad}, quiet), "/readyz")
	if code != 503 || body != "[+]ping ok\n[-]store failed: reason withheld\nreadyz check failed\n" || strings.Contains(body, "secret") {
		t.Errorf("failing: %d %q", code, body)
	}
	notFound := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	byPath := func(r *http.Request) string { return r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:] }
	one := healthz.CheckHandler([]healthz.Check{ok, bad}, byPath, notFound)
	if code, body := get(one, "/readyz/store"); code != 503 || body != "store failed: secret reason\n" {
		t.Errorf("one failing check: %d %q", code, body)
	}
	if code, body := get(one, "/readyz/ping"); code != 200 || body != "ok" {
		t.Errorf("one passing check: %d %q", code, body)
	}
	if code, _ := get(one, "/readyz/none"); code != http.StatusTeapot {
		t.Errorf("no such check: %d, want notFound's", code)
	}
}
