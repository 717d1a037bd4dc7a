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
	"strings"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/versions"
)

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	proto := flag.Bool("proto", false, "print the .proto file of the example's types and exit")
	flag.StringVar(&o.data, "data", "", "keep the objects in the bbolt file DIR/kapi.db instead of in memory")
	flag.BoolVar(&o.profiling, "pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	flag.StringVar(&o.encryptionConfig, "encryption-config", "", "encrypt at rest as this EncryptionConfiguration file says (kube-apiserver's format)")
	flag.StringVar(&o.storageVersion, "storage-version", "v1", "store widgets in this version (v1 or v1beta1)")
	flag.StringVar(&o.corsAllowedOrigins, "cors-allowed-origins", "", "let web pages of these origins call the API: regular expressions, comma-separated, as kube-apiserver's flag")
	flag.BoolVar(&o.migrate, "migrate", false, "rewrite every stored widget in the storage version, report the progress and exit")
	flag.StringVar(&o.migrateAfter, "migrate-after", "", "resume a migration after this key (the last one an interrupted -migrate reported)")
	flag.IntVar(&o.maxWatches, "max-watches", -1, "cap the watches open at once (0: no cap; -1: apiserver's default, 1000)")
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
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// options are the example's flags.
type options struct {
	addr, data, encryptionConfig string
	storageVersion, migrateAfter string
	corsAllowedOrigins           string
	profiling, migrate           bool
	maxWatches                   int
}

func run(o options) error {
	var store storage.Interface
	if o.data == "" {
		m := memory.New() // apiserver's default, named to be wrapped
		defer m.Close()
		store = m
	} else {
		// Durable, for one process: every acknowledged write is on disk.
		if err := os.MkdirAll(o.data, 0o700); err != nil {
			return err
		}
		db, err := bolt.Open(filepath.Join(o.data, "kapi.db"))
		if err != nil {
			return err
		}
		defer db.Close() // after the server has stopped using it
		store = db
	}
	if o.encryptionConfig != "" {
		file, err := os.ReadFile(o.encryptionConfig)
		if err != nil {
			return err
		}
		config, err := encryption.ParseConfig(file)
		if err != nil {
			return err
		}
		if store, err = encryption.New(store, config); err != nil {
			return err
		}
	}
	// As in a cluster: default and kube-system exist, objects go only into
	// namespaces that exist, a deleted namespace takes its objects with it;
	// and controllers find the leases they elect a leader on and the
	// events they record.
	opts := []apiserver.Option{apiserver.WithStorage(store), apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents()}
	if o.maxWatches >= 0 {
		// The load harness's watchers curve opens up to 10,000.
		opts = append(opts, apiserver.WithMaxWatches(o.maxWatches))
	}
	if o.corsAllowedOrigins != "" {
		// A web console served from another origin lists with fetch and
		// watches over a WebSocket.
		opts = append(opts, apiserver.WithCORSAllowedOrigins(strings.Split(o.corsAllowedOrigins, ",")...))
	}
	api, err := apiserver.New(opts...)
	if err != nil {
		return err
	}
	if err := widgetapi.RegisterStoringIn(api, o.storageVersion); err != nil {
		return err
	}
	// Actions beside the objects: widgets/restart, widgets/log, widgetreviews.
	if err := widgetapi.RegisterActions(api); err != nil {
		return err
	}
	if o.migrate {
		// Objects written while another version was the storage version
		// are read correctly as they are; this stores them in the current
		// one, safely beside a server that is writing.
		p, err := api.MigrateStorage(context.Background(), "widgets", "example.com", versions.MigrateOptions{
			After: o.migrateAfter,
			Progress: func(p versions.Progress) {
				log.Printf("migrated %d widgets of %d read, %d left; last key %s", p.Rewritten, p.Seen, p.Remaining, p.Key)
			},
		})
		if err != nil {
			return fmt.Errorf("%w (resume with -migrate-after=%q)", err, p.Key)
		}
		log.Printf("widgets are stored in %s: %d rewritten of %d", o.storageVersion, p.Rewritten, p.Seen)
		return nil
	}

	// kapi is a plain http.Handler: mount it beside the service's own routes.
	mux := http.NewServeMux()
	mux.Handle("/", api)
	if o.profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	server := &http.Server{Addr: o.addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	log.Printf("serving widgets.example.com/v1 and v1beta1 (stored in %s) on http://%s", o.storageVersion, o.addr)
	return api.Run(ctx, server, server.ListenAndServe)
}
