package builtin

// EventToCore and EventFromCore map an events.k8s.io/v1 event onto the
// core/v1 event that stores it and back, field by field as kube-apiserver's
// conversion does (k8s.io/kubernetes pkg/apis/events/v1/conversion.go):
// regarding is involvedObject, note is message, and the deprecated fields
// are core/v1's source, firstTimestamp, lastTimestamp and count. Metadata
// is left to the caller. They never fail; the error is that of a
// conversion function (apiserver.ConvertVia).
func EventToCore(from *EventsEvent, to *Event) error {
	mapEvent(to, from, true)
	return nil
}

// EventFromCore is the reverse of EventToCore.
func EventFromCore(from *Event, to *EventsEvent) error {
	mapEvent(from, to, false)
	return nil
}

// mapEvent is the mapping, once for both directions: it copies each field
// of e to its counterpart in c when toCore is true, the reverse otherwise.
func mapEvent(c *Event, e *EventsEvent, toCore bool) {
	assign(toCore, &c.InvolvedObject, &e.Regarding)
	assign(toCore, &c.Related, &e.Related)
	assign(toCore, &c.Message, &e.Note)
	assign(toCore, &c.Reason, &e.Reason)
	assign(toCore, &c.Type, &e.Type)
	assign(toCore, &c.Action, &e.Action)
	assign(toCore, &c.Source, &e.DeprecatedSource)
	assign(toCore, &c.FirstTimestamp, &e.DeprecatedFirstTimestamp)
	assign(toCore, &c.LastTimestamp, &e.DeprecatedLastTimestamp)
	assign(toCore, &c.Count, &e.DeprecatedCount)
	assign(toCore, &c.EventTime, &e.EventTime)
	assign(toCore, &c.Series, &e.Series)
	assign(toCore, &c.ReportingController, &e.ReportingController)
	assign(toCore, &c.ReportingInstance, &e.ReportingInstance)
}

// assign sets *a to *b when aFromB, *b to *a otherwise.
func assign[T any](aFromB bool, a, b *T) {
	if aFromB {
		*a = *b
	} else {
		*b = *a
	}
}
