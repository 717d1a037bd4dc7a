package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var (
	widgetsGVR       = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgetClassesGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgetclasses"}
)

const testNamespace = "default"

// requestLog records every request a client made and the status it got.
type requestLog struct {
	mu       sync.Mutex
	requests []loggedRequest
}

type loggedRequest struct {
	Method string
	URL    string // path and query
	Status int    // 0 if the round trip failed
}

func (l loggedRequest) String() string {
	return fmt.Sprintf("%s %s -> %d", l.Method, l.URL, l.Status)
}

func (l *requestLog) all() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRequest(nil), l.requests...)
}

func (l *requestLog) String() string {
	var b strings.Builder
	for _, r := range l.all() {
		fmt.Fprintln(&b, r)
	}
	return b.String()
}

type recordingTransport struct {
	log  *requestLog
	next http.RoundTripper
}

func (rt recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	entry := loggedRequest{Method: req.Method, URL: req.URL.RequestURI()}
	if resp != nil {
		entry.Status = resp.StatusCode
	}
	rt.log.mu.Lock()
	rt.log.requests = append(rt.log.requests, entry)
	rt.log.mu.Unlock()
	return resp, err
}

// restConfig is a client-go config for the server, without client-side rate
// limiting, that records its requests in log (if not nil).
func restConfig(srv *server, log *requestLog) *rest.Config {
	cfg := &rest.Config{
		Host:    srv.URL,
		QPS:     -1, // no client-side throttling
		Timeout: 0,  // watches are long; every call here has a context deadline
	}
	if log != nil {
		cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
			return recordingTransport{log: log, next: next}
		}
	}
	return cfg
}

// dynamicClient returns a dynamic client for the server.
func dynamicClient(t *testing.T, srv *server, log *requestLog) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(restConfig(srv, log))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ctxFor returns a context that ends with the test or after d.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// newWidget returns a Widget with the given name and spec.
func newWidget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

func newWidgetClass(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "WidgetClass",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// statusOfErr returns the Status carried by an API error, or fails the test.
func statusOfErr(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se apierrors.APIStatus
	if err == nil {
		t.Fatal("want an API error, got nil")
	}
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) carries no Status", err, err)
	}
	return se.Status()
}

// wantStatus checks the code, reason and details of an API error.
func wantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, kind, name, message string) {
	t.Helper()
	st := statusOfErr(t, err)
	if st.Code != code || st.Reason != reason || st.Status != metav1.StatusFailure {
		t.Errorf("status = %d %s %q, want %d %s Failure; full: %s", st.Code, st.Reason, st.Status, code, reason, mustJSON(st))
	}
	if st.Details == nil {
		t.Errorf("status has no details: %s", mustJSON(st))
	} else if st.Details.Name != name || st.Details.Group != "example.com" || st.Details.Kind != kind {
		t.Errorf("details = {name %q group %q kind %q}, want {name %q group example.com kind %q}; full: %s",
			st.Details.Name, st.Details.Group, st.Details.Kind, name, kind, mustJSON(st))
	}
	if message != "" && st.Message != message {
		t.Errorf("message = %q, want %q", st.Message, message)
	}
}
