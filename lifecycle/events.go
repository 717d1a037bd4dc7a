package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
)

// EventExpiry deletes the objects of some resources (events) once their
// last write is older than a time to live, as kube-apiserver's --event-ttl
// makes etcd forget events. The last write is the latest of the object's
// creationTimestamp and its managedFields' times, which the server sets on
// every write, so the bound holds across restarts.
type EventExpiry struct {
	objects   Objects
	resources []Resource
	ttl       time.Duration
	logger    *slog.Logger
}

// NewEventExpiry makes the controller for resources, with the given time to
// live (positive).
func NewEventExpiry(objects Objects, resources []Resource, ttl time.Duration, logger *slog.Logger) (*EventExpiry, error) {
	if ttl <= 0 {
		return nil, errors.New("lifecycle: the time to live of events must be positive")
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &EventExpiry{objects: objects, resources: resources, ttl: ttl, logger: logger}, nil
}

// Interval is how often Run looks for expired objects: a sixtieth of the
// time to live, between a second and a minute. An object lives at most its
// time to live and one interval.
func (e *EventExpiry) Interval() time.Duration {
	return min(max(e.ttl/60, time.Second), time.Minute)
}

// Run deletes expired objects until ctx ends.
func (e *EventExpiry) Run(ctx context.Context) {
	t := time.NewTicker(e.Interval())
	defer t.Stop()
	for {
		e.sweep(ctx, time.Now())
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// sweep deletes what has expired at now.
func (e *EventExpiry) sweep(ctx context.Context, now time.Time) {
	for _, r := range e.resources {
		objs, err := e.objects.List(ctx, r, "")
		if err != nil {
			if ctx.Err() == nil {
				e.logger.Warn("kapi: event expiry", "resource", r.Plural, "err", err)
			}
			if objs == nil {
				continue
			}
			// An event that cannot be read does not keep the others.
		}
		for _, obj := range objs {
			meta := obj.GetObjectMeta()
			if now.Sub(LastWrite(obj)) < e.ttl {
				continue
			}
			err := e.objects.Delete(ctx, r, meta.Namespace, meta.Name, DeleteOptions{UID: meta.UID, ResourceVersion: meta.ResourceVersion, PropagationPolicy: "Background"})
			if err != nil && !errors.Is(err, storage.ErrNotFound) && ctx.Err() == nil {
				e.logger.Warn("kapi: event expiry", "resource", r.Plural, "namespace", meta.Namespace, "name", meta.Name, "err", err)
			}
		}
	}
}

// LastWrite is when obj was last written, as far as its metadata tells:
// the latest of its creation and its managed fields' times.
func LastWrite(obj kapi.Object) time.Time {
	meta := obj.GetObjectMeta()
	last := meta.CreationTimestamp.Time
	for _, m := range meta.ManagedFields {
		if m.Time != nil && m.Time.After(last) {
			last = m.Time.Time
		}
	}
	return last
}
