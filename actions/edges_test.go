package actions_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/observe"
)

// follow opens a stream at path, its header read.
func follow(t *testing.T, c client, path string) *http.Response {
	t.Helper()
	resp, err := c.srv.Client().Get(c.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", path, resp.StatusCode)
	}
	return resp
}

// TestShutdownEndsStream: Shutdown ends a followed log as it ends
// watches, rather than waiting for it until its deadline; the client
// reads the end of a complete response.
func TestShutdownEndsStream(t *testing.T) {
	c := newClient(t)
	resp := follow(t, c, widget+"/log?follow=true")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.srv.API.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("the stream ended with %v, not its end", err)
	}
}

// out is an object a raw actions.Verb answers.
type out struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
}

var errBroken = errors.New("the source broke")

// newEdgeClient serves widgets with subresources that misbehave: Answers
// of nil and of a typed nil, a Stream not named as kube-apiserver's
// long-running ones, which says whether it has a deadline, and a Stream
// that fails after its first line.
func newEdgeClient(t *testing.T, opts ...apiserver.Option) client {
	answer := func(obj kapi.Object) actions.Verb {
		return actions.Verb{Out: &out{}, Answer: func(context.Context, actions.Request, kapi.Object) (kapi.Object, error) { return obj, nil }}
	}
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		for name, obj := range map[string]kapi.Object{"nil": nil, "typednil": (*out)(nil)} {
			if err := s.AddEndpoint(actions.Endpoint{Group: "example.com", Version: "v1", Resource: "widgets", Subresource: name,
				Verbs: map[string]actions.Verb{"get": answer(obj)}}); err != nil {
				return err
			}
		}
		if err := actions.AddSubresource(s, actions.Subresource{Group: "example.com", Version: "v1", Resource: "widgets", Name: "output",
			Get: actions.Stream("text/plain", func(ctx context.Context, _ actions.Request, w io.Writer) error {
				_, has := ctx.Deadline()
				_, _ = io.WriteString(w, map[bool]string{true: "deadline\n", false: "no deadline\n"}[has])
				return nil
			})}); err != nil {
			return err
		}
		return actions.AddSubresource(s, actions.Subresource{Group: "example.com", Version: "v1", Resource: "widgets", Name: "broken",
			Get: actions.Stream("text/plain", func(ctx context.Context, _ actions.Request, w io.Writer) error {
				_, _ = io.WriteString(w, "one\n")
				return errBroken
			})})
	}, opts...)
	c := client{t, srv}
	c.want(c.do("POST", ns+"/widgets", "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"Red"}}`), 201, "", "")
	return c
}

// TestStreamLongRunning: every Stream is long-running, whatever its name
// (kube-apiserver's list is log, exec, attach, portforward and proxy):
// the request timeout does not cut it. Browsers are told not to sniff it.
func TestStreamLongRunning(t *testing.T) {
	c := newEdgeClient(t, apiserver.WithRequestTimeout(time.Hour))
	for _, path := range []string{widget + "/output", widget + "/output?timeout=1h"} {
		if r := c.do("GET", path, "", ""); r.code != 200 || r.body != "no deadline\n" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q, X-Content-Type-Options %q", path, r.code, r.body, r.header.Get("X-Content-Type-Options"))
		}
	}
}

// TestNilAnswer: a raw Verb whose Answer answers nothing is a 500 Status
// naming the endpoint, not a panic.
func TestNilAnswer(t *testing.T) {
	c := newEdgeClient(t)
	for _, name := range []string{"nil", "typednil"} {
		c.want(c.do("GET", widget+"/"+name, "", ""), 500, "InternalError", "endpoint example.com/v1 widgets/"+name+" answered neither an object nor an error")
	}
}

// TestStreamBroken: a Stream that fails after its first byte breaks the
// response, so that the client does not take what it got as complete.
func TestStreamBroken(t *testing.T) {
	var mu sync.Mutex
	var recorded []string
	c := newEdgeClient(t, apiserver.WithObserver(observerFunc(func(rec *observe.RequestRecord) {
		mu.Lock()
		defer mu.Unlock()
		if rec.Attributes.Subresource == "broken" {
			recorded = append(recorded, fmt.Sprint(rec.Code, rec.Panic))
		}
	})))
	resp := follow(t, c, widget+"/broken")
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "one\n" || err != nil {
		t.Fatalf("%q, %v", line, err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Fatal("a broken stream read as complete")
	}
	// The server goes on, and took the abort for no panic of its own.
	c.want(c.do("GET", widget, "", ""), 200, "", "")
	mu.Lock()
	defer mu.Unlock()
	if len(recorded) != 1 || recorded[0] != "200 <nil>" {
		t.Errorf("recorded %q", recorded)
	}
}

// TestNoRoutes: what kube-apiserver routes nowhere is 404: the path of an
// answered kind's object, whatever the method; and GET ignores dryRun.
func TestNoRoutes(t *testing.T) {
	c := newClient(t, apiserver.WithAnonymous()) // which serves the access reviews
	for _, path := range []string{reviews + "/r1", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x"} {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "GET"} {
			c.want(c.do(m, path, "application/json", `{}`), 404, "NotFound", notFound)
		}
	}
	if r := c.do("GET", widget+"/log?dryRun=x", "", ""); r.code != 200 {
		t.Errorf("GET log?dryRun=x: %d %s", r.code, r.body)
	}
}

// TestClashes: a registered resource and an answered kind cannot share a
// plural or a kind, whichever comes first; a subresource of namespaces is
// refused rather than served nowhere.
func TestClashes(t *testing.T) {
	review := actions.Review[widgetapi.WidgetReview]{Group: "example.com", Version: "v1", Kind: "WidgetReview", Plural: "widgetreviews", Namespaced: true,
		Answer: func(context.Context, actions.Request, *widgetapi.WidgetReview) error { return nil }}
	stored := apiserver.Resource[widgetapi.WidgetRestart]{Group: "example.com", Version: "v1", Kind: "WidgetRestart", Plural: "widgetreviews", Namespaced: true}
	sameKind := apiserver.Resource[widgetapi.WidgetReview]{Group: "example.com", Version: "v1", Kind: "WidgetReview", Plural: "widgetreviews", Namespaced: true}
	for i, steps := range [][2]func(*apiserver.Server) error{
		{func(s *apiserver.Server) error { return actions.AddReview(s, review) }, func(s *apiserver.Server) error { return apiserver.Register(s, stored) }},
		{func(s *apiserver.Server) error { return actions.AddReview(s, review) }, func(s *apiserver.Server) error { return apiserver.Register(s, sameKind) }},
		{func(s *apiserver.Server) error { return apiserver.Register(s, stored) }, func(s *apiserver.Server) error { return actions.AddReview(s, review) }},
		{func(s *apiserver.Server) error { return apiserver.Register(s, sameKind) }, func(s *apiserver.Server) error { return actions.AddReview(s, review) }},
	} {
		srv, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := steps[0](srv); err != nil {
			t.Fatal(i, err)
		}
		if err := steps[1](srv); err == nil || !strings.Contains(strings.ToLower(err.Error()), "widgetreview") {
			t.Errorf("%d: %v, want a clash on widgetreviews", i, err)
		}
		srv.Close()
	}
	srv, err := apiserver.New(apiserver.WithNamespaces())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	err = actions.AddSubresource(srv, actions.Subresource{Version: "v1", Resource: "namespaces", Name: "restart",
		Create: actions.Write(func(_ context.Context, _ actions.Request, in *out) (*out, error) { return in, nil })})
	if err == nil || !strings.Contains(err.Error(), "a subresource of namespaces cannot be added") {
		t.Errorf("namespaces/restart: %v", err)
	}
}

// TestJournal: the example's log keeps a widget's last 100 lines, refuses
// a reason too long to keep, and starts anew for a widget created again
// under its name (it is keyed by UID).
func TestJournal(t *testing.T) {
	c := newClient(t)
	for i := range 101 {
		c.want(c.do("POST", widget+"/restart", "application/json", fmt.Sprintf(`{"reason":"r%d"}`, i)), 201, "", "")
	}
	r := c.do("GET", widget+"/log", "", "")
	if lines := strings.Split(strings.TrimSuffix(r.body, "\n"), "\n"); len(lines) != 100 || !strings.HasSuffix(lines[0], ": r1") || !strings.HasSuffix(lines[99], ": r100") {
		t.Errorf("%d lines, from %q to %q", len(lines), lines[0], lines[len(lines)-1])
	}
	c.want(c.do("POST", widget+"/restart", "application/json", `{"reason":"`+strings.Repeat("x", 257)+`"}`), 422, "Invalid",
		"reason: Too long: may not be more than 256 bytes")
	c.want(c.do("DELETE", widget, "", ""), 200, "", "")
	c.want(c.do("POST", ns+"/widgets", "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"Red"}}`), 201, "", "")
	if r := c.do("GET", widget+"/log", "", ""); r.code != 200 || r.body != "" {
		t.Errorf("the new w1's log: %d %q", r.code, r.body)
	}
	r = c.do("POST", widget+"/restart", "application/json", `{"reason":"new"}`)
	if c.want(r, 201, "", ""); !strings.Contains(r.body, `"restarts":1`) {
		t.Errorf("the new w1's first restart: %s", r.body)
	}
}
