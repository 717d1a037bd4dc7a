package apiserver_test

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestCreateGenerateNameExhausted: when every name a generateName create
// tries is taken, the answer is kube-apiserver's (apimachinery's
// NewGenerateNameConflict, which its store returns after 8 tries): 409
// AlreadyExists naming the last name tried, with Retry-After: 1. A create
// naming its object stays a plain AlreadyExists without Retry-After.
func TestCreateGenerateNameExhausted(t *testing.T) {
	inner := memory.New()
	t.Cleanup(func() { _ = inner.Close() })
	store := faulty.New(inner)
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.create(newWidget("default", "taken"))

	clear := store.Inject(faulty.Fault{Ops: faulty.Create, Err: storage.ErrExists})
	in := newWidget("default", "")
	in.GenerateName = "gen-"
	r := c.do(http.MethodPost, widgetsIn("default"), in)
	clear()
	st := r.failure(t, http.StatusConflict, kapi.StatusReasonAlreadyExists)
	m := regexp.MustCompile(`^widgets\.example\.com "(gen-[a-z0-9]{5})" already exists, the server was not able to generate a unique name for the object$`).FindStringSubmatch(st.Message)
	if m == nil {
		t.Fatalf("message %q", st.Message)
	}
	if d := st.Details; d == nil || d.Name != m[1] || d.Kind != "widgets" || d.Group != "example.com" || d.RetryAfterSeconds != 1 {
		t.Errorf("details %+v", st.Details)
	}
	if got := r.Header.Get("Retry-After"); got != strconv.Itoa(1) {
		t.Errorf("Retry-After %q, want 1", got)
	}

	r = c.do(http.MethodPost, widgetsIn("default"), newWidget("default", "taken"))
	st = r.failure(t, http.StatusConflict, kapi.StatusReasonAlreadyExists)
	if st.Message != `widgets.example.com "taken" already exists` || r.Header.Get("Retry-After") != "" {
		t.Errorf("a named create of a taken name: %q, Retry-After %q", st.Message, r.Header.Get("Retry-After"))
	}
	if l := c.list(widgetsIn("default")); len(l.Items) != 1 {
		t.Errorf("%d widgets stored, want 1", len(l.Items))
	}
}
