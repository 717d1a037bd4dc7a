package apiserver

import (
	"errors"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/internal/tables"
	"github.com/kapi-dev/kapi/lifecycle"
)

func (s *Server) registerLeases() error {
	return Register(s, Resource[builtin.Lease]{
		Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Plural: "leases", Namespaced: true,
		CreateOnUpdate:   true, // as kube's lease strategy allows
		SelectableFields: []string{"spec.holderIdentity"},
		Columns: []Column[builtin.Lease]{
			{Name: "Holder", Type: "string", Description: "The holder of the lease", Value: func(l *builtin.Lease) any {
				if l.Spec.HolderIdentity == nil {
					return nil
				}
				return *l.Spec.HolderIdentity
			}},
			{Name: "Age", Type: "date", Description: tables.CreationTimestampDescription, Value: func(l *builtin.Lease) any { return l.CreationTimestamp }},
		},
	})
}

// eventRow is what the table of events shows of one event.
type eventRow struct {
	lastSeen          any
	typ, reason, note string
	object            builtin.ObjectReference
}

// eventColumns are kube-apiserver's columns of events (LAST SEEN, TYPE,
// REASON, OBJECT, MESSAGE), of either kind.
func eventColumns[T any](row func(*T) eventRow) []Column[T] {
	return []Column[T]{
		{Name: "Last Seen", Type: "date", Description: "The time the event was last seen", Value: func(e *T) any { return row(e).lastSeen }},
		{Name: "Type", Type: "string", Description: "The type of the event", Value: func(e *T) any { return row(e).typ }},
		{Name: "Reason", Type: "string", Description: "The reason of the event", Value: func(e *T) any { return row(e).reason }},
		{Name: "Object", Type: "string", Description: "The object the event is about", Value: func(e *T) any {
			ref := row(e).object
			return strings.ToLower(ref.Kind) + "/" + ref.Name
		}},
		{Name: "Message", Type: "string", Description: "The message of the event", Value: func(e *T) any { return strings.TrimSpace(row(e).note) }},
	}
}

// registerEvents registers both kinds of event, shown as kube-apiserver
// shows them (the name only with -o wide).
func (s *Server) registerEvents() error {
	err := errors.Join(
		Register(s, Resource[builtin.Event]{
			Version: "v1", Kind: "Event", Plural: "events", Namespaced: true, ShortNames: []string{"ev"}, Storage: true,
			// kube's event strategy (pkg/registry/core/event/strategy.go,
			// v1.37.2) answers AllowCreateOnUpdate with true, and
			// events.k8s.io/v1 is served from that same storage; the "false
			// for Event" strategy found in old copies is the 1.8-era
			// pkg/registry/events/event, long removed.
			CreateOnUpdate: true,
			SelectableFields: []string{"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
				"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "type"},
			Columns: eventColumns(func(e *builtin.Event) eventRow {
				return eventRow{lastSeen(e.LastTimestamp, e.EventTime, e.Series, e.CreationTimestamp), e.Type, e.Reason, e.Message, e.InvolvedObject}
			}),
		}),
		Register(s, Resource[builtin.EventsEvent]{
			Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events", Namespaced: true, ShortNames: []string{"ev"},
			CreateOnUpdate: true, // the core event's storage, see above
			Conversion:     ConvertVia(builtin.EventToCore, builtin.EventFromCore),
			SelectableFields: []string{"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
				"regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason", "reportingController", "type"},
			Columns: eventColumns(func(e *builtin.EventsEvent) eventRow {
				return eventRow{lastSeen(e.DeprecatedLastTimestamp, e.EventTime, e.Series, e.CreationTimestamp), e.Type, e.Reason, e.Note, e.Regarding}
			}),
		}),
	)
	if err != nil {
		return err
	}
	core, events := s.resources[len(s.resources)-2], s.resources[len(s.resources)-1]
	events.storedWith = core
	// source: the reporting component, as kube-apiserver selects it.
	core.fields["source"] = func(o kapi.Object) string {
		if e := o.(*builtin.Event); e.Source.Component != "" {
			return e.Source.Component
		}
		return o.(*builtin.Event).ReportingController
	}
	for _, r := range []*resource{core, events} {
		r.table.Defs[0].Priority = 1
	}
	s.events = core
	return nil
}

// lastSeen is when an event was last seen, as kubectl shows it.
func lastSeen(last kapi.Time, eventTime kapi.MicroTime, series *builtin.EventSeries, created kapi.Time) any {
	switch {
	case series != nil && !series.LastObservedTime.IsZero():
		return series.LastObservedTime.Time
	case !last.IsZero():
		return last
	case !eventTime.IsZero():
		return eventTime.Time
	}
	return created
}

// startEvents starts the expiry of events (of both APIs: they are stored
// as core events), which runs until the server closes.
func (s *Server) startEvents() {
	o := &objects{s: s, user: eventExpiry, manager: "kube-apiserver"}
	r := s.events
	resources := []lifecycle.Resource{{Group: r.Group, Version: r.Version, Kind: r.Kind, Plural: r.Plural, Namespaced: true}}
	expiry, err := lifecycle.NewEventExpiry(o, resources, s.config.eventTTL, s.config.logger)
	if err != nil {
		s.config.logger.Error("kapi: event expiry", "err", err)
		return
	}
	s.runBackground(expiry.Run)
}

// eventExpiry is who deletes expired events: the server itself.
var eventExpiry = User{Name: "system:apiserver", Groups: []string{"system:masters", "system:authenticated"}}
