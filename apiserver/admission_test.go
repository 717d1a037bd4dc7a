package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// admissionLog records what admission hooks were asked.
type admissionLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *admissionLog) add(phase string, req *apiserver.AdmissionRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, obj := "-", "-"
	if req.OldObject != nil {
		old = req.OldObject.GetObjectMeta().Name
	}
	if req.Object != nil {
		obj = req.Object.GetObjectMeta().Name
	}
	l.seen = append(l.seen, fmt.Sprintf("%s %s %s/%s %s/%s dry=%v old=%s obj=%s", phase, req.Operation, req.Resource, req.Subresource, req.Namespace, req.Name, req.DryRun, old, obj))
}

func (l *admissionLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

func TestAdmissionChain(t *testing.T) {
	var log admissionLog
	mutate := func(_ context.Context, req *apiserver.AdmissionRequest) error {
		log.add("mutate", req)
		if w, ok := req.Object.(*widgetapi.Widget); ok && req.Subresource == "" {
			if w.Labels == nil {
				w.Labels = map[string]string{}
			}
			w.Labels["admitted"] = "yes"
		}
		return nil
	}
	validate := func(_ context.Context, req *apiserver.AdmissionRequest) error {
		log.add("validate", req)
		w, _ := req.Object.(*widgetapi.Widget)
		switch {
		case w != nil && w.Spec.Color == "Blue" && req.Subresource == "":
			return errors.New("blue widgets are not allowed here")
		case w != nil && w.Annotations["deny"] == "teapot":
			return apiserver.NewStatusError(http.StatusTeapot, "Teapot", "short and stout")
		case req.Operation == apiserver.OperationDelete && req.OldObject.GetObjectMeta().Labels["keep"] == "true":
			return errors.New("kept")
		}
		return nil
	}
	srv := apiservertest.New(t, widgetapi.Register,
		apiserver.WithMutatingAdmission(mutate), apiserver.WithValidatingAdmission(validate))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	created := c.create(newWidget("default", "a"))
	if created.Labels["admitted"] != "yes" {
		t.Errorf("the mutating hook's label was not stored: %v", created.Labels)
	}
	if got, want := log.take(), []string{
		"mutate CREATE widgets/ default/a dry=false old=- obj=a",
		"validate CREATE widgets/ default/a dry=false old=- obj=a",
	}; !equalStrings(got, want) {
		t.Errorf("create: hooks saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A patch is an update: the hooks see the old and the new object.
	c.do(http.MethodPatch, widgetPath("default", "a")+"?dryRun=All", `{"spec":{"size":3}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	if got, want := log.take(), []string{
		"mutate UPDATE widgets/ default/a dry=true old=a obj=a",
		"validate UPDATE widgets/ default/a dry=true old=a obj=a",
	}; !equalStrings(got, want) {
		t.Errorf("patch: hooks saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Subresources go through admission too.
	c.do(http.MethodPatch, widgetPath("default", "a")+"/status", `{"status":{"replicas":2}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	c.do(http.MethodPatch, widgetPath("default", "a")+"/scale", `{"spec":{"replicas":4}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	if got, want := log.take(), []string{
		"mutate UPDATE widgets/status default/a dry=false old=a obj=a",
		"validate UPDATE widgets/status default/a dry=false old=a obj=a",
		"mutate UPDATE widgets/scale default/a dry=false old=a obj=a",
		"validate UPDATE widgets/scale default/a dry=false old=a obj=a",
	}; !equalStrings(got, want) {
		t.Errorf("subresources: hooks saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Rejections: a plain error is 403 in kube's words; a StatusError is
	// answered as chosen. Nothing is stored.
	blue := newWidget("default", "b")
	blue.Spec.Color = "Blue"
	st := c.do(http.MethodPost, widgetsIn("default"), blue).failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	if want := `widgets.example.com "b" is forbidden: blue widgets are not allowed here`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	c.get(widgetPath("default", "b")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	c.do(http.MethodPatch, widgetPath("default", "a"), `{"metadata":{"annotations":{"deny":"teapot"}}}`,
		"Content-Type", "application/merge-patch+json").failure(t, http.StatusTeapot, "Teapot")
	if got := c.read("default", "a"); got.Annotations["deny"] != "" {
		t.Errorf("a rejected patch was stored: %v", got.Annotations)
	}
	log.take()

	// Delete: the hooks see the old object only, and can refuse.
	kept := newWidget("default", "kept")
	kept.Labels = map[string]string{"keep": "true"}
	c.create(kept)
	c.do(http.MethodDelete, widgetPath("default", "kept"), nil).failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	c.read("default", "kept")
	log.take()
	c.do(http.MethodDelete, widgetPath("default", "a"), nil).mustCode(t, http.StatusOK)
	if got, want := log.take(), []string{
		"mutate DELETE widgets/ default/a dry=false old=a obj=-",
		"validate DELETE widgets/ default/a dry=false old=a obj=-",
	}; !equalStrings(got, want) {
		t.Errorf("delete: hooks saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAdmissionUser(t *testing.T) {
	var got apiserver.User
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(apiserver.WithUser(r.Context(), apiserver.User{Name: "alice", Groups: []string{"dev"}})))
		})
	}
	srv := newWidgetHandler(t, apiserver.WithValidatingAdmission(func(_ context.Context, req *apiserver.AdmissionRequest) error {
		got = req.User
		return nil
	}))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, widgetsIn("default"), strings.NewReader(`{"metadata":{"name":"a"},"spec":{"color":"Red"}}`))
	req.Header.Set("Content-Type", "application/json")
	authn(srv).ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	if got.Name != "alice" || len(got.Groups) != 1 {
		t.Errorf("the hook saw user %+v, want alice in dev", got)
	}
}

func TestValidateStatus(t *testing.T) {
	register := func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[widgetapi.Widget]{
			Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, Status: true,
			Validate: func(_ context.Context, w, _ *widgetapi.Widget) apiserver.FieldErrors {
				if w.Spec.Color == "" {
					return apiserver.FieldErrors{apiserver.Required("spec.color", "")}
				}
				return nil
			},
			ValidateStatus: func(_ context.Context, w, old *widgetapi.Widget) apiserver.FieldErrors {
				if old == nil {
					return apiserver.FieldErrors{apiserver.Forbidden("status", "no old object")}
				}
				if w.Status.Replicas > 10 {
					return apiserver.FieldErrors{apiserver.Invalid("status.replicas", w.Status.Replicas, "must be at most 10")}
				}
				return nil
			},
		})
	}
	srv := apiservertest.New(t, register)
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.create(newWidget("default", "a"))
	st := c.do(http.MethodPatch, widgetPath("default", "a")+"/status", `{"status":{"replicas":11}}`,
		"Content-Type", "application/merge-patch+json").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	if !hasCause(st, "status.replicas", kapi.CauseTypeFieldValueInvalid) {
		t.Errorf("causes %+v, want status.replicas", st.Details)
	}
	c.do(http.MethodPatch, widgetPath("default", "a")+"/status", `{"status":{"replicas":10}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	// The resource's own validation does not run on status writes, and the
	// status validation not on the resource's.
	c.do(http.MethodPatch, widgetPath("default", "a"), `{"spec":{"color":null}}`,
		"Content-Type", "application/merge-patch+json").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
