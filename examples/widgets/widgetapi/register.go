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
			Namespaced: true, ShortNames: []string{"wd"}, Status: true,
			Scale:   widgetScale(),
			Default: defaultWidget, Validate: validate,
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
			Validate: validateWidgetClass,
		}),
	)
}

// widgetScale maps the scale subresource, the same in every version.
func widgetScale() *apiserver.ScalePaths {
	return &apiserver.ScalePaths{SpecReplicas: ".spec.replicas", StatusReplicas: ".status.replicas", LabelSelector: ".status.selector"}
}

func defaultWidget(w *Widget) {
	if w.Spec.Replicas == nil {
		one := int32(1)
		w.Spec.Replicas = &one
	}
	for i := range w.Spec.Ports {
		if w.Spec.Ports[i].Protocol == "" {
			w.Spec.Ports[i].Protocol = "TCP"
		}
	}
}

func validateWidget(_ context.Context, w, _ *Widget) apiserver.FieldErrors {
	var errs apiserver.FieldErrors
	switch w.Spec.Color {
	case "red", "green", "blue":
	case "":
		errs = append(errs, apiserver.Required("spec.color", ""))
	default:
		errs = append(errs, apiserver.NotSupported("spec.color", w.Spec.Color, "red", "green", "blue"))
	}
	if r := w.Spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, apiserver.Invalid("spec.replicas", *r, "must be greater than or equal to 0"))
	}
	if w.Spec.Size < 0 {
		errs = append(errs, apiserver.Invalid("spec.size", w.Spec.Size, "must be greater than or equal to 0"))
	}
	seen := map[string]bool{}
	for i, p := range w.Spec.Ports {
		path := fmt.Sprintf("spec.ports[%d]", i)
		switch {
		case p.Name == "":
			errs = append(errs, apiserver.Required(path+".name", ""))
		case seen[p.Name]:
			errs = append(errs, apiserver.Duplicate(path+".name", p.Name))
		}
		seen[p.Name] = true
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, apiserver.Invalid(path+".port", p.Port, "must be between 1 and 65535, inclusive"))
		}
		switch p.Protocol {
		case "TCP", "UDP", "SCTP":
		default:
			errs = append(errs, apiserver.NotSupported(path+".protocol", p.Protocol, "TCP", "UDP", "SCTP"))
		}
	}
	if w.Status.Replicas < 0 {
		errs = append(errs, apiserver.Invalid("status.replicas", w.Status.Replicas, "must be greater than or equal to 0"))
	}
	return errs
}

func validateWidgetClass(_ context.Context, c, _ *WidgetClass) apiserver.FieldErrors {
	if c.Spec.MaxReplicas < 0 {
		return apiserver.FieldErrors{apiserver.Invalid("spec.maxReplicas", c.Spec.MaxReplicas, "must be greater than or equal to 0")}
	}
	return nil
}
