package kapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// FuzzTimeJSON: a time that decodes encodes, and decodes back to the same
// instant. One that did not would be stored and then never read again.
func FuzzTimeJSON(f *testing.F) {
	fuzzTimeJSON(f, []string{`"2024-01-01T00:00:00Z"`, `"9999-12-31T23:59:59-01:00"`, `"0000-01-01T00:00:00+01:00"`,
		`"2024-02-29T12:00:00.123456789+05:30"`, `null`, `""`, `"x"`, `5`},
		func(t *kapi.Time) time.Time { return t.Time }, time.Second)
}

// FuzzMicroTimeJSON: the same for MicroTime, which keeps the microseconds.
func FuzzMicroTimeJSON(f *testing.F) {
	fuzzTimeJSON(f, []string{`"2024-01-01T00:00:00.000001Z"`, `"9999-12-31T23:59:59.999999-01:00"`, `"0000-01-01T00:00:00+01:00"`,
		`"2024-02-29T12:00:00.123456789+05:30"`, `null`, `""`, `"x"`, `5`},
		func(t *kapi.MicroTime) time.Time { return t.Time }, time.Microsecond)
}

// fuzzTimeJSON checks that a *T (a JSON time) that decodes encodes and
// decodes back to its instant, truncated to precision.
func fuzzTimeJSON[T any](f *testing.F, seeds []string, instant func(*T) time.Time, precision time.Duration) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tm T
		if err := json.Unmarshal(data, &tm); err != nil {
			return
		}
		out, err := json.Marshal(&tm)
		if err != nil {
			t.Fatalf("%q decoded to %v, which does not encode: %v", data, instant(&tm), err)
		}
		var again T
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%q decoded to %v, encoded as %s, which does not decode: %v", data, instant(&tm), out, err)
		}
		if a, b := instant(&again), instant(&tm); !a.Equal(b.Truncate(precision)) && !(a.IsZero() && b.IsZero()) {
			t.Fatalf("%q decoded to %v, encoded as %s, decoded back to %v", data, b, out, a)
		}
	})
}
