package httpbody_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi/internal/httpbody"
)

// pieces is a body of known length written from its pieces.
type pieces [][]byte

func (p pieces) Len() int {
	n := 0
	for _, b := range p {
		n += len(b)
	}
	return n
}

func (p pieces) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, b := range p {
		m, err := w.Write(b)
		if n += int64(m); err != nil {
			return n, err
		}
	}
	return n, nil
}

// largePieces is pieces that say their writes are large.
type largePieces struct{ pieces }

func (largePieces) LargeWrites() bool { return true }

// countingWriter is a response writer that counts the writes that reach it.
type countingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.ResponseRecorder.Write(p)
}

// A body whose pieces are large reaches the response piece by piece, as
// they are; small pieces are gathered into one write.
func TestWriteStreamedLargeWrites(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 3000)
	for _, tc := range []struct {
		name string
		body interface {
			Len() int
			WriteTo(io.Writer) (int64, error)
		}
		writes int
	}{
		{"small pieces", pieces{data[:1000], data[1000:2000], data[2000:]}, 1},
		{"large pieces", largePieces{pieces{data[:1000], data[1000:2000], data[2000:]}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
			httpbody.WriteStreamed(w, httptest.NewRequest(http.MethodGet, "/", nil), http.StatusOK, "application/json", tc.body)
			if w.writes != tc.writes || !bytes.Equal(w.Body.Bytes(), data) || w.Header().Get("Content-Length") != "3000" {
				t.Errorf("%d writes of %d bytes, Content-Length %q; want %d of the 3000", w.writes, w.Body.Len(), w.Header().Get("Content-Length"), tc.writes)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	small, large := []byte(`{"kind":"Status"}`), bytes.Repeat([]byte("x"), httpbody.GzipMinBytes)
	for _, tc := range []struct {
		name, acceptEncoding string
		data                 []byte
		gzipped              bool
	}{
		{"small", "gzip", small, false},
		{"large without gzip", "", large, false},
		{"large with gzip", "gzip, deflate", large, true},
		{"large with gzip refused", "gzip;q=0", large, false},
	} {
		for _, how := range []string{"", " streamed", " streamed in large pieces"} {
			t.Run(tc.name+how, func(t *testing.T) {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.Header.Set("Accept-Encoding", tc.acceptEncoding)
				rec := httptest.NewRecorder()
				half := len(tc.data) / 2
				switch how {
				case " streamed":
					httpbody.WriteStreamed(rec, r, http.StatusCreated, "application/json", pieces{tc.data[:half], tc.data[half:]})
				case " streamed in large pieces":
					httpbody.WriteStreamed(rec, r, http.StatusCreated, "application/json", largePieces{pieces{tc.data[:half], tc.data[half:]}})
				default:
					httpbody.Write(rec, r, http.StatusCreated, "application/json", tc.data)
				}
				body := rec.Body.Bytes()
				if tc.gzipped {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					if body, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				} else if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(tc.data)) {
					t.Errorf("Content-Length %q, want %d", got, len(tc.data))
				}
				if rec.Code != http.StatusCreated || rec.Header().Get("Content-Type") != "application/json" || !bytes.Equal(body, tc.data) {
					t.Errorf("HTTP %d, %q, %d bytes; want 201, application/json, the %d bytes", rec.Code, rec.Header().Get("Content-Type"), len(body), len(tc.data))
				}
				if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != tc.gzipped {
					t.Errorf("gzip %v, want %v", gz, tc.gzipped)
				}
			})
		}
	}
}

func TestBuffer(t *testing.T) {
	var out bytes.Buffer
	bw := httpbody.Buffer(&out)
	_, _ = bw.WriteString("event 1\n")
	_, _ = bw.WriteString("event 2\n")
	if out.Len() != 0 {
		t.Fatal("the buffer wrote before it was full or released")
	}
	if err := httpbody.Release(bw); err != nil || out.String() != "event 1\nevent 2\n" {
		t.Errorf("Release: %v, %q", err, out.String())
	}
}
