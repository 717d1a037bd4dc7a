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
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	proto := flag.Bool("proto", false, "print the .proto file of the example's types and exit")
	data := flag.String("data", "", "keep the objects in the bbolt file DIR/kapi.db instead of in memory")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	encryptionConfig := flag.String("encryption-config", "", "encrypt at rest as this EncryptionConfiguration file says (kube-apiserver's format)")
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
	if err := run(*addr, *data, *encryptionConfig, *profiling); err != nil {
		log.Fatal(err)
	}
}

func run(addr, data, encryptionConfig string, profiling bool) error {
	var store storage.Interface
	if data == "" {
		m := memory.New() // apiserver's default, named to be wrapped
		defer m.Close()
		store = m
	} else {
		// Durable, for one process: every acknowledged write is on disk.
		if err := os.MkdirAll(data, 0o700); err != nil {
			return err
		}
		db, err := bolt.Open(filepath.Join(data, "kapi.db"))
		if err != nil {
			return err
		}
		defer db.Close() // after the server has stopped using it
		store = db
	}
	if encryptionConfig != "" {
		file, err := os.ReadFile(encryptionConfig)
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
	api, err := apiserver.New(apiserver.WithStorage(store))
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
