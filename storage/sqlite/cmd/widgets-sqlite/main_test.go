package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/examplecheck"
)

func TestMain(m *testing.M) {
	examplecheck.Main(main)
	os.Exit(m.Run())
}

// TestWidgetsSQLite runs the command on a new file and drives it with
// kubectl, then stops it and starts it again on the same file: what was
// written is there.
func TestWidgetsSQLite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "widgets.sqlite")
	s := examplecheck.Start(t, "-file", file)
	examplecheck.Serves(t, s)
	s.Stop(t)

	s = examplecheck.Start(t, "-file", file)
	k := examplecheck.Kubectl(t, s)
	got := k("", "get", "widgets", "-o", "jsonpath={.items[*].metadata.name} {.items[*].spec.color}")
	if strings.TrimSpace(got) != "w1 Red" {
		t.Errorf("after a restart: widgets %q, want w1 Red", got)
	}
}
