package widgetapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/apiserver"
)

// Register adds widgets and widget classes to srv.
func Register(srv *apiserver.Server) error {
	return errors.Join(
		apiserver.Register(srv, apiserver.Resource[Widget]{
			Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
			Namespaced: true, ShortNames: []string{"wd"}, Status: true,
			Scale:            &apiserver.ScalePaths{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas", LabelSelector: ".status.selector"},
			Validate:         validateWidget,
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
		apiserver.Register(srv, apiserver.Resource[WidgetClass]{
			Group: "example.com", Version: "v1", Kind: "WidgetClass", Plural: "widgetclasses",
		}),
	)
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
