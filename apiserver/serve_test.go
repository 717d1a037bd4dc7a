package apiserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// A service's main: kapi beside the service's own routes, served until
// SIGTERM or Ctrl-C, then shut down gracefully.
func ExampleServer_Run() {
	api, err := apiserver.New()
	if err != nil {
		log.Fatal(err)
	}
	if err := apiserver.Register(api, apiserver.Resource[Note]{Group: "example.com", Version: "v1", Kind: "Note", Plural: "notes"}); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	mux.Handle("/", api)
	hs := &http.Server{Addr: "127.0.0.1:0", Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stop() // here, at once; a service runs until it is told to stop
	if err := api.Run(ctx, hs, hs.ListenAndServe); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped")
	// Output: stopped
}

// TestRun: when its context ends, Run ends kapi's watches, closes the HTTP
// server and returns nil; a server that cannot listen is an error, and
// kapi is closed with it.
func TestRun(t *testing.T) {
	t.Run("ends watches, then the server", func(t *testing.T) {
		api := noteServer()
		t.Cleanup(func() { _ = api.Close() })
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: api}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ran := make(chan error, 1)
		go func() { ran <- api.Run(ctx, hs, func() error { return hs.Serve(ln) }) }()

		base := "http://" + ln.Addr().String()
		resp, err := http.Get(base + "/apis/notes.example.com/v1/namespaces/default/notes?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("watch: %s", resp.Status)
		}
		cancel()
		// The watch stream ends (EOF), rather than hanging until the test's
		// deadline.
		if _, err := io.Copy(io.Discard, bufio.NewReader(resp.Body)); err != nil {
			t.Fatalf("watch stream: %v", err)
		}
		if err := <-ran; err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			t.Error("the listener still accepts connections after Run returned")
		}
	})
	t.Run("a port in use", func(t *testing.T) {
		api := noteServer()
		t.Cleanup(func() { _ = api.Close() })
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		hs := &http.Server{Addr: taken.Addr().String(), Handler: api}
		err = api.Run(context.Background(), hs, hs.ListenAndServe)
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("Run = %v, want address already in use", err)
		}
		if errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Run = %v, want listen's own error", err)
		}
	})
}
