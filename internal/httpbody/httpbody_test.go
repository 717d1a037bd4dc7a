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
		for _, streamed := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: " streamed"}[streamed], func(t *testing.T) {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.Header.Set("Accept-Encoding", tc.acceptEncoding)
				rec := httptest.NewRecorder()
				if streamed {
					half := len(tc.data) / 2
					httpbody.WriteStreamed(rec, r, http.StatusCreated, "application/json", pieces{tc.data[:half], tc.data[half:]})
				} else {
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
