package apiserver_test

import (
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/fairness"
)

// fairTokens are the users of the fairness tests, by bearer token.
var fairTokens = apiserver.StaticTokens(map[string]apiserver.User{
	"alice": {Name: "alice"},
	"bob":   {Name: "bob"},
	"admin": {Name: "admin", Groups: []string{"system:masters"}},
})

func as(user string) []string { return []string{"Authorization", "Bearer " + user} }

// pfUIDs are the flow schema and priority level a response names.
func pfUIDs(t testing.TB, r *response) (schema, level string) {
	t.Helper()
	schema, level = r.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), r.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
	if schema == "" || level == "" {
		t.Errorf("HTTP %d without the flow schema (%q) or priority level (%q) headers", r.Code, schema, level)
	}
	return schema, level
}

// TestFairness: with two seats and queues of one, a user holding both
// seats has one request queued and the next refused 429, while another
// user's request waits its turn, an exempt user and the health checks are
// served at once, and every answer names its flow schema and priority
// level.
func TestFairness(t *testing.T) {
	h := newHooks()
	cfg := fairness.Default(4) // global-default has 2 seats
	for i := range cfg.Levels {
		cfg.Levels[i].QueueLength = 1
	}
	_, c := newProbeServer(t, h, apiserver.WithAuthentication(fairTokens), apiserver.WithFairness(cfg))
	c.do(http.MethodPost, probes, probeBody("slow-read", modeBlockColumn), as("admin")...).mustCode(t, http.StatusCreated)

	w1 := c.async(http.MethodPost, probes, probeBody("w1", modeBlockValidate), as("alice")...)
	w2 := c.async(http.MethodPost, probes, probeBody("w2", modeBlockValidate), as("alice")...)
	h.wait(t, 2)

	// One of these waits in alice's queue; the other finds it full.
	a3 := c.async(http.MethodGet, probes, nil, as("alice")...)
	a4 := c.async(http.MethodGet, probes, nil, as("alice")...)
	var refused *response
	var queued <-chan *response
	select {
	case refused = <-a3:
		queued = a4
	case refused = <-a4:
		queued = a3
	}
	tooMany(t, refused)
	aliceSchema, aliceLevel := pfUIDs(t, refused)

	bob := c.async(http.MethodGet, probes, nil, as("bob")...)

	var exemptSchema, exemptLevel string
	t.Run("system:masters is exempt", func(t *testing.T) {
		r := c.do(http.MethodGet, probes, nil, as("admin")...)
		r.mustCode(t, http.StatusOK)
		exemptSchema, exemptLevel = pfUIDs(t, r)
		if exemptLevel == aliceLevel || exemptSchema == aliceSchema {
			t.Errorf("admin and alice share a flow schema or priority level: %s %s", exemptSchema, exemptLevel)
		}
	})
	t.Run("health checks are exempt", func(t *testing.T) {
		r := c.get("/readyz")
		r.mustCode(t, http.StatusOK)
		if _, level := pfUIDs(t, r); level != exemptLevel {
			t.Errorf("priority level %s, want exempt's %s", level, exemptLevel)
		}
	})
	t.Run("watches are not queued", func(t *testing.T) {
		r := c.do(http.MethodGet, probes+"?watch=true&timeoutSeconds=1", nil, as("alice")...)
		r.mustCode(t, http.StatusOK)
	})

	h.free()
	for _, ch := range []<-chan *response{w1, w2} {
		receive(t, ch).mustCode(t, http.StatusCreated)
	}
	for name, ch := range map[string]<-chan *response{"alice's queued request": queued, "bob": bob} {
		r := receive(t, ch)
		r.mustCode(t, http.StatusOK)
		if schema, level := pfUIDs(t, r); schema != aliceSchema || level != aliceLevel {
			t.Errorf("%s: flow schema %s, level %s; want global-default's %s, %s", name, schema, level, aliceSchema, aliceLevel)
		}
	}
}
