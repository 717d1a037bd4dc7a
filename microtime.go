package kapi

import "time"

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
func (t MicroTime) MarshalJSON() ([]byte, error) { return marshalTime(t.Time, RFC3339Micro), nil }

// UnmarshalJSON reads RFC 3339 (with or without fractional seconds) or null.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	pt, err := unmarshalTime(b)
	t.Time = pt.Truncate(time.Microsecond)
	return err
}
