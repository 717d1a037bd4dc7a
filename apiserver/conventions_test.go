package apiserver_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// sloppy breaks each convention Register advises on.
type sloppy struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            sloppySpec `json:"spec"`
}

type sloppySpec struct {
	Ratio    float64                 `json:"ratio,omitempty"`
	Count    uint64                  `json:"count,omitempty"`
	Replicas int                     `json:"replicas,omitempty"`
	Backends map[string]sloppyTarget `json:"backends,omitempty"`
	Color    string                  `json:"color,omitempty" validate:"enum=Red;light-blue"`
}

type sloppyTarget struct {
	Host string `json:"host"`
}

func (s *sloppy) GetObjectMeta() *kapi.ObjectMeta { return &s.ObjectMeta }
func (s *sloppy) GetTypeMeta() *kapi.TypeMeta     { return &s.TypeMeta }

func registerSloppy(s *apiserver.Server) error {
	return apiserver.Register(s, apiserver.Resource[sloppy]{Group: "example.com", Version: "v1", Kind: "Sloppy", Plural: "sloppies", Namespaced: true})
}

// TestConventionsAdvice: Register logs each convention a type breaks as a
// warning, once, naming the kind, the field and the rule, and the type is
// served all the same; under WithStrictConventions Register refuses it
// with an error wrapping ErrConventions that lists them all.
func TestConventionsAdvice(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	srv := apiservertest.New(t, registerSloppy, apiserver.WithLogger(logger))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.do(http.MethodPost, "/apis/example.com/v1/namespaces/default/sloppies",
		`{"apiVersion":"example.com/v1","kind":"Sloppy","metadata":{"name":"s"},"spec":{"ratio":0.5,"count":3}}`).mustCode(t, http.StatusCreated)
	var warned []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "breaks a Kubernetes API convention") {
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, `kind="example.com/v1, Kind=Sloppy"`) {
				t.Errorf("log line %q", line)
			}
			for _, field := range []string{"spec.ratio", "spec.count", "spec.replicas", "spec.backends", "spec.color"} {
				if strings.Contains(line, "field="+field+" ") {
					warned = append(warned, field)
				}
			}
		}
	}
	if strings.Join(warned, ",") != "spec.ratio,spec.count,spec.replicas,spec.backends,spec.color" {
		t.Errorf("warned of %q; logs:\n%s", warned, logs.String())
	}

	s, err := apiserver.New(apiserver.WithStrictConventions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = registerSloppy(s)
	if !errors.Is(err, apiserver.ErrConventions) {
		t.Fatalf("strict Register: %v, want ErrConventions", err)
	}
	for _, want := range []string{"spec.ratio", "float-in-spec", "spec.count", "unsigned-integer", "spec.replicas", "platform-int", "spec.backends", "map-of-objects", `"light-blue"`, "enum-not-camelcase"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("strict Register's error lacks %q: %v", want, err)
		}
	}
	// A type that keeps the conventions registers under strict too; so do
	// the built-in kinds.
	strict, err := apiserver.New(apiserver.WithStrictConventions(), apiserver.WithLeases(), apiserver.WithEvents(), apiserver.WithNamespaces())
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	if err := registerRequired(strict); err != nil {
		t.Errorf("a conventional type under strict: %v", err)
	}
}

func registerRequired(s *apiserver.Server) error {
	return apiserver.Register(s, apiserver.Resource[requiredKind]{Group: "example.com", Version: "v1", Kind: "Required", Plural: "requireds", Namespaced: true, Status: true})
}
