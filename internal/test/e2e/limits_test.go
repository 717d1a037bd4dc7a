package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/fairness"
)

// gate is a resource whose validation of the object named "held" waits
// until the test opens the gate.
type gate struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
}

// TestClientGoRetriesTooManyRequests: client-go reads kapi's 429 (a Status
// with Retry-After) as kube-apiserver's, waits and retries, and succeeds
// once the load is gone, without the caller seeing an error.
func TestClientGoRetriesTooManyRequests(t *testing.T) {
	retriesTooManyRequests(t, apiserver.WithMaxMutatingRequestsInFlight(1), nil)
}

// TestClientGoRetriesFairnessRejections: the same under WithFairness, whose
// 429 names the flow schema and priority level as kube-apiserver's API
// Priority and Fairness does (client-go puts the schema's UID in its retry
// message).
func TestClientGoRetriesFairnessRejections(t *testing.T) {
	cfg := fairness.Default(1)
	for i := range cfg.Levels {
		cfg.Levels[i].Seats, cfg.Levels[i].QueueLength = 1, 0 // one at a time, the excess refused at once
	}
	retriesTooManyRequests(t, apiserver.WithFairness(cfg), func(t *testing.T, resp *http.Response) {
		if resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == "" || resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == "" {
			t.Errorf("429 without the flow schema and priority level UIDs: %v", resp.Header)
		}
	})
}

// retriesTooManyRequests holds the only slot of a server with opt, and
// checks that client-go retries the 429 a second create gets, and that
// check (if any) accepts the 429.
func retriesTooManyRequests(t *testing.T, opt apiserver.Option, check func(*testing.T, *http.Response)) {
	entered, open := make(chan struct{}, 1), make(chan struct{})
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[gate]{
			Group: "faults.example.com", Version: "v1", Kind: "Gate", Plural: "gates",
			Validate: func(_ context.Context, g, _ *gate) apiserver.FieldErrors {
				if g.Name == "held" {
					entered <- struct{}{}
					<-open
				}
				return nil
			},
		})
	}, opt)
	var opened bool
	openGate := func() {
		if !opened {
			opened = true
			close(open)
		}
	}
	t.Cleanup(openGate)

	var log requestLog
	saw429 := make(chan struct{})
	cfg := restConfig(&server{URL: srv.URL}, &log)
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := inner(next).RoundTrip(req)
			if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
				if check != nil {
					check(t, resp)
				}
				select {
				case saw429 <- struct{}{}:
				default:
				}
			}
			return resp, err
		})
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gates := client.Resource(schema.GroupVersionResource{Group: "faults.example.com", Version: "v1", Resource: "gates"})
	object := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "faults.example.com/v1", "kind": "Gate", "metadata": map[string]any{"name": name},
		}}
	}

	held := make(chan error, 1)
	go func() {
		_, err := gates.Create(ctxFor(t, time.Minute), object("held"), metav1.CreateOptions{})
		held <- err
	}()
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the first create never reached validation")
	}

	queued := make(chan error, 1)
	go func() {
		_, err := gates.Create(ctxFor(t, time.Minute), object("queued"), metav1.CreateOptions{})
		queued <- err
	}()
	select {
	case <-saw429:
	case err := <-queued:
		t.Fatalf("the second create returned (%v) while the only mutating slot was taken", err)
	case <-time.After(time.Minute):
		t.Fatal("no 429 while the only mutating slot was taken")
	}
	openGate()
	if err := <-held; err != nil {
		t.Errorf("held create: %v", err)
	}
	if err := <-queued; err != nil {
		t.Errorf("queued create: %v (client-go did not retry the 429)", err)
	}
	var codes []int
	for _, r := range log.all() {
		if r.Method == http.MethodPost {
			codes = append(codes, r.Status)
		}
	}
	if !slices.Contains(codes, http.StatusTooManyRequests) || codes[len(codes)-1] != http.StatusCreated {
		t.Errorf("POST codes %v, want a 429 then 201s", codes)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
