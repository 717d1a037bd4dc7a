package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/serve"
	"github.com/kapi-dev/kapi/storage/bolt"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	proto := flag.Bool("proto", false, "print the .proto file of the example's types and exit")
	data := flag.String("data", "", "keep the objects in the bbolt file DIR/kapi.db instead of in memory")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	flag.Parse()
	if *proto {
		// For clients in other languages: the messages kapi's protobuf
		// responses carry, derived from the types' struct tags.
		file, err := codec.ProtoFile("example.com.v1", reflect.TypeFor[widgetapi.Widget](), reflect.TypeFor[widgetapi.WidgetClass]())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(file)
		return
	}
	if err := run(*addr, *data, *profiling); err != nil {
		log.Fatal(err)
	}
}

func run(addr, data string, profiling bool) error {
	// As in a cluster: default and kube-system exist, objects go only
	// into namespaces that exist, a deleted namespace takes its objects
	// with it; and controllers find the leases they elect a leader on and
	// the events they record.
	opts := []apiserver.Option{apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents()}
	if data != "" {
		// Durable, for one process: every acknowledged write is on disk.
		if err := os.MkdirAll(data, 0o700); err != nil {
			return err
		}
		store, err := bolt.Open(filepath.Join(data, "kapi.db"))
		if err != nil {
			return err
		}
		defer store.Close() // after the server has stopped using it
		opts = append(opts, apiserver.WithStorage(store))
	}
	api, err := apiserver.New(opts...)
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}

	// kapi is a plain http.Handler: mount it beside the service's own routes.
	mux := http.NewServeMux()
	mux.Handle("/", api)
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	log.Printf("serving widgets.example.com/v1 on http://%s", addr)
	return serve.Run(ctx, server, api, server.ListenAndServe)
}
