package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

func scaleOf(t *testing.T, r *response) apiserver.Scale {
	t.Helper()
	var s apiserver.Scale
	r.mustCode(t, http.StatusOK).into(t, &s)
	if s.Kind != "Scale" || s.APIVersion != "autoscaling/v1" {
		t.Fatalf("kind %q apiVersion %q, want Scale autoscaling/v1", s.Kind, s.APIVersion)
	}
	return s
}

func TestScaleSubresource(t *testing.T) {
	_, c := newTestServer(t)
	w := newWidget("default", "a")
	w.Spec.Replicas = ptr(int32(2))
	created := c.create(w)
	c.do(http.MethodPatch, widgetPath("default", "a")+"/status", `{"status":{"replicas":2,"selector":"app=a"}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	scalePath := widgetPath("default", "a") + "/scale"

	s := scaleOf(t, c.get(scalePath))
	if s.Name != "a" || s.Namespace != "default" || s.UID != created.UID || s.Spec.Replicas != 2 || s.Status.Replicas != 2 || s.Status.Selector != "app=a" {
		t.Fatalf("GET scale: %+v", s)
	}

	t.Run("patch", func(t *testing.T) {
		s := scaleOf(t, c.do(http.MethodPatch, scalePath, `{"spec":{"replicas":3}}`, "Content-Type", "application/merge-patch+json"))
		if s.Spec.Replicas != 3 || s.Status.Replicas != 2 {
			t.Errorf("after patch: %+v", s)
		}
		got := c.read("default", "a")
		if *got.Spec.Replicas != 3 || got.Generation != created.Generation+1 || got.Status.Replicas != 2 || got.Spec.Color != "Red" {
			t.Errorf("the widget after scaling: replicas %d generation %d (was %d) status %+v color %q", *got.Spec.Replicas, got.Generation, created.Generation, got.Status, got.Spec.Color)
		}
		if s.ResourceVersion != got.ResourceVersion {
			t.Errorf("scale resourceVersion %s, object's %s", s.ResourceVersion, got.ResourceVersion)
		}
		if created.Spec.Replicas == nil || *created.Spec.Replicas != 2 {
			t.Errorf("the object read before changed")
		}
		s = scaleOf(t, c.do(http.MethodPatch, scalePath, `[{"op":"replace","path":"/spec/replicas","value":5}]`, "Content-Type", "application/json-patch+json"))
		if s.Spec.Replicas != 5 {
			t.Errorf("after json patch: %+v", s)
		}
	})

	t.Run("put", func(t *testing.T) {
		s := scaleOf(t, c.get(scalePath))
		stale := s
		s.Spec.Replicas = 7
		s = scaleOf(t, c.do(http.MethodPut, scalePath, s))
		if s.Spec.Replicas != 7 {
			t.Errorf("after put: %+v", s)
		}
		stale.Spec.Replicas = 1
		c.do(http.MethodPut, scalePath, stale).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		stale.ResourceVersion = "" // no precondition: last write wins
		if s := scaleOf(t, c.do(http.MethodPut, scalePath, stale)); s.Spec.Replicas != 1 {
			t.Errorf("unconditional put: %+v", s)
		}
	})

	t.Run("errors", func(t *testing.T) {
		st := c.do(http.MethodPatch, scalePath, `{"spec":{"replicas":-1}}`, "Content-Type", "application/merge-patch+json").
			failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if !strings.HasPrefix(st.Message, `Scale.autoscaling "a" is invalid: spec.replicas`) {
			t.Errorf("message %q", st.Message)
		}
		c.do(http.MethodPatch, scalePath, `{"spec":{"replicas":"many"}}`, "Content-Type", "application/merge-patch+json").
			failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		c.do(http.MethodPut, scalePath, `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}}`).
			failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		c.do(http.MethodPatch, scalePath, `{"spec":{"replicas":2}}`, "Content-Type", "application/apply-patch+yaml").
			failure(t, http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType)
		c.get(widgetPath("default", "missing")+"/scale").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
		c.do(http.MethodDelete, scalePath, nil).failure(t, http.StatusMethodNotAllowed, kapi.StatusReasonMethodNotAllowed)
		c.get(groupVersionPath+"/widgetclasses/x/scale").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
		if got := c.read("default", "a"); *got.Spec.Replicas != 1 {
			t.Errorf("a refused scale changed the widget: %d", *got.Spec.Replicas)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		before := c.read("default", "a")
		s := scaleOf(t, c.do(http.MethodPatch, scalePath+"?dryRun=All", `{"spec":{"replicas":9}}`, "Content-Type", "application/merge-patch+json"))
		if s.Spec.Replicas != 9 {
			t.Errorf("dry run answered %+v", s)
		}
		if after := c.read("default", "a"); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("a dry run changed the widget")
		}
	})

	t.Run("discovery", func(t *testing.T) {
		body := string(c.get(groupVersionPath).mustCode(t, http.StatusOK).Body)
		if !strings.Contains(body, `{"name":"widgets/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}`) {
			t.Errorf("discovery lacks widgets/scale: %s", body)
		}
		agg := string(c.do(http.MethodGet, "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").mustCode(t, http.StatusOK).Body)
		if !strings.Contains(agg, `{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]}`) {
			t.Errorf("aggregated discovery lacks scale: %s", agg)
		}
	})
}

func TestScaleRegistrationErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths apiserver.ScalePaths
		want  string
	}{
		{"not under spec", apiserver.ScalePaths{SpecReplicas: ".status.replicas", StatusReplicas: ".status.replicas"}, "must start with .spec."},
		{"no such field", apiserver.ScalePaths{SpecReplicas: ".spec.count", StatusReplicas: ".status.replicas"}, `no field "count"`},
		{"not an integer", apiserver.ScalePaths{SpecReplicas: ".spec.color", StatusReplicas: ".status.replicas"}, "not a int32"},
		{"selector not a string", apiserver.ScalePaths{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas", LabelSelector: ".status.replicas"}, "not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := apiserver.New()
			if err != nil {
				t.Fatal(err)
			}
			err = apiserver.Register(s, apiserver.Resource[widgetapi.Widget]{
				Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, Status: true,
				Scale: &tc.paths,
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
