package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/postgres"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	url := flag.String("postgres", "postgres://127.0.0.1:5432/postgres", "PostgreSQL connection URL (or libpq key=value string)")
	schema := flag.String("schema", "kapi", "the PostgreSQL schema the objects live in")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	flag.Parse()
	if err := run(*addr, *url, *schema, *profiling); err != nil {
		log.Fatal(err)
	}
}

func run(addr, url, schema string, profiling bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	connect, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	store, err := postgres.Open(connect, url, postgres.WithSchema(schema))
	if err != nil {
		return err
	}
	defer store.Close() // after the server has stopped using it

	// As examples/widgets: namespaces (default and kube-system exist, a
	// deleted one takes its objects with it), leases and events.
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents())
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	log.Printf("serving widgets.example.com/v1 and v1beta1 on http://%s, stored in PostgreSQL, schema %q", addr, schema)
	return api.Run(ctx, server, server.ListenAndServe)
}
