package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

// A Body is what encoding/json writes for the same Table, dates shown as
// ages as of the body's moment, whether its rows are added one by one or
// joined, and written whole or in pieces.
func TestBodyAsMarshal(t *testing.T) {
	for _, joined := range []bool{false, true} {
		t.Run(fmt.Sprint("joined=", joined), func(t *testing.T) { testBodyAsMarshal(t, joined) })
	}
}

func testBodyAsMarshal(t *testing.T, joined bool) {
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
	w, err := NewBody(head, now)
	if err != nil {
		t.Fatal(err)
	}
	want := head
	var rowsJoined []byte
	for _, r := range rows {
		cells, err := AppendCells(nil, r.cells)
		if err != nil {
			t.Fatal(err)
		}
		if joined {
			rowsJoined = AppendJoinedRow(rowsJoined, cells, r.object)
		} else if err := w.AddRow(cells, r.object); err != nil {
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
	if err := w.AddJoined(rowsJoined); err != nil {
		t.Fatal(err)
	}
	var written bytes.Buffer
	if n, err := w.WriteTo(&written); err != nil || n != int64(w.Len()) || !bytes.Equal(written.Bytes(), w.Bytes()) {
		t.Fatalf("WriteTo wrote %d bytes (%v), Len %d: %s\nBytes: %s", n, err, w.Len(), written.Bytes(), w.Bytes())
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

// A body of many rows spans many chunks of its own bytes and many pieces:
// written whole or in pieces, every row is there, in order, once; and a
// body reused from the pool after Release is the same.
func TestBodyManyRows(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	created := kapi.NewTime(now.Add(-5 * time.Minute))
	for round := range 2 {
		b, err := NewBody(kapi.Table{}, now)
		if err != nil {
			t.Fatal(err)
		}
		var joined []byte
		const n = 5000
		for i := range n {
			cells, err := AppendCells(nil, []any{fmt.Sprintf("w-%05d", i), DateCell(created)})
			if err != nil {
				t.Fatal(err)
			}
			object := []byte(fmt.Sprintf(`{"i":%d}`, i))
			if i < n/2 {
				if err := b.AddRow(cells, object); err != nil {
					t.Fatal(err)
				}
			} else {
				joined = AppendJoinedRow(joined, cells, object)
			}
		}
		if err := b.AddJoined(joined); err != nil {
			t.Fatal(err)
		}
		var written bytes.Buffer
		if _, err := b.WriteTo(&written); err != nil || written.Len() != b.Len() {
			t.Fatalf("round %d: wrote %d bytes (%v), Len %d", round, written.Len(), err, b.Len())
		}
		var table struct {
			Rows []struct {
				Cells  []string
				Object struct{ I int }
			}
		}
		if err := json.Unmarshal(written.Bytes(), &table); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(table.Rows) != n {
			t.Fatalf("round %d: %d rows, want %d", round, len(table.Rows), n)
		}
		for i, r := range table.Rows {
			if r.Object.I != i || r.Cells[0] != fmt.Sprintf("w-%05d", i) || r.Cells[1] != "5m" {
				t.Fatalf("round %d: row %d is %+v", round, i, r)
			}
		}
		b.Release()
	}
}

// A date mark not ended is an error, not a row cut short.
func TestBodyDateNotEnded(t *testing.T) {
	b, err := NewBody(kapi.Table{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddJoined([]byte(",{\"cells\":[\x002026-11-28T12:00:00Z]}")); err == nil {
		t.Error("no error for a date not ended")
	}
}
