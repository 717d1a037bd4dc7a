package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// A patch that sets another uid has no uid
// precondition in kube-apiserver (its patcher's DefaultUpdatedObjectInfo
// has no object, so Preconditions() is nil); the update is then refused by
// ValidateObjectMetaUpdate: 422 "metadata.uid: Invalid value: ...: field is
// immutable".
func TestPatchOfUIDIsImmutable(t *testing.T) {
	_, c := newTestServer(t)
	c.do(http.MethodPost, widgetsIn("default"), newWidget("default", "u")).mustCode(t, http.StatusCreated)
	r := c.do(http.MethodPatch, widgetPath("default", "u"), `{"metadata":{"uid":"00000000-0000-0000-0000-000000000001"}}`,
		"Content-Type", "application/merge-patch+json")
	if r.Code != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `metadata.uid: Invalid value: \"00000000-0000-0000-0000-000000000001\": field is immutable`) {
		t.Errorf("merge patch of uid: %d %s, want 422 (field is immutable)", r.Code, r.Body)
	}
}

// kube-apiserver's update handler gives every PUT,
// a subresource's too, rest.DefaultUpdatedObjectInfo(obj), whose
// Preconditions() carry the body's uid; StatusREST.Update passes them to
// the store's GuaranteedUpdate: 409 "Precondition failed: UID in
// precondition".
func TestStatusPutUIDPrecondition(t *testing.T) {
	_, c := newTestServer(t)
	c.do(http.MethodPost, widgetsIn("default"), newWidget("default", "s")).mustCode(t, http.StatusCreated)
	w := c.read("default", "s")
	w.UID = "00000000-0000-0000-0000-000000000001"
	w.Status.Replicas = 3
	r := c.do(http.MethodPut, widgetPath("default", "s")+"/status", w)
	if r.Code != http.StatusConflict {
		t.Errorf("PUT /status with another uid: %d %.200s, want 409 (uid precondition)", r.Code, r.Body)
	}
}
