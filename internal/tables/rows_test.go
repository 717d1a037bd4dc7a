package tables

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// The Writer writes what encoding/json writes for the same Table, dates
// shown as ages as of the time the row is written.
func TestWriterAsMarshal(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	created := kapi.NewTime(now.Add(-90 * time.Minute))
	head := kapi.Table{
		TypeMeta:          kapi.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ListMeta:          kapi.ListMeta{ResourceVersion: "7", Continue: "c"},
		ColumnDefinitions: []kapi.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Age", Type: "date"}},
	}
	object := []byte(`{"kind":"PartialObjectMetadata","metadata":{"name":"a<b"}}`)
	rows := []struct {
		cells  []any
		object []byte
	}{
		{[]any{"a<b", int32(3), true, 1.5, nil, DateCell(created), DateCell(kapi.Time{}), DateCell((*kapi.Time)(nil)), DateCell("x")}, object},
		{[]any{"c", DateCell(&created)}, nil},
	}
	w, err := NewWriter(head, len(rows))
	if err != nil {
		t.Fatal(err)
	}
	want := head
	for _, r := range rows {
		cells, err := AppendCells(nil, r.cells)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AppendRow(cells, r.object, now); err != nil {
			t.Fatal(err)
		}
		shown := make([]any, len(r.cells))
		for i, c := range r.cells {
			if d, ok := c.(Date); ok {
				c = humanDuration(now.Sub(d.Time))
			}
			shown[i] = c
		}
		want.Rows = append(want.Rows, kapi.TableRow{Cells: shown, Object: json.RawMessage(r.object)})
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	// The same meaning: encoding/json also escapes < in the object, which
	// the Writer copies as it is.
	var got, wantAny any
	if err := json.Unmarshal(w.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, w.Bytes())
	}
	if err := json.Unmarshal(wantJSON, &wantAny); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantAny) {
		t.Errorf("got  %s\nwant %s", w.Bytes(), wantJSON)
	}
	if s := string(w.Bytes()); !strings.Contains(s, `"cells":["c","90m"]}`) || !strings.Contains(s, `"\u003cunknown\u003e","\u003cunknown\u003e","x"]`) {
		t.Errorf("the dates are not shown as ages: %s", s)
	}
}
