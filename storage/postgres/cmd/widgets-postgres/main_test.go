package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/examplecheck"
	"github.com/kapi-dev/kapi/storage/postgres/pgtest"
)

func TestMain(m *testing.M) {
	examplecheck.Main(main)
	os.Exit(m.Run())
}

// TestWidgetsPostgres runs two replicas of the command on one throwaway
// PostgreSQL, as the README does, and drives them with kubectl: one serves
// what examples/widgets serves, each sees the other's writes, and a
// replica stopped and started again finds them all.
func TestWidgetsPostgres(t *testing.T) {
	c, err := pgtest.Start()
	if errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("CI") == "" {
		t.Skipf("no PostgreSQL to test on: %v (install postgresql)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	a := examplecheck.Start(t, "-postgres", c.URL())
	b := examplecheck.Start(t, "-postgres", c.URL())
	examplecheck.Serves(t, a)

	kb := examplecheck.Kubectl(t, b)
	if got := kb("", "get", "widget", "w1", "-o", "jsonpath={.spec.color}"); got != "Red" {
		t.Errorf("replica b: widget w1's color %q, want Red", got)
	}
	kb(examplecheck.Widget("w2", "Blue", 9090), "apply", "--server-side", "-f", "-")
	a.Stop(t)

	a = examplecheck.Start(t, "-postgres", c.URL())
	ka := examplecheck.Kubectl(t, a)
	got := ka("", "get", "widgets", "-o", "jsonpath={.items[*].metadata.name} {.items[*].spec.color}")
	if strings.TrimSpace(got) != "w1 w2 Red Blue" {
		t.Errorf("replica a, started again: widgets %q, want w1 w2 Red Blue", got)
	}
}
