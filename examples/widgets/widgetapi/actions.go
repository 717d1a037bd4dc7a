package widgetapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// journal is what widgets' restarts wrote, in memory: the lines of each
// widget's log, and a channel closed at each new line.
type journal struct {
	mu      sync.Mutex
	lines   map[string][]string
	written chan struct{}
}

func (j *journal) restart(_ context.Context, req actions.Request, in *WidgetRestart) (*WidgetRestart, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	key := req.Namespace + "/" + req.Name
	if j.lines == nil {
		j.lines = map[string][]string{}
	}
	if req.DryRun {
		in.Restarts = int32(len(j.lines[key]) + 1)
		return in, nil
	}
	j.lines[key] = append(j.lines[key], fmt.Sprintf("%s restarted (generation %d): %s\n",
		time.Now().UTC().Format(time.RFC3339), req.Object.GetObjectMeta().Generation, in.Reason))
	in.Restarts = int32(len(j.lines[key]))
	if j.written != nil {
		close(j.written)
		j.written = nil
	}
	return in, nil
}

// log writes the widget's log; with follow=true it goes on writing each
// new line until the client leaves.
func (j *journal) log(ctx context.Context, req actions.Request, w io.Writer) error {
	key, sent := req.Namespace+"/"+req.Name, 0
	for {
		j.mu.Lock()
		lines := j.lines[key][sent:]
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
		sent += len(lines)
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
