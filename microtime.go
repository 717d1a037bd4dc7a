package kapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// RFC3339Micro is the layout of a MicroTime in JSON.
const RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// MicroTime is a timestamp with microsecond precision, in the form of
// Kubernetes' metav1.MicroTime: RFC 3339 with six fractional digits in UTC
// in JSON, null when zero. Leases and events carry it.
type MicroTime struct {
	time.Time `protobuf:"-"`
}

// NewMicroTime wraps t, truncated to the microsecond as it travels.
func NewMicroTime(t time.Time) MicroTime { return MicroTime{t.Truncate(time.Microsecond)} }

// NowMicro is the current time, truncated to the microsecond.
func NowMicro() MicroTime { return NewMicroTime(time.Now()) }

// MarshalJSON writes RFC3339Micro in UTC, or null when t is zero.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, len(RFC3339Micro)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, RFC3339Micro)
	return append(b, '"'), nil
}

// UnmarshalJSON reads RFC 3339 (with or without fractional seconds) or null.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	pt, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	if y := pt.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("time %q is outside the years 0 to 9999 in UTC", s)
	}
	t.Time = pt.Truncate(time.Microsecond).Local()
	return nil
}
