package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve plain HTTP on")
	proto := flag.Bool("proto", false, "print the .proto file of the example's types and exit")
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
