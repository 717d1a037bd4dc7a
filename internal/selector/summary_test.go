package selector_test

import (
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/internal/selector"
)

func TestSummaries(t *testing.T) {
	var table selector.Summaries
	value := []byte(`{"metadata":{"labels":{"app":"web","tier":"front"}},"spec":{"size":"3"}}`)
	s := table.Summarize(map[string]string{"tier": "front", "app": "web"}, []string{"3"}, value)
	for key, want := range map[string]string{"app": "web", "tier": "front"} {
		if v, ok := s.Label(key); !ok || v != want {
			t.Errorf("Label(%q) = %q, %v; want %q", key, v, ok, want)
		}
	}
	if v, ok := s.Label("none"); ok {
		t.Errorf("Label(none) = %q, true; want none", v)
	}
	if v, ok := s.Field(0); !ok || v != "3" {
		t.Errorf("Field(0) = %q, %v; want 3", v, ok)
	}
	for _, i := range []int{-1, 1} {
		if v, ok := s.Field(i); ok {
			t.Errorf("Field(%d) = %q, true; want none", i, v)
		}
	}
	if again := table.Summarize(map[string]string{"app": "web", "tier": "front"}, []string{"3"}, value); again != s {
		t.Error("an equal summary is not shared")
	}
	// A label value that moved to the fields is another summary: the
	// parts are told apart.
	if other := table.Summarize(map[string]string{"app": "web"}, []string{"tier", "front"}, value); other == s {
		t.Error("summaries of different content are shared")
	}
}

// TestSummariesBounded: past the table's bound summaries are still right,
// only no longer shared.
func TestSummariesBounded(t *testing.T) {
	var table selector.Summaries
	var first, last *selector.Summary
	for i := range 5000 {
		id := fmt.Sprint(i)
		last = table.Summarize(map[string]string{"id": id}, nil, []byte(`{"id":"`+id+`"}`))
		if v, ok := last.Label("id"); !ok || v != id {
			t.Fatalf("summary %d: Label(id) = %q, %v", i, v, ok)
		}
		if i == 0 {
			first = last
		}
	}
	if again := table.Summarize(map[string]string{"id": "4999"}, nil, nil); again == last {
		t.Error("a summary past the bound was kept")
	}
	if again := table.Summarize(map[string]string{"id": "0"}, nil, nil); again != first {
		t.Error("a summary within the bound is not shared")
	}
}
