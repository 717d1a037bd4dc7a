// Package watchfeed is the loop that feeds a storage watch from a backend's
// revision log, shared by the backends that keep one (memory, bolt,
// sqlite), and the events of the last commits that a backend keeps in
// memory for the watchers that keep up (Recent).
package watchfeed

import (
	"context"

	"github.com/kapi-dev/kapi/storage"
)

// ReadFunc appends to batch the events from revision next on and returns
// the revision to read from next time. When it found nothing left to read
// it also returns the channel to wait on; when the stream must end, the
// error to end it with.
type ReadFunc func(next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error)

// Serve feeds out with the events read from revision next on until ctx
// ends (out is closed without an error event) or read ends the stream (one
// event with Err set, then out is closed). It never holds more than one
// batch of values.
func Serve(ctx context.Context, next int64, out chan<- storage.Event, read ReadFunc) {
	defer close(out)
	var (
		batch []storage.Event
		wait  <-chan struct{}
		err   error
	)
	for ctx.Err() == nil {
		batch, next, wait, err = read(next, batch[:0])
		for _, ev := range batch {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
		clear(batch) // let go of the values while waiting
		switch {
		case err != nil:
			select {
			case out <- storage.Event{Err: err}:
			case <-ctx.Done():
			}
			return
		case wait != nil:
			select {
			case <-wait:
			case <-ctx.Done():
				return
			}
		}
	}
}
