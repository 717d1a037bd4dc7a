package widgetapi

import "github.com/kapi-dev/kapi"

// Widget is a namespaced resource with a spec, a status and both
// subresources' worth of fields.
type Widget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   WidgetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status WidgetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// WidgetSpec is what a user asks of a widget.
type WidgetSpec struct {
	// Color is one of Red, Green and Blue.
	Color string `json:"color" protobuf:"bytes,1,opt,name=color" validate:"required,enum=Red;Green;Blue" description:"Color of the widget: Red, Green or Blue."`
	// Replicas defaults to 1.
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas" validate:"minimum=0" default:"1" description:"Desired number of replicas; defaults to 1."`
	Size     int32  `json:"size,omitempty" protobuf:"varint,3,opt,name=size" validate:"minimum=0" description:"Size of the widget."`
	// Ports are keyed by name.
	Ports    []WidgetPort      `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name" listType:"map" listMapKey:"name" protobuf:"bytes,4,rep,name=ports"`
	Selector map[string]string `json:"selector,omitempty" protobuf:"bytes,5,rep,name=selector"`
}

// WidgetPort is one port a widget listens on.
type WidgetPort struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name" validate:"required"`
	Port int32  `json:"port" protobuf:"varint,2,opt,name=port" validate:"minimum=1,maximum=65535"`
	// Protocol defaults to TCP.
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,3,opt,name=protocol" validate:"enum=TCP;UDP;SCTP" default:"TCP"`
}

// WidgetStatus is what a controller observed of a widget.
type WidgetStatus struct {
	Replicas           int32            `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas" validate:"minimum=0"`
	Selector           string           `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
	ObservedGeneration int64            `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	Conditions         []kapi.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" listType:"map" listMapKey:"type" protobuf:"bytes,4,rep,name=conditions"`
}

// WidgetClass is a cluster-scoped resource that widgets can refer to.
type WidgetClass struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec WidgetClassSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// WidgetClassSpec describes a class of widgets.
type WidgetClassSpec struct {
	Description string `json:"description,omitempty" protobuf:"bytes,1,opt,name=description"`
	MaxReplicas int32  `json:"maxReplicas,omitempty" protobuf:"varint,2,opt,name=maxReplicas" validate:"minimum=0"`
}
