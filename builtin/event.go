package builtin

import "github.com/kapi-dev/kapi"

// Event is core/v1 Event: something that happened to an object, as
// controllers record it and kubectl describe shows it.
type Event struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`

	InvolvedObject      ObjectReference  `json:"involvedObject" protobuf:"bytes,2,opt,name=involvedObject"`
	Reason              string           `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	Message             string           `json:"message,omitempty" protobuf:"bytes,4,opt,name=message"`
	Source              EventSource      `json:"source,omitempty" protobuf:"bytes,5,opt,name=source"`
	FirstTimestamp      kapi.Time        `json:"firstTimestamp,omitempty" protobuf:"bytes,6,opt,name=firstTimestamp"`
	LastTimestamp       kapi.Time        `json:"lastTimestamp,omitempty" protobuf:"bytes,7,opt,name=lastTimestamp"`
	Count               int32            `json:"count,omitempty" protobuf:"varint,8,opt,name=count"`
	Type                string           `json:"type,omitempty" protobuf:"bytes,9,opt,name=type"`
	EventTime           kapi.MicroTime   `json:"eventTime,omitempty" protobuf:"bytes,10,opt,name=eventTime"`
	Series              *EventSeries     `json:"series,omitempty" protobuf:"bytes,11,opt,name=series"`
	Action              string           `json:"action,omitempty" protobuf:"bytes,12,opt,name=action"`
	Related             *ObjectReference `json:"related,omitempty" protobuf:"bytes,13,opt,name=related"`
	ReportingController string           `json:"reportingComponent" protobuf:"bytes,14,opt,name=reportingComponent"`
	ReportingInstance   string           `json:"reportingInstance" protobuf:"bytes,15,opt,name=reportingInstance"`
}

// EventsEvent is events.k8s.io/v1 Event, the newer form of an event that
// client-go's events package records.
type EventsEvent struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`

	EventTime                kapi.MicroTime   `json:"eventTime" protobuf:"bytes,2,opt,name=eventTime"`
	Series                   *EventSeries     `json:"series,omitempty" protobuf:"bytes,3,opt,name=series"`
	ReportingController      string           `json:"reportingController,omitempty" protobuf:"bytes,4,opt,name=reportingController"`
	ReportingInstance        string           `json:"reportingInstance,omitempty" protobuf:"bytes,5,opt,name=reportingInstance"`
	Action                   string           `json:"action,omitempty" protobuf:"bytes,6,opt,name=action"`
	Reason                   string           `json:"reason,omitempty" protobuf:"bytes,7,opt,name=reason"`
	Regarding                ObjectReference  `json:"regarding,omitempty" protobuf:"bytes,8,opt,name=regarding"`
	Related                  *ObjectReference `json:"related,omitempty" protobuf:"bytes,9,opt,name=related"`
	Note                     string           `json:"note,omitempty" protobuf:"bytes,10,opt,name=note"`
	Type                     string           `json:"type,omitempty" protobuf:"bytes,11,opt,name=type"`
	DeprecatedSource         EventSource      `json:"deprecatedSource,omitempty" protobuf:"bytes,12,opt,name=deprecatedSource"`
	DeprecatedFirstTimestamp kapi.Time        `json:"deprecatedFirstTimestamp,omitempty" protobuf:"bytes,13,opt,name=deprecatedFirstTimestamp"`
	DeprecatedLastTimestamp  kapi.Time        `json:"deprecatedLastTimestamp,omitempty" protobuf:"bytes,14,opt,name=deprecatedLastTimestamp"`
	DeprecatedCount          int32            `json:"deprecatedCount,omitempty" protobuf:"varint,15,opt,name=deprecatedCount"`
}

// ObjectReference is core/v1 ObjectReference: the object an event is about.
type ObjectReference struct {
	Kind            string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	Namespace       string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
	Name            string `json:"name,omitempty" protobuf:"bytes,3,opt,name=name"`
	UID             string `json:"uid,omitempty" protobuf:"bytes,4,opt,name=uid"`
	APIVersion      string `json:"apiVersion,omitempty" protobuf:"bytes,5,opt,name=apiVersion"`
	ResourceVersion string `json:"resourceVersion,omitempty" protobuf:"bytes,6,opt,name=resourceVersion"`
	FieldPath       string `json:"fieldPath,omitempty" protobuf:"bytes,7,opt,name=fieldPath"`
}

// EventSource is the component (and host) that reported an event.
type EventSource struct {
	Component string `json:"component,omitempty" protobuf:"bytes,1,opt,name=component"`
	Host      string `json:"host,omitempty" protobuf:"bytes,2,opt,name=host"`
}

// EventSeries is how often an event has recurred, and when last.
type EventSeries struct {
	Count            int32          `json:"count,omitempty" protobuf:"varint,1,opt,name=count"`
	LastObservedTime kapi.MicroTime `json:"lastObservedTime,omitempty" protobuf:"bytes,2,opt,name=lastObservedTime"`
}
