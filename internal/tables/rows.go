package tables

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
)

// A LIST served as a Table (kubectl get) is laid out here row by row, each
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
// its time for a Body to show as an age.
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

// Body is the JSON of a Table laid out in pieces, each row's dates shown as
// ages as of one moment: a LIST served as a Table is written from them
// (WriteTo) with its length known up front, as lists of objects are, rather
// than assembled in one buffer first (for 10,000 rows, 20 MB allocated,
// cleared and copied per request, and collected). The rows' objects and
// joined rows are kept, not copied; only what the body adds around them
// (a row's start, its cells with their ages) is its own, in chunks that
// are never copied once full.
type Body struct {
	now    time.Time
	pieces [][]byte
	size   int
	own    []byte // the chunk the body's own bytes go to; pieces point into it
	start  int    // where the own bytes not yet in pieces start
	rows   bool   // a row was added
	ages   map[string][]byte
}

// ownChunk is the size of the chunks of a body's own bytes.
const ownChunk = 32 << 10

// NewBody starts the JSON of t (whose Rows are ignored), its dates to be
// shown as ages as of now.
func NewBody(t kapi.Table, now time.Time) (*Body, error) {
	t.Rows = []kapi.TableRow{}
	head, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	b := &Body{now: now, pieces: *pieceSlices.Get().(*[][]byte)}
	b.shared(bytes.TrimSuffix(head, []byte("]}"))) // the empty rows' end
	return b, nil
}

// pieceSlices are reused for bodies' pieces: a Table of 10,000 rows is some
// 30,000 pieces, a slice that grown anew for each LIST cost more CPU in
// copies and the GC than writing the rows.
var pieceSlices = sync.Pool{New: func() any { return new([][]byte) }}

// pooledPiecesMax is the longest slice of pieces the pool keeps: a Table
// of some 10,000 rows.
const pooledPiecesMax = 40_000

// Release gives the body's slice of pieces back for reuse: the body must
// not be used after.
func (b *Body) Release() {
	if cap(b.pieces) <= pooledPiecesMax {
		clear(b.pieces) // the pool must not keep the rows' bytes alive
		p := b.pieces[:0]
		pieceSlices.Put(&p)
	}
	b.pieces = nil
}

// AddRow adds a row of cells (AppendCells) and object (compact JSON, or
// nothing).
func (b *Body) AddRow(cells, object []byte) error {
	if b.rows {
		b.add([]byte(`,{"cells":`))
	} else {
		b.add([]byte(`{"cells":`))
	}
	b.rows = true
	if err := b.addShown(cells, false); err != nil {
		return err
	}
	if len(object) > 0 {
		b.add([]byte(`,"object":`))
		b.shared(object)
	}
	b.add([]byte("}"))
	return nil
}

// AppendJoinedRow appends a row as AddJoined takes rows joined: a comma,
// then the row, its dates not shown yet.
func AppendJoinedRow(dst, cells, object []byte) []byte {
	dst = append(append(dst, `,{"cells":`...), cells...)
	if len(object) > 0 {
		dst = append(append(dst, `,"object":`...), object...)
	}
	return append(dst, '}')
}

// AddJoined adds rows joined (AppendJoinedRow), kept as they are but for
// their dates, shown as ages.
func (b *Body) AddJoined(rows []byte) error {
	if len(rows) == 0 {
		return nil
	}
	if !b.rows {
		rows = rows[1:] // the first row's comma
	}
	b.rows = true
	return b.addShown(rows, true)
}

// addShown adds data with its dates shown as ages: the rest of data as it
// is (kept, or copied into the body's own bytes when small).
func (b *Body) addShown(data []byte, keep bool) error {
	for {
		i := bytes.IndexByte(data, dateMark)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(data[i+1:], dateMark)
		if end < 0 {
			return errors.New("tables: a date in a row is not ended")
		}
		age, err := b.age(data[i+1 : i+1+end])
		if err != nil {
			return err
		}
		if keep {
			b.shared(data[:i])
		} else {
			b.add(data[:i])
		}
		b.add(age)
		data = data[i+2+end:]
	}
	if keep {
		b.shared(data)
	} else {
		b.add(data)
	}
	return nil
}

// age is the JSON string of the age of a date marked in cells, as of now;
// the rows of a list share few dates.
func (b *Body) age(date []byte) ([]byte, error) {
	if a, ok := b.ages[string(date)]; ok {
		return a, nil
	}
	t, err := time.Parse(time.RFC3339Nano, string(date))
	if err != nil {
		return nil, err
	}
	a := append(append([]byte{'"'}, humanDuration(b.now.Sub(t))...), '"')
	if b.ages == nil {
		b.ages = make(map[string][]byte)
	}
	b.ages[string(date)] = a
	return a, nil
}

// add appends p to the body's own bytes.
func (b *Body) add(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(b.own)+len(p) > cap(b.own) {
		b.flush()
		b.own, b.start = make([]byte, 0, max(ownChunk, len(p))), 0
	}
	b.own = append(b.own, p...)
	b.size += len(p)
}

// shared appends p, kept as it is, after the own bytes added so far.
func (b *Body) shared(p []byte) {
	if len(p) == 0 {
		return
	}
	b.flush()
	b.pieces = append(b.pieces, p)
	b.size += len(p)
}

// flush makes the own bytes added since the last piece a piece.
func (b *Body) flush() {
	if len(b.own) > b.start {
		b.pieces = append(b.pieces, b.own[b.start:len(b.own):len(b.own)])
		b.start = len(b.own)
	}
}

var tail = []byte("]}")

// Len is the body's length in bytes.
func (b *Body) Len() int { return b.size + len(tail) }

// WriteTo writes the body to w in many small writes: w should be buffered.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	b.flush()
	var n int64
	for _, p := range b.pieces {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	m, err := w.Write(tail)
	return n + int64(m), err
}

// Bytes is the body in one slice.
func (b *Body) Bytes() []byte {
	b.flush()
	data := make([]byte, 0, b.Len())
	for _, p := range b.pieces {
		data = append(data, p...)
	}
	return append(data, tail...)
}
