package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// TestHistoryWindowByTime: what a client may come back to expires by time
// even on an idle server, as kube-apiserver's storage is compacted every
// 5 minutes: a continue token of a list read longer ago than the window
// is 410 with kube's message (though the store still has its revision),
// and so is a watch from a revision whose events left the window.
func TestHistoryWindowByTime(t *testing.T) {
	const window = 20 * time.Millisecond
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithHistoryWindow(window))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	first := c.create(newWidget("default", "a"))
	c.create(newWidget("default", "b"))
	page := c.list(widgetsIn("default") + "?limit=1")
	if page.Metadata.Continue == "" {
		t.Fatal("no continue token")
	}
	// No write follows: only time passes. The loop bounds the wait; it
	// does not time the server.
	giveUp := time.Now().Add(deadline)
	for {
		r := c.get(widgetsIn("default") + "?limit=1&continue=" + page.Metadata.Continue)
		if r.Code == http.StatusGone {
			st := r.failure(t, http.StatusGone, kapi.StatusReasonExpired)
			if want := "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."; st.Message != want {
				t.Errorf("message %q, want %q", st.Message, want)
			}
			break
		}
		r.mustCode(t, http.StatusOK)
		if time.Now().After(giveUp) {
			t.Fatalf("a continue token is still served %v after its list, with a window of %v", deadline, window)
		}
		time.Sleep(window / 4)
	}
	for {
		r := c.get(widgetsIn("default") + "?watch=true&timeoutSeconds=1&resourceVersion=" + first.ResourceVersion)
		if r.Code == http.StatusGone || strings.Contains(string(r.Body), `"code":410`) {
			break // as a status, or as the stream's ERROR event
		}
		if time.Now().After(giveUp) {
			t.Fatalf("a watch from %s, older than the window, is still served: %d %s", first.ResourceVersion, r.Code, r.Body)
		}
		time.Sleep(window / 4)
	}
	// A fresh list pages as ever.
	page = c.list(widgetsIn("default") + "?limit=1")
	if next := c.list(widgetsIn("default") + "?limit=1&continue=" + page.Metadata.Continue); len(next.Items) != 1 || next.Items[0].Name != "b" {
		t.Errorf("the second page of a fresh list: %v", next.names())
	}
}

// TestHistoryWindowOption: a window that is not positive is an error of New.
func TestHistoryWindowOption(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := apiserver.New(apiserver.WithHistoryWindow(d)); err == nil || !strings.Contains(err.Error(), "history window must be positive") {
			t.Errorf("WithHistoryWindow(%v): %v", d, err)
		}
	}
}
