package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// managers lists "manager/operation/subresource: fieldsV1" per entry.
func managers(t *testing.T, w *widgetapi.Widget) []string {
	t.Helper()
	var out []string
	for _, e := range w.ManagedFields {
		// A write through /scale has no time, as in kube-apiserver.
		if e.FieldsType != "FieldsV1" || (e.Time == nil) != (e.Subresource == "scale") || e.APIVersion != "example.com/v1" || e.FieldsV1 == nil {
			t.Errorf("entry %+v lacks fieldsType, time, apiVersion or fieldsV1", e)
			continue
		}
		out = append(out, e.Manager+"/"+e.Operation+"/"+e.Subresource+": "+string(e.FieldsV1.Raw))
	}
	return out
}

func applyWidget(c *apiClient, ns, name, manager, doc string, extra ...string) *response {
	c.t.Helper()
	q := "?fieldManager=" + manager
	for _, e := range extra {
		q += "&" + e
	}
	return c.do(http.MethodPatch, widgetPath(ns, name)+q, doc, "Content-Type", "application/apply-patch+yaml")
}

func TestManagedFields(t *testing.T) {
	_, c := newTestServer(t)

	t.Run("every write records its manager", func(t *testing.T) {
		created := c.do(http.MethodPost, widgetsIn("default")+"?fieldManager=creator", newWidget("default", "u"),
			"User-Agent", "ignored/1.0").mustCode(t, http.StatusCreated).widget(t)
		if got := managers(t, created); len(got) != 1 || !strings.HasPrefix(got[0], `creator/Update/: {"f:spec":{".":{},"f:color":{},"f:replicas":{}}}`) {
			t.Errorf("after create: %q", got)
		}
		// Without fieldManager the User-Agent names the manager, up to its "/".
		patched := c.do(http.MethodPatch, widgetPath("default", "u"), `{"metadata":{"labels":{"app":"u"}}}`,
			"Content-Type", "application/merge-patch+json", "User-Agent", "labeller/v9 (linux)").mustCode(t, http.StatusOK).widget(t)
		c.do(http.MethodPatch, widgetPath("default", "u")+"/status?fieldManager=ctrl", `{"status":{"replicas":1}}`,
			"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
		c.do(http.MethodPatch, widgetPath("default", "u")+"/scale?fieldManager=hpa", `{"spec":{"replicas":4}}`,
			"Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
		// Sorted: Kubernetes orders entries by time (to the second), then manager.
		got := sorted(managers(t, c.read("default", "u")))
		want := []string{
			`creator/Update/: {"f:spec":{".":{},"f:color":{}}}`,
			`ctrl/Update/status: {"f:status":{"f:replicas":{}}}`,
			`hpa/Update/scale: {"f:spec":{"f:replicas":{}}}`,
			`labeller/Update/: {"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`,
		}
		if !equalStrings(got, want) {
			t.Errorf("managed fields\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// A write that changes nothing stores nothing, managed fields included.
		again := c.do(http.MethodPatch, widgetPath("default", "u"), `{"metadata":{"labels":{"app":"u"}}}`,
			"Content-Type", "application/merge-patch+json", "User-Agent", "someone-else").mustCode(t, http.StatusOK).widget(t)
		if again.ResourceVersion == patched.ResourceVersion {
			t.Fatalf("setup: the status and scale writes did not move the resourceVersion")
		}
		if again.ResourceVersion != c.read("default", "u").ResourceVersion || len(managers(t, again)) != 4 {
			t.Errorf("a no-op patch wrote: %q", managers(t, again))
		}
	})

	t.Run("apply by two managers", func(t *testing.T) {
		alice := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"color":"Red","replicas":2,"ports":[{"name":"http","port":80}]}}`
		applyWidget(c, "default", "s", "alice", alice).mustCode(t, http.StatusCreated)
		again := applyWidget(c, "default", "s", "alice", alice).mustCode(t, http.StatusOK).widget(t)
		if second := applyWidget(c, "default", "s", "alice", alice).mustCode(t, http.StatusOK).widget(t); second.ResourceVersion != again.ResourceVersion {
			t.Errorf("applying the same configuration again wrote a new version")
		}

		bob := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"replicas":5}}`
		st := applyWidget(c, "default", "s", "bob", bob).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		if want := `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.replicas" ||
			st.Details.Causes[0].Type != kapi.CauseTypeFieldManagerConflict || !strings.Contains(st.Details.Causes[0].Message, `"alice"`) {
			t.Errorf("details %+v", st.Details)
		}
		if got := c.read("default", "s"); *got.Spec.Replicas != 2 {
			t.Errorf("a conflicting apply changed replicas to %d", *got.Spec.Replicas)
		}
		// The same value is shared ownership, not a conflict.
		applyWidget(c, "default", "s", "carol", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"replicas":2}}`).mustCode(t, http.StatusOK)

		forced := applyWidget(c, "default", "s", "bob", bob, "force=true").mustCode(t, http.StatusOK).widget(t)
		if *forced.Spec.Replicas != 5 {
			t.Errorf("forced apply: replicas %d", *forced.Spec.Replicas)
		}
		got := managers(t, forced)
		want := []string{
			`alice/Apply/: {"f:spec":{"f:color":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}}}}`,
			`bob/Apply/: {"f:spec":{"f:replicas":{}}}`,
		}
		if !equalStrings(got, want) {
			t.Errorf("managed fields after force\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		// A field alice applied and now leaves out is removed: nobody else owns it.
		applyWidget(c, "default", "s", "alice", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"color":"Red"}}`).mustCode(t, http.StatusOK)
		if got := c.read("default", "s"); len(got.Spec.Ports) != 0 || *got.Spec.Replicas != 5 {
			t.Errorf("after alice dropped ports: ports %v replicas %d", got.Spec.Ports, *got.Spec.Replicas)
		}
	})

	t.Run("reset and bad options", func(t *testing.T) {
		w := c.read("default", "s")
		w.ManagedFields = []kapi.ManagedFieldsEntry{{}}
		w.Spec.Size = 3
		if got := c.update(w); len(got.ManagedFields) != 0 {
			t.Errorf("managedFields [{}] did not reset them: %q", managers(t, got))
		}
		applyWidget(c, "default", "s", "", `{"metadata":{"name":"s"}}`).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid) // kube's PatchOptions
		applyWidget(c, "default", "s", strings.Repeat("m", 129), `{"metadata":{"name":"s"}}`).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		applyWidget(c, "default", "s", "m", `{"metadata":{"name":"other"}}`).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		applyWidget(c, "default", "s", "m", `{"spec":{"ports":[{"port":80}]}}`).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		applyWidget(c, "default", "s", "m", `[1,2]`).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
	})

	// A patch that names managedFields (even through an escape) sets them
	// as an update would; one that does not leaves them to be recorded.
	t.Run("patches of managedFields", func(t *testing.T) {
		c.do(http.MethodPost, widgetsIn("default")+"?fieldManager=creator", newWidget("default", "mf"), "Content-Type", "application/json").mustCode(t, http.StatusCreated)
		patch := func(contentType, doc string) *widgetapi.Widget {
			t.Helper()
			return c.do(http.MethodPatch, widgetPath("default", "mf")+"?fieldManager=patcher", doc, "Content-Type", contentType).mustCode(t, http.StatusOK).widget(t)
		}
		if got := managers(t, patch("application/merge-patch+json", `{"spec":{"size":4}}`)); !equalStrings(sorted(got), []string{
			`creator/Update/: {"f:spec":{".":{},"f:color":{},"f:replicas":{}}}`,
			`patcher/Update/: {"f:spec":{"f:size":{}}}`,
		}) {
			t.Errorf("after a patch of spec: %q", got)
		}
		for _, p := range []struct{ contentType, doc string }{
			{"application/merge-patch+json", `{"metadata":{"managedFields":[{}]},"spec":{"size":5}}`},
			{"application/merge-patch+json", `{"metadata":{"managedField\u0073":[{}]},"spec":{"size":6}}`},
			{"application/strategic-merge-patch+json", `{"metadata":{"\u006danagedFields":[{}]},"spec":{"size":7}}`},
			{"application/json-patch+json", `[{"op":"replace","path":"/metadata/managedFields","value":[{}]},{"op":"replace","path":"/spec/size","value":8}]`},
		} {
			if got := patch(p.contentType, p.doc); len(got.ManagedFields) != 0 {
				t.Errorf("%s %s did not reset managedFields: %q", p.contentType, p.doc, managers(t, got))
			}
			// Updates of an object without managedFields record none, as
			// kube-apiserver's (skipNonAppliedManager); an apply does.
			applyWidget(c, "default", "mf", "owner", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"mf"},"spec":{"size":1}}`, "force=true").mustCode(t, http.StatusOK)
		}
	})

	// A JSON patch may read managedFields without naming them.
	t.Run("JSON patch test of metadata", func(t *testing.T) {
		got := c.read("default", "mf")
		if len(got.ManagedFields) == 0 {
			t.Fatal("no managedFields to test against")
		}
		meta := got.ObjectMeta
		meta.ManagedFields = nil // as kubectl shows an object
		m, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		c.do(http.MethodPatch, widgetPath("default", "mf"), `[{"op":"test","path":"/metadata","value":`+string(m)+`},{"op":"replace","path":"/spec/size","value":9}]`,
			"Content-Type", "application/json-patch+json").failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	})

	t.Run("dry run", func(t *testing.T) {
		before := c.read("default", "s")
		r := applyWidget(c, "default", "s", "dave", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"size":9}}`, "dryRun=All", "force=true").mustCode(t, http.StatusOK).widget(t)
		var names []string
		for _, e := range r.ManagedFields {
			names = append(names, e.Manager)
		}
		if !strings.Contains(strings.Join(names, ","), "dave") {
			t.Errorf("the dry-run answer lacks dave's entry: %v", names)
		}
		after := c.read("default", "s")
		a, _ := json.Marshal(after)
		b, _ := json.Marshal(before)
		if string(a) != string(b) {
			t.Errorf("a dry-run apply changed the object")
		}
	})
}
