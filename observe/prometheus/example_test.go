package prometheus_test

import (
	"fmt"
	"log"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/observe/prometheus"
)

func ExampleNew() {
	metrics := prometheus.New()
	srv, err := apiserver.New(
		apiserver.WithObserver(metrics),
		apiserver.WithMetrics(metrics.Handler()), // GET /metrics, behind the server's auth
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	metrics.Bind(srv) // apiserver_storage_objects counts its objects
	fmt.Println("serving /metrics")
	// Output: serving /metrics
}
