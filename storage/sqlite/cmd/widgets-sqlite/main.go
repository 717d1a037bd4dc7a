package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	file := flag.String("file", "widgets.sqlite", "the SQLite file the objects live in (created if absent)")
	flag.Parse()
	if err := run(*addr, *file); err != nil {
		log.Fatal(err)
	}
}

func run(addr, file string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	store, err := sqlite.Open(file)
	if err != nil {
		return err
	}
	defer store.Close() // after the server has stopped using it

	// As examples/widgets: default and kube-system exist, objects go only
	// into namespaces that exist, and controllers find the leases they
	// elect a leader on and the events they record.
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents())
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	log.Printf("serving widgets.example.com/v1 and v1beta1 on http://%s, stored in %s", addr, file)
	return api.Run(ctx, server, server.ListenAndServe)
}
