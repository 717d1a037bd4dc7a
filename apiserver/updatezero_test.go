package apiserver_test

import (
	"net/http"
	"testing"
)

// TestUpdateWithResourceVersionZero: a PUT whose resourceVersion is "0"
// updates a Lease whatever is stored, as one without it does, since
// kube's versioner reads "0" as none (it was a 409 Conflict); a stale
// one is still a conflict.
func TestUpdateWithResourceVersionZero(t *testing.T) {
	c := newCreateOnUpdateServer(t)
	c.do(http.MethodPut, leasesPath+"/l0", newLease("l0", "a")).mustCode(t, http.StatusCreated)
	body := newLease("l0", "b")
	body["metadata"].(map[string]any)["resourceVersion"] = "0"
	c.do(http.MethodPut, leasesPath+"/l0", body).mustCode(t, http.StatusOK)
	body["metadata"].(map[string]any)["resourceVersion"] = "1"
	c.do(http.MethodPut, leasesPath+"/l0", body).mustCode(t, http.StatusConflict)
}
