package crd_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestUpdateNeedsResourceVersion: a definition is updated only with the
// resourceVersion it was read at, as apiextensions-apiserver's strategy
// allows no unconditional update; "0" counts as none, as kube's versioner
// reads it.
func TestUpdateNeedsResourceVersion(t *testing.T) {
	srv := server(t)
	code, c := do(t, srv, "POST", crds, widgets)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	meta := c["metadata"].(map[string]any)
	for _, rv := range []any{nil, "0"} {
		if rv == nil {
			delete(meta, "resourceVersion")
		} else {
			meta["resourceVersion"] = rv
		}
		body, _ := json.Marshal(c)
		code, out := do(t, srv, "PUT", crds+"/widgets.example.com", string(body))
		if msg, _ := out["message"].(string); code != http.StatusUnprocessableEntity ||
			!strings.Contains(msg, "metadata.resourceVersion: Invalid value: 0: must be specified for an update") {
			t.Errorf("PUT with resourceVersion %v: %d %v", rv, code, out)
		}
	}
}
