package widgetapi

import (
	"context"
	"maps"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/versions"
)

// WidgetV1beta1 is the older, deprecated version of Widget
// (widgets.example.com/v1beta1): its spec has a single optional port
// where v1 has a list of ports.
type WidgetV1beta1 struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   WidgetSpecV1beta1 `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status WidgetStatus      `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// WidgetSpecV1beta1 is the v1beta1 spec: v1's, with Port for Ports.
type WidgetSpecV1beta1 struct {
	Color    string `json:"color" protobuf:"bytes,1,opt,name=color" validate:"required,enum=Red;Green;Blue" description:"Color of the widget: Red, Green or Blue."`
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas" validate:"minimum=0" default:"1" description:"Desired number of replicas; defaults to 1."`
	Size     int32  `json:"size,omitempty" protobuf:"varint,3,opt,name=size" validate:"minimum=0" description:"Size of the widget."`
	// Port is v1's port named "default" (TCP).
	Port     *int32            `json:"port,omitempty" protobuf:"varint,4,opt,name=port" validate:"minimum=1,maximum=65535" description:"The port the widget listens on (TCP)."`
	Selector map[string]string `json:"selector,omitempty" protobuf:"bytes,5,rep,name=selector"`
}

// PortsAnnotation keeps, on a v1beta1 widget, the v1 ports its single port
// cannot hold, so that a v1beta1 client that reads a widget and writes it
// back keeps them (see versions.SaveInAnnotation).
const PortsAnnotation = "widgets.example.com/v1-ports"

// defaultPort is the v1 port a v1beta1 port stands for.
const defaultPort = "default"

// widgetV1beta1 is the registration of v1beta1: served, deprecated,
// converted through v1's Widget, the hub. Names, scope and subresources are
// v1's; columns and defaults (from its tags) are its own; validation is
// v1's, on the converted object (its tags show in its OpenAPI document, and
// check it only when it is the storage version).
func widgetV1beta1() apiserver.Resource[WidgetV1beta1] {
	return apiserver.Resource[WidgetV1beta1]{
		Group: "example.com", Version: "v1beta1", Kind: "Widget", Plural: "widgets",
		Namespaced: true, ShortNames: []string{"wd"}, Status: true,
		Scale:            widgetScale(),
		Deprecated:       true,
		Conversion:       apiserver.ConvertVia(widgetToV1, widgetFromV1),
		SelectableFields: []string{"spec.color", "spec.port"}, // spec.port is v1beta1's alone
		Columns: []apiserver.Column[WidgetV1beta1]{
			{Name: "Color", Type: "string", Description: "Color of the widget.", Value: func(w *WidgetV1beta1) any { return w.Spec.Color }},
			{Name: "Port", Type: "integer", Description: "The port the widget listens on.", Value: func(w *WidgetV1beta1) any {
				if w.Spec.Port == nil {
					return nil
				}
				return *w.Spec.Port
			}},
			{Name: "Age", Type: "date", Description: "Time since the widget was created.", Value: func(w *WidgetV1beta1) any { return w.CreationTimestamp }},
		},
	}
}

// widgetToV1: port P is the port {default, P, TCP}; the other ports come
// back from the annotation fromV1 kept them in.
func widgetToV1(from *WidgetV1beta1, to *Widget) error {
	s := from.Spec
	to.Spec = WidgetSpec{Color: s.Color, Replicas: s.Replicas, Size: s.Size, Selector: s.Selector}
	to.Status = from.Status
	var ports []WidgetPort
	if _, err := versions.RestoreFromAnnotation(to, PortsAnnotation, &ports); err != nil {
		return err
	}
	i := slices.IndexFunc(ports, isDefaultPort)
	switch {
	case s.Port == nil && i >= 0: // the client removed the port
		ports = slices.Delete(ports, i, i+1)
	case s.Port != nil && i >= 0:
		ports[i].Port = *s.Port
	case s.Port != nil:
		ports = append([]WidgetPort{{Name: defaultPort, Port: *s.Port, Protocol: "TCP"}}, ports...)
	}
	to.Spec.Ports = ports
	return nil
}

// widgetFromV1: the TCP port named default is port; ports that are not
// exactly that one are kept whole in an annotation.
func widgetFromV1(from *Widget, to *WidgetV1beta1) error {
	s := from.Spec
	to.Spec = WidgetSpecV1beta1{Color: s.Color, Replicas: s.Replicas, Size: s.Size, Selector: s.Selector}
	to.Status = from.Status
	i := slices.IndexFunc(s.Ports, isDefaultPort)
	if i >= 0 {
		port := s.Ports[i].Port
		to.Spec.Port = &port
	}
	if len(s.Ports) == 0 || len(s.Ports) == 1 && i == 0 {
		delete(to.Annotations, PortsAnnotation)
		return nil
	}
	return versions.SaveInAnnotation(to, PortsAnnotation, s.Ports)
}

// isDefaultPort says p is the one port v1beta1 holds.
func isDefaultPort(p WidgetPort) bool {
	return p.Name == defaultPort && (p.Protocol == "TCP" || p.Protocol == "")
}

// validateWidgetV1beta1 is v1's validation, for when v1beta1 is the
// storage version: the widget is checked as it reads in v1.
func validateWidgetV1beta1(ctx context.Context, w, old *WidgetV1beta1) apiserver.FieldErrors {
	var v1, oldV1 Widget
	v1.ObjectMeta = w.ObjectMeta
	v1.Annotations = maps.Clone(w.Annotations)
	if err := widgetToV1(w, &v1); err != nil {
		return apiserver.FieldErrors{apiserver.Invalid("metadata.annotations", PortsAnnotation, err.Error())}
	}
	if old == nil {
		return validateWidget(ctx, &v1, nil)
	}
	oldV1.ObjectMeta = old.ObjectMeta
	oldV1.Annotations = maps.Clone(old.Annotations)
	_ = widgetToV1(old, &oldV1)
	return validateWidget(ctx, &v1, &oldV1)
}
