// Command controlplane is a generic control plane: it serves namespaces,
// CustomResourceDefinitions, leases and events, and nothing else, so that
// kubectl apply adds the kinds it serves. A definition's
// x-kubernetes-validations rules are checked by validation/cel's engine,
// which is why the example is a module of its own (cel-go stays out of
// kapi's root module):
//
//	go run ./examples/controlplane -addr 127.0.0.1:8080               # in memory
//	go run ./examples/controlplane -addr 127.0.0.1:8080 -data /tmp/cp  # in /tmp/cp/kapi.db
//	kubectl --server http://127.0.0.1:8080 apply --server-side -f crd.yaml
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/validation/cel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	data := flag.String("data", "", "keep the objects in the bbolt file DIR/kapi.db instead of in memory")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	flag.Parse()
	if err := run(*addr, *data, *profiling); err != nil {
		log.Fatal(err)
	}
}

func run(addr, data string, profiling bool) error {
	engine, err := cel.New()
	if err != nil {
		return err
	}
	opts := []apiserver.Option{apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents(), apiserver.WithRuleEngine(engine)}
	if data != "" {
		if err := os.MkdirAll(data, 0o700); err != nil {
			return err
		}
		store, err := bolt.Open(filepath.Join(data, "kapi.db"))
		if err != nil {
			return err
		}
		defer store.Close()
		opts = append(opts, apiserver.WithStorage(store))
	}
	api, err := apiserver.New(opts...)
	if err != nil {
		return err
	}
	if err := crd.Serve(api); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var handler http.Handler = api
	if profiling {
		mux := http.NewServeMux()
		mux.Handle("/", api)
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		handler = mux
	}
	server := &http.Server{Addr: addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("serving a control plane on http://%s", addr)
	return api.Run(ctx, server, server.ListenAndServe)
}
