package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The write tests below describe strategic merge patch and server-side apply
// as they will behave once those land in the apiserver; until then the tests
// that need them skip. Flip a constant when its feature is merged.
const (
	// strategicMergePatchLanded enables the tests of
	// application/strategic-merge-patch+json (kubectl patch --type=strategic).
	strategicMergePatchLanded = true
	// serverSideApplyLanded enables the tests of field ownership:
	// managedFields, apply conflicts between managers, force.
	serverSideApplyLanded = true
)

func requireStrategicMergePatch(t *testing.T) {
	t.Helper()
	if !strategicMergePatchLanded {
		t.Skip("until strategic merge patch lands (set strategicMergePatchLanded in writes_helpers_test.go)")
	}
}

func requireServerSideApply(t *testing.T) {
	t.Helper()
	if !serverSideApplyLanded {
		t.Skip("until server-side apply with managedFields lands (set serverSideApplyLanded in writes_helpers_test.go)")
	}
}

// waitStderr waits until the background kubectl's stderr contains substr, or
// fails the test. With -v=6 kubectl logs each request it makes, so this tells
// when, say, its watch has started.
func (b *background) waitStderr(t *testing.T, what string, timeout time.Duration, substr string) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(b.stderr.String(), substr) {
		select {
		case <-b.done:
			if strings.Contains(b.stderr.String(), substr) {
				return
			}
			t.Fatalf("kubectl %v ended (%v) before %s; stdout:\n%s\nstderr:\n%s",
				b.cmd.Args[1:], b.err, what, b.output(), lastLines(b.stderr.String(), 60))
		case <-deadline.C:
			t.Fatalf("kubectl %v did not get to %s within %v; stdout:\n%s\nstderr:\n%s",
				b.cmd.Args[1:], what, timeout, b.output(), lastLines(b.stderr.String(), 60))
		case <-tick.C:
		}
	}
}

// finish waits for the background kubectl to exit and fails the test unless
// it exited 0. It returns what it printed on stdout.
func (b *background) finish(t *testing.T, what string, timeout time.Duration) string {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		t.Fatalf("kubectl %v did not exit within %v after %s; stdout:\n%s\nstderr:\n%s",
			b.cmd.Args[1:], timeout, what, b.output(), lastLines(b.stderr.String(), 60))
	}
	if b.err != nil {
		t.Fatalf("kubectl %v failed (%v) after %s; stdout:\n%s\nstderr:\n%s",
			b.cmd.Args[1:], b.err, what, b.output(), lastLines(b.stderr.String(), 60))
	}
	return b.output()
}

// running fails the test if the background kubectl has already exited.
func (b *background) running(t *testing.T, why string) {
	t.Helper()
	select {
	case <-b.done:
		t.Fatalf("kubectl %v exited (%v) %s; stdout:\n%s\nstderr:\n%s",
			b.cmd.Args[1:], b.err, why, b.output(), lastLines(b.stderr.String(), 60))
	default:
	}
}

// managedField is one metadata.managedFields entry as JSON decodes it.
type managedField struct {
	Manager    string         `json:"manager"`
	Operation  string         `json:"operation"`
	APIVersion string         `json:"apiVersion"`
	FieldsType string         `json:"fieldsType"`
	FieldsV1   map[string]any `json:"fieldsV1"`
	Time       string         `json:"time"`
}

// managedFieldsOf returns an object's managedFields by manager and operation
// ("alice/Apply"), failing the test if two entries share both.
func managedFieldsOf(t *testing.T, obj map[string]any) map[string]managedField {
	t.Helper()
	raw, _ := field(obj, "metadata", "managedFields")
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var entries []managedField
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("metadata.managedFields is not a list of entries: %v\n%s", err, b)
	}
	byKey := map[string]managedField{}
	for _, e := range entries {
		key := e.Manager + "/" + e.Operation
		if _, dup := byKey[key]; dup {
			t.Errorf("two managedFields entries for %s: %s", key, b)
		}
		byKey[key] = e
	}
	return byKey
}

// owns reports whether a fieldsV1 set contains the field at path, given as
// fieldsV1 keys ("f:spec", "f:replicas").
func owns(fieldsV1 map[string]any, path ...string) bool {
	_, ok := field(fieldsV1, path...)
	return ok
}

// portsOf returns spec.ports as name→port and the names in order.
func portsOf(t *testing.T, obj map[string]any) (byName map[string]map[string]any, order []string) {
	t.Helper()
	raw, _ := field(obj, "spec", "ports")
	list, ok := raw.([]any)
	if raw != nil && !ok {
		t.Fatalf("spec.ports is %T, not a list: %v", raw, raw)
	}
	byName = map[string]map[string]any{}
	for _, item := range list {
		p, _ := item.(map[string]any)
		name, _ := p["name"].(string)
		byName[name] = p
		order = append(order, name)
	}
	return byName, order
}
