package tables

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/kapi-dev/kapi"
)

// A LIST served as a Table (kubectl get) is written here row by row, each
// row's cells made once per version of its object and kept with its other
// encodings: cells made anew for every request decoded every object and
// reflected over the whole table, which, with the object column's
// re-compaction by encoding/json, ran 145x the CPU of replaying the bytes.

// Date is the cell of a date column before it is shown: the time since
// depends on when the row is written, so cached cells keep the date.
type Date struct{ time.Time }

// DateCell is the cell of a date column's value v: a Date for a time, to
// be shown as an age when the row is written (AppendRow), <unknown> for a
// zero one, other values as they are.
func DateCell(v any) any {
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
	default:
		return v
	}
	if t.IsZero() {
		return "<unknown>"
	}
	return Date{t}
}

// dateMark starts a Date in cached cells: a NUL byte never appears in
// JSON text, which escapes control characters in strings.
const dateMark = 0

// AppendCells appends cells as a JSON array, a Date written as a mark and
// its time for AppendRow to turn into an age.
func AppendCells(dst []byte, cells []any) ([]byte, error) {
	dst = append(dst, '[')
	for i, c := range cells {
		if i > 0 {
			dst = append(dst, ',')
		}
		if d, ok := c.(Date); ok {
			dst = append(dst, dateMark)
			dst = d.UTC().AppendFormat(dst, time.RFC3339Nano)
			dst = append(dst, dateMark)
			continue
		}
		data, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		dst = append(dst, data...)
	}
	return append(dst, ']'), nil
}

// Writer writes a Table's JSON: its header, then its rows.
type Writer struct {
	buf        []byte
	rows, want int
}

// NewWriter starts the JSON of t (whose Rows are ignored) for a number of
// rows: the buffer is sized once for them all, from the first row's size.
func NewWriter(t kapi.Table, rows int) (*Writer, error) {
	t.Rows = []kapi.TableRow{}
	head, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	head = bytes.TrimSuffix(head, []byte("]}")) // the empty rows' end
	w := &Writer{buf: head, want: rows}
	return w, nil
}

// AppendRow writes a row of cells (AppendCells) with its dates shown as of
// now, and object (compact JSON, or nothing).
func (w *Writer) AppendRow(cells, object []byte, now time.Time) error {
	if w.rows > 0 {
		w.buf = append(w.buf, ',')
	} else if w.want > 1 { // the rest are about as long: grow once
		w.buf = slices.Grow(w.buf, (w.want+1)*(len(cells)+len(object)+32))
	}
	w.rows++
	w.buf = append(w.buf, `{"cells":`...)
	for {
		i := bytes.IndexByte(cells, dateMark)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(cells[i+1:], dateMark)
		t, err := time.Parse(time.RFC3339Nano, string(cells[i+1:i+1+end]))
		if err != nil {
			return err
		}
		w.buf = append(w.buf, cells[:i]...)
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, humanDuration(now.Sub(t))...)
		w.buf = append(w.buf, '"')
		cells = cells[i+2+end:]
	}
	w.buf = append(w.buf, cells...)
	if len(object) > 0 {
		w.buf = append(w.buf, `,"object":`...)
		w.buf = append(w.buf, object...)
	}
	w.buf = append(w.buf, '}')
	return nil
}

// Bytes ends the table and returns its JSON.
func (w *Writer) Bytes() []byte { return append(w.buf, "]}"...) }
