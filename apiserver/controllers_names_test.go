package apiserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/lifecycle"
)

// TestControllerFieldManagerIsItsName: RunController's doc (before 27accc7)
// promised "name as their field manager"; a controller named with a "/"
// now records its writes as the part before it.
func TestControllerFieldManagerIsItsName(t *testing.T) {
	start := make(chan struct{})
	done := make(chan error, 1)
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		user := apiserver.User{Name: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}
		return s.RunController("acme.io/widget-labeller", user, func(ctx context.Context, o lifecycle.Objects, ready func()) {
			ready()
			select {
			case <-start:
			case <-ctx.Done():
				return
			}
			res := lifecycle.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}
			obj, err := o.Read(ctx, res, "default", "w")
			if err == nil {
				m := obj.GetObjectMeta()
				m.Labels = map[string]string{"labelled": "yes"}
				_, err = o.Update(ctx, res, obj, "")
			}
			done <- err
			<-ctx.Done()
		})
	})
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.do(http.MethodPost, widgetsIn("default")+"?fieldManager=creator", newWidget("default", "w")).mustCode(t, http.StatusCreated)
	close(start)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("controller did not write")
	}
	var got []string
	for _, e := range c.read("default", "w").ManagedFields {
		got = append(got, e.Manager)
	}
	if !strings.Contains(strings.Join(got, ","), "acme.io/widget-labeller") {
		t.Errorf("managers %q: the controller's write is not recorded under its name \"acme.io/widget-labeller\"", got)
	}
}

// Two controllers of one name are refused, as kube-apiserver refuses a
// second post-start hook of a name (AddPostStartHook: "unable to add %q
// because it was already registered by"): they would share a /readyz
// check and a field manager.
func TestControllerNamesAreOne(t *testing.T) {
	var errs []error
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		user := apiserver.User{Name: "system:admin"}
		for _, name := range []string{"team-a/sync", "team-b/sync", "team-a/sync"} {
			errs = append(errs, s.RunController(name, user, func(ctx context.Context, o lifecycle.Objects, ready func()) { ready(); <-ctx.Done() }))
		}
		return nil
	})
	if errs[0] != nil || errs[1] != nil || errs[2] == nil || !strings.Contains(errs[2].Error(), "runs already") {
		t.Errorf("RunController errors %v; want the third, a second team-a/sync, refused", errs)
	}
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	body := string(c.do(http.MethodGet, "/readyz?verbose", nil).Body)
	for _, check := range []string{"[+]poststarthook/team-a/sync ok", "[+]poststarthook/team-b/sync ok"} {
		if strings.Count(body, check) != 1 {
			t.Errorf("/readyz?verbose has %q %d times, want once:\n%s", check, strings.Count(body, check), body)
		}
	}
}
