package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Fatal(err)
	}
}

func run(addr string) error {
	api, err := apiserver.New()
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}

	// kapi is a plain http.Handler: mount it beside the service's own routes.
	mux := http.NewServeMux()
	mux.Handle("/", api)
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = api.Close() // ends the watches, so Shutdown does not wait for them
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()

	log.Printf("serving widgets.example.com/v1 on http://%s", addr)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
