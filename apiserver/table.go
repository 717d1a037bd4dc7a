package apiserver

import (
	"fmt"
	"time"

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
}](cols []Column[T]) ([]kapi.TableColumnDefinition, []func(kapi.Object) any, error) {
	defs := []kapi.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: tables.NameDescription}}
	var cells []func(kapi.Object) any
	if len(cols) == 0 {
		defs = append(defs, kapi.TableColumnDefinition{Name: "Created At", Type: "date", Description: tables.CreationTimestampDescription})
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
		case !tables.ColumnTypes[c.Type]:
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
				return tables.DateCell(v)
			}
			return v
		})
	}
	return defs, cells, nil
}

// tableCells is the JSON of obj's cells in a Table (tables.AppendCells).
func (r *resource) tableCells(obj kapi.Object) ([]byte, error) {
	cells := make([]any, 0, 1+len(r.cells))
	cells = append(cells, obj.GetObjectMeta().Name)
	for _, cell := range r.cells {
		cells = append(cells, cell(obj))
	}
	return tables.AppendCells(nil, cells)
}
