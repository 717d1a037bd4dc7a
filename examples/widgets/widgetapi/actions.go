package widgetapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/apiserver"
)

// WidgetRestart is the body of POST widgets/NAME/restart, and its answer.
type WidgetRestart struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Reason          string `json:"reason,omitempty"`
	// Restarts counts the widget's restarts, this one included.
	Restarts int32 `json:"restarts,omitempty"`
}

// WidgetReview asks whether a widget with this spec would be accepted:
// it is answered (its status filled in), never stored.
type WidgetReview struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            WidgetSpec         `json:"spec"`
	Status          WidgetReviewStatus `json:"status,omitempty"`
}

// WidgetReviewStatus is the answer to a WidgetReview.
type WidgetReviewStatus struct {
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// RegisterActions adds what widgets do besides being stored: the
// subresources restart (POST) and log (GET, text, ?follow=true streams),
// and widgetreviews, answered and never stored.
func RegisterActions(srv *apiserver.Server) error {
	var j journal
	if err := actions.AddSubresource(srv, actions.Subresource{Group: "example.com", Version: "v1", Resource: "widgets", Name: "restart",
		Create: actions.Write(j.restart)}); err != nil {
		return err
	}
	if err := actions.AddSubresource(srv, actions.Subresource{Group: "example.com", Version: "v1", Resource: "widgets", Name: "log",
		Get: actions.Stream("text/plain", j.log)}); err != nil {
		return err
	}
	return actions.AddReview(srv, actions.Review[WidgetReview]{Group: "example.com", Version: "v1", Kind: "WidgetReview", Plural: "widgetreviews",
		Namespaced: true, Answer: func(_ context.Context, _ actions.Request, r *WidgetReview) error {
			r.Status.Allowed = r.Spec.Replicas == nil || *r.Spec.Replicas <= 10
			if !r.Status.Allowed {
				r.Status.Reason = "a widget has at most 10 replicas"
			}
			return nil
		}})
}

// journal is what widgets' restarts wrote, in this process's memory
// alone: replicas of the server each keep their own, and a restart of
// the process forgets it (a real service writes it where the widget's
// work runs, or in storage). Each widget's log is keyed by its UID, so a
// widget deleted and created again under its name starts a new one, and
// keeps its last maxLogLines lines; written is closed at each new line.
type journal struct {
	mu      sync.Mutex
	logs    map[string]*widgetLog // by UID
	written chan struct{}
}

// widgetLog is one widget's log: its last lines, and how many were ever
// written (its restarts).
type widgetLog struct {
	lines    []string
	restarts int
}

const (
	maxLogLines  = 100
	maxReasonLen = 256 // bytes
)

func (j *journal) restart(_ context.Context, req actions.Request, in *WidgetRestart) (*WidgetRestart, error) {
	if len(in.Reason) > maxReasonLen {
		return nil, apiserver.NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid,
			fmt.Sprintf("reason: Too long: may not be more than %d bytes", maxReasonLen))
	}
	meta := req.Object.GetObjectMeta()
	j.mu.Lock()
	defer j.mu.Unlock()
	l := j.logs[string(meta.UID)]
	if l == nil {
		l = &widgetLog{}
	}
	in.Restarts = int32(l.restarts + 1)
	if req.DryRun {
		return in, nil
	}
	if j.logs == nil {
		j.logs = map[string]*widgetLog{}
	}
	j.logs[string(meta.UID)] = l
	l.restarts++
	l.lines = append(l.lines, fmt.Sprintf("%s restarted (generation %d): %s\n",
		time.Now().UTC().Format(time.RFC3339), meta.Generation, in.Reason))
	if len(l.lines) > maxLogLines {
		l.lines = slices.Delete(l.lines, 0, len(l.lines)-maxLogLines)
	}
	if j.written != nil {
		close(j.written)
		j.written = nil
	}
	return in, nil
}

// log writes the widget's log; with follow=true it goes on writing each
// new line until the client leaves or the server shuts down.
func (j *journal) log(ctx context.Context, req actions.Request, w io.Writer) error {
	uid, sent := string(req.Object.GetObjectMeta().UID), 0 // lines sent, counted as restarts
	for {
		j.mu.Lock()
		var lines []string
		if l := j.logs[uid]; l != nil {
			// The lines written since the last sent, those still kept.
			lines = l.lines[max(0, len(l.lines)-(l.restarts-sent)):]
			sent = l.restarts
		}
		if j.written == nil {
			j.written = make(chan struct{})
		}
		written := j.written
		j.mu.Unlock()
		for _, l := range lines {
			if _, err := io.WriteString(w, l); err != nil {
				return err
			}
		}
		if req.Query.Get("follow") != "true" {
			return nil
		}
		w.(http.Flusher).Flush() // the header, before waiting
		select {
		case <-ctx.Done():
			return nil
		case <-written:
		}
	}
}
