package apiserver

import (
	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/tables"
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
	// (kubectl prints <none>). It is called once per version of an object
	// and its cell kept, so it must depend on obj alone: return times as
	// dates, which each Table shows as the age they are at that moment.
	Value func(obj *T) any
}

// tableColumns erases the type of a resource's columns.
func tableColumns[T any, P interface {
	*T
	kapi.Object
}](cols []Column[T]) (tables.Columns, error) {
	erased := make([]tables.Column, len(cols))
	for i, c := range cols {
		erased[i].TableColumnDefinition = kapi.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority}
		if value := c.Value; value != nil {
			erased[i].Value = func(o kapi.Object) any { return value(o.(P)) }
		}
	}
	return tables.NewColumns(erased)
}
