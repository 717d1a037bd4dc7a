package apiserver_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
)

// Three versions of one kind for the builder's checks: gizmo (v1), its
// older gizmoV1beta1, and gizmoHub, a hub of no version's.
type (
	gizmo struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            struct {
			Size int `json:"size"`
		} `json:"spec"`
		Status struct {
			Ready bool `json:"ready"`
		} `json:"status"`
	}
	gizmoV1beta1 struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            struct {
			Length   int   `json:"length"`
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
		Status struct {
			Ready    bool  `json:"ready"`
			Replicas int32 `json:"replicas"`
		} `json:"status"`
	}
	gizmoHub struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Size            int
	}
)

var (
	gizmoToV1 = apiserver.ConvertVia(func(from *gizmoV1beta1, to *gizmo) error {
		to.Spec.Size, to.Status.Ready = from.Spec.Length, from.Status.Ready
		return nil
	}, func(from *gizmo, to *gizmoV1beta1) error {
		to.Spec.Length, to.Status.Ready = from.Spec.Size, from.Status.Ready
		return nil
	})
	gizmoV1beta1ToHub = apiserver.ConvertVia(func(from *gizmoV1beta1, to *gizmoHub) error { to.Size = from.Spec.Length; return nil },
		func(from *gizmoHub, to *gizmoV1beta1) error { to.Spec.Length = from.Size; return nil })
	gizmoV1ToHub = apiserver.ConvertVia(func(from *gizmo, to *gizmoHub) error { to.Size = from.Spec.Size; return nil },
		func(from *gizmoHub, to *gizmo) error { to.Spec.Size = from.Size; return nil })
)

func gizmoV1() apiserver.Resource[gizmo] {
	return apiserver.Resource[gizmo]{Group: "toys.example.com", Version: "v1", Kind: "Gizmo", Plural: "gizmos", Storage: true, Status: true}
}

func gizmoBeta() apiserver.Resource[gizmoV1beta1] {
	return apiserver.Resource[gizmoV1beta1]{Group: "toys.example.com", Version: "v1beta1", Kind: "Gizmo", Plural: "gizmos", Status: true, Conversion: gizmoToV1}
}

// TestVersionRegisterErrors: every way to misconfigure the versions of a
// kind is an error from the builder, never a panic or a server that
// answers wrongly. What one registration shows is Register's error; what
// needs every version (one storage version, a path to the hub) is
// Complete's, and a server whose Complete fails answers 503 with it.
func TestVersionRegisterErrors(t *testing.T) {
	type step func(*apiserver.Server) error
	v1 := func(change func(*apiserver.Resource[gizmo])) step {
		return func(s *apiserver.Server) error {
			r := gizmoV1()
			if change != nil {
				change(&r)
			}
			return apiserver.Register(s, r)
		}
	}
	beta := func(change func(*apiserver.Resource[gizmoV1beta1])) step {
		return func(s *apiserver.Server) error {
			r := gizmoBeta()
			if change != nil {
				change(&r)
			}
			return apiserver.Register(s, r)
		}
	}
	cases := []struct {
		name     string
		steps    []step
		atComple bool   // the last step succeeds; Complete fails
		want     string // in the error
	}{
		{name: "a version twice", steps: []step{v1(nil), v1(func(r *apiserver.Resource[gizmo]) { r.Storage = false })}, want: "registered twice"},
		{name: "another plural", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Plural = "gizmoes" })}, want: "plural differs"},
		{name: "another singular", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Singular = "gizmoe" })}, want: "singular differs"},
		{name: "another scope", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Namespaced = true })}, want: "namespaced differs"},
		{name: "other short names", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.ShortNames = []string{"gz"} })}, want: "short names differ"},
		{name: "other categories", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Categories = []string{"all"} })}, want: "categories differ"},
		{name: "no status subresource", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Status = false })}, want: "status subresource differs"},
		{name: "a scale subresource", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) {
			r.Scale = &apiserver.ScalePaths{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas"}
		})}, want: "scale subresource differs"},
		{name: "another kind's plural", steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Kind = "Gadget" })}, want: "clashes"},

		{name: "no storage version", atComple: true, steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.Storage = false }), beta(nil)}, want: "no version is the storage version"},
		{name: "two storage versions", atComple: true, steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Storage = true })}, want: "both the storage version"},
		{name: "no conversion", atComple: true, steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Conversion = apiserver.Conversion{} })}, want: "no version has a conversion"},
		{name: "a conversion to a hub without one from the other version", atComple: true,
			steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Conversion = gizmoV1beta1ToHub })}, want: "no conversion to and from the hub"},
		{name: "two hubs", atComple: true, steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.Conversion = gizmoV1ToHub }), beta(nil)}, want: "all convert through one hub"},
		{name: "a conversion of another type", atComple: true,
			steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.Conversion = gizmoV1beta1ToHub }), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.Conversion = gizmoV1beta1ToHub })},
			want:  "not for its type"},
		{name: "a conversion one way only", atComple: true, steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) {
			r.Conversion = apiserver.ConvertVia[gizmoV1beta1, gizmo](nil, func(*gizmo, *gizmoV1beta1) error { return nil })
		})}, want: "without both directions"},
		{name: "no served version", atComple: true, steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.NotServed = true }), beta(func(r *apiserver.Resource[gizmoV1beta1]) { r.NotServed = true })}, want: "no version is served"},
		{name: "validation on another version than storage", atComple: true, steps: []step{v1(nil), beta(func(r *apiserver.Resource[gizmoV1beta1]) {
			r.Validate = func(context.Context, *gizmoV1beta1, *gizmoV1beta1) apiserver.FieldErrors { return nil }
		})}, want: "run on the storage version"},
		// One type for every version without conversions is strategy
		// None (package kinds); with a conversion it is a mistake.
		{name: "two versions of one type, one converting", atComple: true, steps: []step{v1(nil), func(s *apiserver.Server) error {
			r := gizmoV1()
			r.Version, r.Storage = "v2", false
			r.Conversion = apiserver.ConvertVia[gizmo, gizmo](func(*gizmo, *gizmo) error { return nil }, func(*gizmo, *gizmo) error { return nil })
			return apiserver.Register(s, r)
		}}, want: "same type"},
		{name: "no plural", steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.Plural = "" })}, want: "Plural is required"},
		{name: "a plural not a DNS label", steps: []step{v1(func(r *apiserver.Resource[gizmo]) { r.Plural = "Gizmos" })}, want: `plural "Gizmos" is not a lower-case DNS-1123 label`},
		{name: "register after Complete", steps: []step{func(s *apiserver.Server) error { return s.Complete() }, v1(nil)}, want: "too late: Register must be called before Complete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := apiserver.New(apiserver.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var last error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				for i, step := range tc.steps {
					last = step(s)
					if last != nil && i < len(tc.steps)-1 {
						t.Fatalf("step %d: %v", i, last)
					}
				}
				if tc.atComple {
					if last != nil {
						t.Fatalf("Register: %v; want it to succeed and Complete to fail", last)
					}
					last = s.Complete()
				}
			}()
			if last == nil || !strings.Contains(last.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", last, tc.want)
			}
			t.Logf("error (as expected): %v", last)
			if !tc.atComple {
				return
			}
			if again := s.Complete(); again == nil || again.Error() != last.Error() {
				t.Errorf("Complete again: %v, want the first answer", again)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis", nil))
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("a request to the incomplete server: HTTP %d %s, want 503 with the error", rec.Code, rec.Body)
			}
		})
	}

	t.Run("ServeHTTP completes registration", func(t *testing.T) {
		s, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := errors.Join(apiserver.Register(s, gizmoV1()), apiserver.Register(s, gizmoBeta())); err != nil {
			t.Fatal(err)
		}
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if err := s.Complete(); err != nil {
			t.Fatalf("Complete after serving: %v", err)
		}
		if err := apiserver.Register(s, apiserver.Resource[gadget]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"}); err == nil {
			t.Error("Register after serving began succeeded")
		}
	})

	t.Run("the hub of no version", func(t *testing.T) {
		s, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v1 := gizmoV1()
		v1.Conversion = gizmoV1ToHub
		b := gizmoBeta()
		b.Conversion = gizmoV1beta1ToHub
		if err := errors.Join(apiserver.Register(s, v1), apiserver.Register(s, b), s.Complete()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("one version needs no Storage", func(t *testing.T) {
		s, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r := gizmoV1()
		r.Storage = false
		if err := errors.Join(apiserver.Register(s, r), s.Complete()); err != nil {
			t.Fatal(err)
		}
	})
}
