package tables

import (
	"fmt"
	"time"
)

// ColumnTypes are the types a column may have: OpenAPI's, and date.
var ColumnTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "date": true}

// Age shows a date cell as kube-apiserver shows the date columns of custom
// resources: the time since, or <unknown>.
func Age(v any) any {
	c := DateCell(v)
	if d, ok := c.(Date); ok {
		return humanDuration(time.Since(d.Time))
	}
	return c
}

// humanDuration is the short approximate form kubectl shows ages in.
func humanDuration(d time.Duration) string {
	seconds := int(d.Seconds())
	switch {
	case seconds < -1:
		return "<invalid>"
	case seconds < 0:
		return "0s"
	case seconds < 2*60:
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int(d / time.Minute)
	switch {
	case minutes < 10:
		if s := seconds % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	case minutes < 3*60:
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	days, years := hours/24, hours/24/365
	switch {
	case hours < 8:
		if m := minutes % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 8*24:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", days, h)
		}
		return fmt.Sprintf("%dd", days)
	case hours < 2*365*24:
		return fmt.Sprintf("%dd", days)
	case hours < 8*365*24:
		if rest := days % 365; rest != 0 {
			return fmt.Sprintf("%dy%dd", years, rest)
		}
		return fmt.Sprintf("%dy", years)
	}
	return fmt.Sprintf("%dy", years)
}

// The descriptions of kube-apiserver's default columns.
const (
	NameDescription              = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	CreationTimestampDescription = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists."
)
