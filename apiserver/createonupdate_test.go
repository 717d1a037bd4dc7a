package apiserver_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

const leasesPath = "/apis/coordination.k8s.io/v1/namespaces/default/leases"

// newLease is a Lease as client-go's leader election writes one.
func newLease(name, holder string) map[string]any {
	return map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"holderIdentity": holder, "leaseDurationSeconds": 15},
	}
}

func newCreateOnUpdateServer(t *testing.T, opts ...apiserver.Option) *apiClient {
	t.Helper()
	srv := apiservertest.New(t, widgetapi.Register, append([]apiserver.Option{apiserver.WithLeases(), apiserver.WithEvents()}, opts...)...)
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// TestCreateOnUpdate: a PUT to a missing Lease or Event creates it, as
// kube-apiserver's lease and event strategies allow (AllowCreateOnUpdate):
// 201, server-set metadata, managedFields as a create records them, and
// admission sees a create; a PUT to a missing widget stays 404, as for a
// custom resource.
func TestCreateOnUpdate(t *testing.T) {
	var mu sync.Mutex
	var ops []string
	seen := func(_ context.Context, req *apiserver.AdmissionRequest) error {
		mu.Lock()
		defer mu.Unlock()
		old := "nil"
		if req.OldObject != nil {
			old = "old"
		}
		ops = append(ops, string(req.Operation)+" "+req.Resource+" "+old)
		return nil
	}
	c := newCreateOnUpdateServer(t, apiserver.WithMutatingAdmission(seen), apiserver.WithValidatingAdmission(seen))

	body := newLease("l1", "a")
	body["metadata"].(map[string]any)["resourceVersion"] = "999999" // ignored on a create, as kube's store does
	r := c.do(http.MethodPut, leasesPath+"/l1?fieldManager=elector", body).mustCode(t, http.StatusCreated)
	var got builtin.Lease
	r.into(t, &got)
	if got.UID == "" || got.CreationTimestamp.IsZero() || got.Generation != 1 || got.ResourceVersion == "999999" {
		t.Errorf("created lease metadata %+v: want a uid, a creationTimestamp, generation 1 and the server's resourceVersion", got.ObjectMeta)
	}
	mustRevision(t, "resourceVersion", got.ResourceVersion)
	if *got.Spec.HolderIdentity != "a" {
		t.Errorf("holder %q", *got.Spec.HolderIdentity)
	}
	if mf := got.ManagedFields; len(mf) != 1 || mf[0].Manager != "elector" || mf[0].Operation != "Update" {
		t.Errorf("managedFields %+v, want one Update entry of elector, as a create records", mf)
	}
	mu.Lock()
	if want := []string{"CREATE leases nil", "CREATE leases nil"}; strings.Join(ops, ",") != strings.Join(want, ",") {
		t.Errorf("admission saw %q, want %q", ops, want)
	}
	ops = nil
	mu.Unlock()

	// Now it exists: a PUT updates it (200), admitted as an update.
	body = newLease("l1", "b")
	r = c.do(http.MethodPut, leasesPath+"/l1", body).mustCode(t, http.StatusOK)
	var updated builtin.Lease
	r.into(t, &updated)
	if updated.UID != got.UID || *updated.Spec.HolderIdentity != "b" {
		t.Errorf("updated lease %+v, want the same uid %s and holder b", updated, got.UID)
	}
	mu.Lock()
	if len(ops) != 2 || ops[0] != "UPDATE leases old" {
		t.Errorf("admission saw %q, want updates", ops)
	}
	mu.Unlock()

	// Both Event APIs allow it too; the event written through
	// events.k8s.io is the core event.
	ev := map[string]any{
		"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"metadata":            map[string]any{"name": "e1", "namespace": "default"},
		"eventTime":           "2026-01-02T03:04:05.000000Z",
		"reportingController": "x.example.com/c", "reportingInstance": "i", "action": "Paint", "reason": "Painted",
		"regarding": map[string]any{"kind": "Widget", "name": "w", "namespace": "default"},
		"note":      "n", "type": "Normal",
	}
	c.do(http.MethodPut, "/apis/events.k8s.io/v1/namespaces/default/events/e1", ev).mustCode(t, http.StatusCreated)
	c.get("/api/v1/namespaces/default/events/e1").mustCode(t, http.StatusOK)
	core := map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "e2", "namespace": "default"},
		"involvedObject": map[string]any{"kind": "Widget", "name": "w", "namespace": "default"},
		"reason":         "Painted", "message": "m", "type": "Normal",
	}
	c.do(http.MethodPut, "/api/v1/namespaces/default/events/e2", core).mustCode(t, http.StatusCreated)

	// A registered resource does not, unless it asks.
	st := c.do(http.MethodPut, widgetPath("default", "missing"), newWidget("default", "missing")).failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if st.Message != `widgets.example.com "missing" not found` {
		t.Errorf("message %q", st.Message)
	}
}

// TestCreateOnUpdatePreconditions: a uid in the body of a PUT to a missing
// object is a precondition it cannot meet (409, as kube's storage checks
// preconditions before creating); a dry run creates nothing; a status
// subresource is never created.
func TestCreateOnUpdatePreconditions(t *testing.T) {
	c := newCreateOnUpdateServer(t)
	body := newLease("l2", "a")
	body["metadata"].(map[string]any)["uid"] = "6b2f4b5e-0000-4000-8000-000000000000"
	st := c.do(http.MethodPut, leasesPath+"/l2", body).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
	// kube-apiserver v1.37.2 answers its storage's refusal (a StorageError,
	// code 4, turned into a Conflict), with the object in the details:
	//   Operation cannot be fulfilled on leases.coordination.k8s.io "l2": StorageError: invalid object, Code: 4,
	//   Key: /registry/leases/default/l2, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in
	//   precondition: 1234, UID in object meta:
	// kapi's key is its own storage key.
	uidFailed := regexp.MustCompile(`^Operation cannot be fulfilled on leases\.coordination\.k8s\.io "l2": StorageError: invalid object, Code: 4, Key: /\S+/default/l2, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 6b2f4b5e-0000-4000-8000-000000000000, UID in object meta: (\S*)$`)
	if m := uidFailed.FindStringSubmatch(st.Message); m == nil || m[1] != "" {
		t.Errorf("message %q, want kube's", st.Message)
	}
	if d := st.Details; d == nil || d.Name != "l2" || d.Group != "coordination.k8s.io" || d.Kind != "leases" {
		t.Errorf("details %+v, want the lease's", st.Details)
	}
	c.get(leasesPath+"/l2").mustCode(t, http.StatusNotFound)

	// An existing object whose uid differs: the same answer, naming its uid.
	created := c.do(http.MethodPut, leasesPath+"/l4", newLease("l4", "a")).mustCode(t, http.StatusCreated)
	var have builtin.Lease
	created.into(t, &have)
	body = newLease("l4", "b")
	body["metadata"].(map[string]any)["uid"] = "6b2f4b5e-0000-4000-8000-000000000000"
	st = c.do(http.MethodPut, leasesPath+"/l4", body).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
	if m := regexp.MustCompile(strings.ReplaceAll(uidFailed.String(), "l2", "l4")).FindStringSubmatch(st.Message); m == nil || m[1] != have.UID {
		t.Errorf("message %q, want kube's naming uid %s", st.Message, have.UID)
	}
	if d := st.Details; d == nil || d.Name != "l4" || d.Kind != "leases" {
		t.Errorf("details %+v, want the lease's", st.Details)
	}

	r := c.do(http.MethodPut, leasesPath+"/l2?dryRun=All", newLease("l2", "a")).mustCode(t, http.StatusCreated)
	var got builtin.Lease
	r.into(t, &got)
	if got.UID == "" || got.Name != "l2" {
		t.Errorf("dry-run answer %+v", got.ObjectMeta)
	}
	c.get(leasesPath+"/l2").mustCode(t, http.StatusNotFound)

	// A body naming another object, or invalid, is refused as on create.
	c.do(http.MethodPut, leasesPath+"/l3", newLease("l2", "a")).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
	bad := newLease("l3", "a")
	bad["metadata"].(map[string]any)["name"] = "l3"
	bad["metadata"].(map[string]any)["labels"] = map[string]any{"-bad-": "x"}
	c.do(http.MethodPut, leasesPath+"/l3", bad).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	c.get(leasesPath+"/l3").mustCode(t, http.StatusNotFound)
}

// TestCreateOnUpdateAuthorization: a PUT that would create asks the
// authorizer for "create" too, as kube-apiserver's update handler does, and
// answers kube's 403 when only "update" is allowed.
func TestCreateOnUpdateAuthorization(t *testing.T) {
	var mu sync.Mutex
	var verbs []string
	noCreate := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		mu.Lock()
		defer mu.Unlock()
		verbs = append(verbs, a.Verb)
		if a.Verb == "create" {
			return apiserver.DecisionNoOpinion, "", nil
		}
		return apiserver.DecisionAllow, "", nil
	})
	c := newCreateOnUpdateServer(t, apiserver.WithAuthentication(bobOnly), apiserver.WithAuthorization(noCreate))
	st := c.do(http.MethodPut, leasesPath+"/l4", newLease("l4", "a")).failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	want := `leases.coordination.k8s.io "l4" is forbidden: User "bob" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"`
	if !strings.HasPrefix(st.Message, want) {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	c.get(leasesPath+"/l4").mustCode(t, http.StatusNotFound)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(verbs, ",") != "update,create,get" {
		t.Errorf("the authorizer was asked %q, want update, create, get", verbs)
	}
}

// TestCreateOnUpdateRace: PUTs racing to create one missing lease all
// succeed: one creates it (201), the others update what it created (200),
// as they would have had they come later.
func TestCreateOnUpdateRace(t *testing.T) {
	c := newCreateOnUpdateServer(t)
	const n = 8
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- c.do(http.MethodPut, leasesPath+"/raced", newLease("raced", "h"+string(rune('a'+i)))).Code
		}()
	}
	wg.Wait()
	close(codes)
	created := 0
	for code := range codes {
		switch code {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			t.Errorf("a racing PUT: HTTP %d", code)
		}
	}
	if created != 1 {
		t.Errorf("%d PUTs created the lease, want 1", created)
	}
}

// TestDeletePreconditionsFailed: a DELETE whose preconditions the object
// does not meet answers kube-apiserver's Conflict, which its registry's
// BeforeDelete words with the kind, not the resource (v1.37.2, a Lease):
//
//	Operation cannot be fulfilled on Lease.coordination.k8s.io "l1": the UID in the precondition (x) does not
//	match the UID in record (f291...). The object might have been deleted and then recreated
//	details {name l1, group coordination.k8s.io, kind Lease}
func TestDeletePreconditionsFailed(t *testing.T) {
	c := newCreateOnUpdateServer(t)
	var l builtin.Lease
	c.do(http.MethodPut, leasesPath+"/l1", newLease("l1", "a")).mustCode(t, http.StatusCreated).into(t, &l)
	for _, tc := range []struct{ preconditions, want string }{
		{`{"uid":"x"}`, `the UID in the precondition (x) does not match the UID in record (` + l.UID + `). The object might have been deleted and then recreated`},
		{`{"resourceVersion":"1"}`, `the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + l.ResourceVersion + `). The object might have been modified`},
	} {
		st := c.do(http.MethodDelete, leasesPath+"/l1", `{"preconditions":`+tc.preconditions+`}`).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		if want := `Operation cannot be fulfilled on Lease.coordination.k8s.io "l1": ` + tc.want; st.Message != want {
			t.Errorf("message %q\nwant    %q", st.Message, want)
		}
		if d := st.Details; d == nil || d.Name != "l1" || d.Group != "coordination.k8s.io" || d.Kind != "Lease" {
			t.Errorf("details %+v, want the lease's kind", st.Details)
		}
	}
	c.get(leasesPath+"/l1").mustCode(t, http.StatusOK)
}
