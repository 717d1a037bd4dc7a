package httpbody

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// GzipMinBytes is the size from which a response is compressed for a client
// that accepts gzip, as kube-apiserver's: smaller ones gain too little.
const GzipMinBytes = 128 << 10

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// Write writes a response body with its headers (Content-Type,
// X-Content-Type-Options, and Content-Length or gzip) and code.
func Write(w http.ResponseWriter, r *http.Request, code int, contentType string, data []byte) {
	if zw := Start(w, r, code, contentType, len(data)); zw != nil {
		_, _ = zw.Write(data)
		Finish(zw)
		return
	}
	_, _ = w.Write(data)
}

// streamBuffers gather a streamed body's many small pieces into large
// writes: one syscall (or one gzip call) per 32 KiB rather than per piece.
var streamBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

// LargeWrites is what a body WriteStreamed writes may say of its pieces:
// that they are large (a list written from the runs kept of it, some
// hundreds of KiB each), so that they go to the response as they are, as
// a body held whole does: through the stream buffer, the first 32 KiB of a
// LIST of 500 widgets were copied once more, and the response took one
// syscall more than its bytes written at once.
type LargeWrites interface{ LargeWrites() bool }

// WriteStreamed writes a body of known length from its pieces, with the
// headers and compression Write gives the same bytes.
func WriteStreamed(w http.ResponseWriter, r *http.Request, code int, contentType string, body interface {
	io.WriterTo
	Len() int
}) {
	zw := Start(w, r, code, contentType, body.Len())
	if l, ok := body.(LargeWrites); ok && l.LargeWrites() {
		if zw == nil {
			_, _ = body.WriteTo(w)
			return
		}
		_, _ = body.WriteTo(zw)
		Finish(zw)
		return
	}
	bw := streamBuffers.Get().(*bufio.Writer)
	if zw != nil {
		bw.Reset(zw)
	} else {
		bw.Reset(w)
	}
	if _, err := body.WriteTo(bw); err == nil {
		_ = bw.Flush()
	}
	bw.Reset(nil)
	streamBuffers.Put(bw)
	if zw != nil {
		Finish(zw)
	}
}

// Start sets the headers of a body of size bytes and writes the status
// line. It returns a gzip writer over w when the body is to be compressed;
// the caller writes the body to it and ends it with Finish.
func Start(w http.ResponseWriter, r *http.Request, code int, contentType string, size int) *gzip.Writer {
	h := w.Header()
	// As Header.Set, whose keys these are already in canonical form, with
	// the values in one allocation rather than one each.
	values := make([]string, 3)
	values[0], values[1] = contentType, "nosniff"
	h["Content-Type"], h["X-Content-Type-Options"] = values[0:1:1], values[1:2:2]
	if size >= GzipMinBytes && AcceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(code)
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(w)
		return zw
	}
	values[2] = strconv.Itoa(size)
	h["Content-Length"] = values[2:3:3]
	w.WriteHeader(code)
	return nil
}

// Finish ends a compressed body Start began.
func Finish(zw *gzip.Writer) {
	_ = zw.Close()
	zw.Reset(nil)
	gzipWriters.Put(zw)
}

// AcceptsGzip says whether the request's Accept-Encoding lists gzip,
// without q=0.
func AcceptsGzip(r *http.Request) bool {
	if r == nil {
		return false
	}
	for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(enc, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
		return true
	}
	return false
}

// Buffer is a 32 KiB buffer over w from a pool, for a stream of many small
// writes (a burst of watch events); give it back with Release.
func Buffer(w io.Writer) *bufio.Writer {
	bw := streamBuffers.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

// Release writes what bw holds and gives it back to the pool.
func Release(bw *bufio.Writer) error {
	err := bw.Flush()
	bw.Reset(nil)
	streamBuffers.Put(bw)
	return err
}

// Streamed is a response written as it comes (a log followed): the
// header, 200 and contentType, goes with the first write or Flush
// (Started says whether it went), and each write is sent at once.
type Streamed struct {
	W           http.ResponseWriter
	ContentType string
	Started     bool
}

func (s *Streamed) Write(p []byte) (int, error) {
	if !s.Started {
		s.Started = true
		s.W.Header().Set("Content-Type", s.ContentType)
		s.W.WriteHeader(http.StatusOK)
	}
	n, err := s.W.Write(p)
	if err == nil {
		err = http.NewResponseController(s.W).Flush()
	}
	return n, err
}

// Flush sends the header if it has not gone: a client waits for it.
func (s *Streamed) Flush() { _, _ = s.Write(nil) }
