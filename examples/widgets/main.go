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
	"github.com/kapi-dev/kapi/versions"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	proto := flag.Bool("proto", false, "print the .proto file of the example's types and exit")
	data := flag.String("data", "", "keep the objects in the bbolt file DIR/kapi.db instead of in memory")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	storageVersion := flag.String("storage-version", "v1", "store widgets in this version (v1 or v1beta1)")
	migrate := flag.Bool("migrate", false, "rewrite every stored widget in the storage version, report the progress and exit")
	after := flag.String("migrate-after", "", "resume a migration after this key (the last one an interrupted -migrate reported)")
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
	if err := run(*addr, *data, *storageVersion, *profiling, *migrate, *after); err != nil {
		log.Fatal(err)
	}
}

func run(addr, data, storageVersion string, profiling, migrate bool, after string) error {
	var opts []apiserver.Option
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
	if err := widgetapi.RegisterStoringIn(api, storageVersion); err != nil {
		return err
	}
	if migrate {
		// Objects written while another version was the storage version
		// are read correctly as they are; this stores them in the current
		// one, safely beside a server that is writing.
		p, err := api.MigrateStorage(context.Background(), "widgets", "example.com", versions.MigrateOptions{
			After: after,
			Progress: func(p versions.Progress) {
				log.Printf("migrated %d widgets of %d read, %d left; last key %s", p.Rewritten, p.Seen, p.Remaining, p.Key)
			},
		})
		if err != nil {
			return fmt.Errorf("%w (resume with -migrate-after=%q)", err, p.Key)
		}
		log.Printf("widgets are stored in %s: %d rewritten of %d", storageVersion, p.Rewritten, p.Seen)
		return nil
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

	log.Printf("serving widgets.example.com/v1 and v1beta1 (stored in %s) on http://%s", storageVersion, addr)
	return serve.Run(ctx, server, api, server.ListenAndServe)
}
