package kapi_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi"
)

// FuzzTimeJSON: a time that decodes encodes, and decodes back to the same
// instant. One that did not would be stored and then never read again.
func FuzzTimeJSON(f *testing.F) {
	for _, s := range []string{`"2024-01-01T00:00:00Z"`, `"9999-12-31T23:59:59-01:00"`, `"0000-01-01T00:00:00+01:00"`,
		`"2024-02-29T12:00:00.123456789+05:30"`, `null`, `""`, `"x"`, `5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tm kapi.Time
		if err := json.Unmarshal(data, &tm); err != nil {
			return
		}
		out, err := json.Marshal(tm)
		if err != nil {
			t.Fatalf("%q decoded to %v, which does not encode: %v", data, tm.Time, err)
		}
		var again kapi.Time
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%q decoded to %v, encoded as %s, which does not decode: %v", data, tm.Time, out, err)
		}
		if !again.Time.Equal(tm.Time.Truncate(1e9)) && !(again.IsZero() && tm.IsZero()) {
			t.Fatalf("%q decoded to %v, encoded as %s, decoded back to %v", data, tm.Time, out, again.Time)
		}
	})
}

// FuzzMicroTimeJSON: as FuzzTimeJSON, for MicroTime, which keeps the
// microseconds.
func FuzzMicroTimeJSON(f *testing.F) {
	for _, s := range []string{`"2024-01-01T00:00:00.000001Z"`, `"9999-12-31T23:59:59.999999-01:00"`, `"0000-01-01T00:00:00+01:00"`,
		`"2024-02-29T12:00:00.123456789+05:30"`, `null`, `""`, `"x"`, `5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tm kapi.MicroTime
		if err := json.Unmarshal(data, &tm); err != nil {
			return
		}
		out, err := json.Marshal(tm)
		if err != nil {
			t.Fatalf("%q decoded to %v, which does not encode: %v", data, tm.Time, err)
		}
		var again kapi.MicroTime
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%q decoded to %v, encoded as %s, which does not decode: %v", data, tm.Time, out, err)
		}
		if !again.Time.Equal(tm.Time) && !(again.IsZero() && tm.IsZero()) {
			t.Fatalf("%q decoded to %v, encoded as %s, decoded back to %v", data, tm.Time, out, again.Time)
		}
	})
}
