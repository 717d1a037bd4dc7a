package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/etcd"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	endpoints := flag.String("etcd", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
	prefix := flag.String("prefix", "/kapi/", "where in etcd's key space the objects live")
	profiling := flag.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ (for the load harness)")
	flag.Parse()
	if err := run(*addr, strings.Split(*endpoints, ","), *prefix, *profiling); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, endpoints []string, prefix string, profiling bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer client.Close()
	connect, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	store, err := etcd.New(connect, client, etcd.WithPrefix(prefix))
	if err != nil {
		return err
	}
	defer store.Close()

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

	log.Printf("serving widgets.example.com/v1 and v1beta1 on http://%s, stored in etcd at %s under %q", addr, strings.Join(endpoints, ","), prefix)
	return api.Run(ctx, server, server.ListenAndServe)
}
