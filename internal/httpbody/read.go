package httpbody

import "io"

// MaxHint bounds the room Read makes ahead of the bytes: a client
// that claims a large body gets the rest only as it sends it.
const MaxHint = 64 << 10

// Read is io.ReadAll of a request body, starting with room for the size
// the request claims (its Content-Length within the body limit, -1 if
// unknown) and one byte more, so that a body of that size is read into one
// allocation rather than grown into.
//
// A body read to its end is closed: net/http drains a request body its
// handler has not closed before it answers, even one already at its end
// (an io.CopyN into io.Discard, some microseconds a write), and skips that
// for one closed after its end. A body not read to its end is left open,
// for net/http to drain or to close the connection after.
func Read(r io.ReadCloser, size int64) ([]byte, error) {
	b, err := read(r, size)
	if err == nil {
		_ = r.Close() // the body is whole: nothing a Close says changes it
	}
	return b, err
}

func read(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > MaxHint {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // more than claimed (not over HTTP/1.1, which holds a body to its length)
			b = append(b, 0)[:len(b)]
		}
	}
}
