package apiserver_test

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/kapi-dev/kapi/apiserver"
)

func ExampleWithRequestLog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key { // what changes from run to run, left out here
			case "time", "latency", "audit-ID", "srcIP":
				return slog.Attr{}
			}
			return a
		},
	}))
	srv, err := apiserver.New(apiserver.WithRequestLog(logger))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	req, _ := http.NewRequest("GET", hs.URL+"/version", nil)
	req.Header.Set("User-Agent", "example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	hs.Close() // waits for the request's handler, and so for its line
	fmt.Println("Audit-Id:", resp.Header.Get("Audit-Id") != "")
	// Output:
	// level=INFO msg=HTTP verb=GET URI=/version userAgent=example resp=200
	// Audit-Id: true
}
