package tables

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// TestHumanDuration pins the thresholds at which an age drops a unit.
func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-2 * time.Second:                "<invalid>",
		-time.Second:                    "0s",
		0:                               "0s",
		119 * time.Second:               "119s",
		2 * time.Minute:                 "2m",
		5*time.Minute + 30*time.Second:  "5m30s",
		10*time.Minute + 30*time.Second: "10m",
		179 * time.Minute:               "179m",
		3*time.Hour + 5*time.Minute:     "3h5m",
		8*time.Hour + 5*time.Minute:     "8h",
		47 * time.Hour:                  "47h",
		50 * time.Hour:                  "2d2h",
		8 * 24 * time.Hour:              "8d",
		729 * 24 * time.Hour:            "729d",
		(2*365 + 10) * 24 * time.Hour:   "2y10d",
		8 * 365 * 24 * time.Hour:        "8y",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestAge: dates of every accepted type become ages; other cells pass
// through.
func TestAge(t *testing.T) {
	old := time.Now().Add(-3 * 24 * time.Hour)
	for _, c := range []struct {
		in   any
		want any
	}{
		{kapi.Time{Time: old}, "3d"},
		{&kapi.Time{Time: old}, "3d"},
		{old, "3d"},
		{(*kapi.Time)(nil), "<unknown>"},
		{time.Time{}, "<unknown>"},
		{nil, nil},
		{"text", "text"},
	} {
		if got := Age(c.in); got != c.want {
			t.Errorf("Age(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
