package tables

import (
	"fmt"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/listcache"
)

// Column is a column of a resource's Table, its value's type erased.
type Column struct {
	kapi.TableColumnDefinition
	Value func(kapi.Object) any
}

// Columns are a resource's Table columns: Name first, then its own, or
// Created At without any, as kube-apiserver's default.
type Columns struct {
	Defs  []kapi.TableColumnDefinition
	cells []func(kapi.Object) any // of the columns after Name
}

// NewColumns checks cols and makes the Columns of a resource shown with them.
func NewColumns(cols []Column) (Columns, error) {
	c := Columns{Defs: []kapi.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: NameDescription}}}
	if len(cols) == 0 {
		c.Defs = append(c.Defs, kapi.TableColumnDefinition{Name: "Created At", Type: "date", Description: CreationTimestampDescription})
		c.cells = append(c.cells, func(o kapi.Object) any {
			return o.GetObjectMeta().CreationTimestamp.UTC().Format(time.RFC3339)
		})
		return c, nil
	}
	seen := map[string]bool{"Name": true}
	for _, col := range cols {
		switch {
		case col.Name == "" || seen[col.Name]:
			return Columns{}, fmt.Errorf("column %q: names must be present and unique (Name is built in)", col.Name)
		case !ColumnTypes[col.Type]:
			return Columns{}, fmt.Errorf("column %q: type %q is not one of string, integer, number, boolean, date", col.Name, col.Type)
		case col.Value == nil:
			return Columns{}, fmt.Errorf("column %q: Value is nil", col.Name)
		}
		seen[col.Name] = true
		c.Defs = append(c.Defs, col.TableColumnDefinition)
		value := col.Value
		if col.Type == "date" {
			value = func(o kapi.Object) any { return DateCell(col.Value(o)) }
		}
		c.cells = append(c.cells, value)
	}
	return c, nil
}

// Cells is the JSON of obj's cells (AppendCells).
func (c Columns) Cells(obj kapi.Object) ([]byte, error) {
	cells := make([]any, 0, 1+len(c.cells))
	cells = append(cells, obj.GetObjectMeta().Name)
	for _, cell := range c.cells {
		cells = append(cells, cell(obj))
	}
	return AppendCells(nil, cells)
}

// AddRows adds a row per item, each made by row (its cells and object).
// With runs, the rows of a whole collection's list (key names it, rev is
// its revision) are joined in runs kept for its next list, as listcache
// keeps the items of lists of objects, and only those around what changed
// are made anew; runs nil or the collection's first list: row by row.
func AddRows[T comparable](b *Body, runs *listcache.Runs[T], key string, rev int64, items []T, row func(T) (cells, object []byte, err error)) error {
	var joined [][]byte
	if runs != nil {
		var err error
		joined, err = runs.Join(key, rev, items, func(dst []byte, it T) ([]byte, error) {
			cells, object, err := row(it)
			return AppendJoinedRow(dst, cells, object), err
		})
		if err != nil {
			return err
		}
	}
	for _, rows := range joined {
		if err := b.AddJoined(rows); err != nil {
			return err
		}
	}
	for i := 0; i < len(items) && joined == nil; i++ {
		cells, object, err := row(items[i])
		if err == nil {
			err = b.AddRow(cells, object)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
