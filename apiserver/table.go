package apiserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi"
)

// Column is a column of the Table a resource is shown as (kubectl get).
// The Name column comes first by itself; without Columns the table has
// Name and Created At, as kube-apiserver's default.
type Column[T any] struct {
	// Name is the column's header (Color, Replicas, Age).
	Name string
	// Type is an OpenAPI type: string, integer, number, boolean, or date.
	// A date cell is shown as the time since it (5m, 3d), as kubectl shows
	// ages.
	Type string
	// Format is an OpenAPI format (int32, byte...), optional.
	Format string
	// Description says what the column shows.
	Description string
	// Priority 0 columns are shown by default, higher ones by kubectl get
	// -o wide.
	Priority int32
	// Value returns the cell of obj: a string, bool, integer, float, or for
	// a date a kapi.Time, *kapi.Time or time.Time; nil leaves it empty
	// (kubectl prints <none>).
	Value func(obj *T) any
}

var columnTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "date": true}

// tableColumns erases the type of a resource's columns.
func tableColumns[T any, P interface {
	*T
	kapi.Object
}](cols []Column[T]) ([]kapi.TableColumnDefinition, []func(kapi.Object) any, error) {
	defs := []kapi.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: nameDescription}}
	var cells []func(kapi.Object) any
	if len(cols) == 0 {
		defs = append(defs, kapi.TableColumnDefinition{Name: "Created At", Type: "date", Description: creationTimestampDescription})
		cells = append(cells, func(o kapi.Object) any {
			return o.GetObjectMeta().CreationTimestamp.UTC().Format(time.RFC3339)
		})
		return defs, cells, nil
	}
	seen := map[string]bool{"Name": true}
	for _, c := range cols {
		switch {
		case c.Name == "" || seen[c.Name]:
			return nil, nil, fmt.Errorf("column %q: names must be present and unique (Name is built in)", c.Name)
		case !columnTypes[c.Type]:
			return nil, nil, fmt.Errorf("column %q: type %q is not one of string, integer, number, boolean, date", c.Name, c.Type)
		case c.Value == nil:
			return nil, nil, fmt.Errorf("column %q: Value is nil", c.Name)
		}
		seen[c.Name] = true
		defs = append(defs, kapi.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
		value, date := c.Value, c.Type == "date"
		cells = append(cells, func(o kapi.Object) any {
			v := value(o.(P))
			if date {
				return age(v)
			}
			return v
		})
	}
	return defs, cells, nil
}

// age shows a date cell as kube-apiserver shows the date columns of custom
// resources: the time since, or <unknown>.
func age(v any) any {
	var t time.Time
	switch v := v.(type) {
	case kapi.Time:
		t = v.Time
	case *kapi.Time:
		if v != nil {
			t = v.Time
		}
	case time.Time:
		t = v
	case nil:
		return nil
	default:
		return v
	}
	if t.IsZero() {
		return "<unknown>"
	}
	return humanDuration(time.Since(t))
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
	nameDescription              = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	creationTimestampDescription = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists."
)

// tableRow is one row of a Table response: its cells, and the object as
// includeObject asks (already encoded as JSON, or nil).
func (r *resource) tableRow(obj kapi.Object, object []byte) kapi.TableRow {
	cells := make([]any, 0, 1+len(r.cells))
	cells = append(cells, obj.GetObjectMeta().Name)
	for _, cell := range r.cells {
		cells = append(cells, cell(obj))
	}
	return kapi.TableRow{Cells: cells, Object: json.RawMessage(object)}
}
