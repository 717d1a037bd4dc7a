package widgetapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/apiserver"
)

// Register adds widgets (v1, the storage version, and v1beta1) and widget
// classes (v1) to srv.
func Register(srv *apiserver.Server) error { return RegisterStoringIn(srv, "v1") }

// RegisterStoringIn is Register with widgets stored in version, v1 or
// v1beta1 (as an older release of the example did): objects stored in
// either are read by both, and Server.MigrateStorage rewrites them in the
// current one. Validation runs on the storage version.
func RegisterStoringIn(srv *apiserver.Server, version string) error {
	if version != "v1" && version != "v1beta1" {
		return fmt.Errorf("widgetapi: widgets are stored in v1 or v1beta1, not %q", version)
	}
	v1beta1 := widgetV1beta1()
	validate := validateWidget
	if version == "v1beta1" {
		v1beta1.Storage, v1beta1.Validate, validate = true, validateWidgetV1beta1, nil
	}
	return errors.Join(
		apiserver.Register(srv, apiserver.Resource[Widget]{
			Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Storage: version == "v1",
			Namespaced: true, ShortNames: []string{"wd"}, Status: true, ApplySetParent: true,
			Scale:            widgetScale(),
			Validate:         validate,
			SelectableFields: []string{"spec.color"},
			Columns: []apiserver.Column[Widget]{
				{Name: "Color", Type: "string", Description: "Color of the widget.", Value: func(w *Widget) any { return w.Spec.Color }},
				{Name: "Replicas", Type: "integer", Description: "Desired number of replicas.", Value: func(w *Widget) any {
					if w.Spec.Replicas == nil {
						return nil
					}
					return *w.Spec.Replicas
				}},
				{Name: "Age", Type: "date", Description: "Time since the widget was created.", Value: func(w *Widget) any { return w.CreationTimestamp }},
			},
		}),
		apiserver.Register(srv, v1beta1),
		apiserver.Register(srv, apiserver.Resource[WidgetClass]{
			Group: "example.com", Version: "v1", Kind: "WidgetClass", Plural: "widgetclasses",
		}),
	)
}

// widgetScale maps the scale subresource, the same in every version.
func widgetScale() *apiserver.ScalePaths {
	return &apiserver.ScalePaths{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas", LabelSelector: ".status.selector"}
}

// validateWidget checks what the tags of the types cannot say: that the
// names of a widget's ports are unique. The tags check the rest (color,
// replicas, size, ports, status.replicas) before it runs.
func validateWidget(_ context.Context, w, _ *Widget) apiserver.FieldErrors {
	var errs apiserver.FieldErrors
	seen := map[string]bool{}
	for i, p := range w.Spec.Ports {
		if p.Name != "" && seen[p.Name] {
			errs = append(errs, apiserver.Duplicate(fmt.Sprintf("spec.ports[%d].name", i), p.Name))
		}
		seen[p.Name] = true
	}
	return errs
}
