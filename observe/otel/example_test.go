package otel_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kapi-dev/kapi/apiserver"
	kapiotel "github.com/kapi-dev/kapi/observe/otel"
	"github.com/kapi-dev/kapi/storage/memory"
)

func ExampleNew() {
	tp := sdktrace.NewTracerProvider() // with the exporter of your choice
	defer tp.Shutdown(context.Background())
	tracer := kapiotel.New(tp)
	srv, err := apiserver.New(
		apiserver.WithObserver(tracer),
		apiserver.WithStorage(tracer.Storage(memory.New())), // storage spans under each request's
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println("tracing")
	// Output: tracing
}
