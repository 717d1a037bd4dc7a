package tables

import (
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// NewColumns refuses what kube-apiserver could not show, and a resource's
// cells follow its columns: Name first, a date kept as a date.
func TestNewColumns(t *testing.T) {
	value := func(kapi.Object) any { return "v" }
	for _, c := range []struct {
		cols []Column
		want string
	}{
		{[]Column{{TableColumnDefinition: kapi.TableColumnDefinition{Type: "string"}, Value: value}}, "names must be present"},
		{[]Column{{TableColumnDefinition: kapi.TableColumnDefinition{Name: "Name", Type: "string"}, Value: value}}, "names must be present and unique"},
		{[]Column{{TableColumnDefinition: kapi.TableColumnDefinition{Name: "A", Type: "object"}, Value: value}}, `type "object"`},
		{[]Column{{TableColumnDefinition: kapi.TableColumnDefinition{Name: "A", Type: "string"}}}, "Value is nil"},
	} {
		if _, err := NewColumns(c.cols); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewColumns(%+v): %v, want %q", c.cols, err, c.want)
		}
	}
	created := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	obj := &kapi.PartialObjectMetadata{ObjectMeta: kapi.ObjectMeta{Name: "a", CreationTimestamp: kapi.NewTime(created)}}
	cols, err := NewColumns([]Column{
		{TableColumnDefinition: kapi.TableColumnDefinition{Name: "Color", Type: "string"}, Value: value},
		{TableColumnDefinition: kapi.TableColumnDefinition{Name: "Age", Type: "date"}, Value: func(o kapi.Object) any { return o.GetObjectMeta().CreationTimestamp }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cols.Defs) != 3 || cols.Defs[0].Name != "Name" || cols.Defs[2].Name != "Age" {
		t.Errorf("definitions %+v", cols.Defs)
	}
	cells, err := cols.Cells(obj)
	if want := "[\"a\",\"v\",\x002026-11-28T12:00:00Z\x00]"; err != nil || string(cells) != want {
		t.Errorf("cells %q (%v), want %q", cells, err, want)
	}
	defaults, err := NewColumns(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cells, err := defaults.Cells(obj); err != nil || string(cells) != `["a","2026-11-28T12:00:00Z"]` || defaults.Defs[1].Name != "Created At" {
		t.Errorf("default cells %s (%v), definitions %+v", cells, err, defaults.Defs)
	}
}
