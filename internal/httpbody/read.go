package httpbody

import "io"

// MaxHint bounds the room Read makes ahead of the bytes: a client
// that claims a large body gets the rest only as it sends it.
const MaxHint = 64 << 10

// Read is io.ReadAll of a request body, starting with room for the size
// the request claims (its Content-Length within the body limit, -1 if
// unknown) and one byte more, so that a body of that size is read into one
// allocation rather than grown into.
func Read(r io.Reader, size int64) ([]byte, error) {
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
