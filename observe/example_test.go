package observe_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"sync"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/observe"
)

// counter counts requests by verb and response code, as a metrics exporter
// would.
type counter struct {
	mu     sync.Mutex
	counts map[string]int
}

var _ observe.Observer = (*counter)(nil)

func (c *counter) RequestStarted(ctx context.Context, _ *observe.RequestRecord) context.Context {
	return ctx
}

func (c *counter) ResponseStarted(context.Context, *observe.RequestRecord) {}

func (c *counter) RequestEnded(_ context.Context, rec *observe.RequestRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[fmt.Sprintf("%s %d", rec.MetricsVerb, rec.Code)]++
}

func ExampleObserver() {
	c := &counter{counts: map[string]int{}}
	srv, err := apiserver.New(apiserver.WithObserver(c))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"/apis", "/version", "/apis/example.com/v1/widgets"} {
		srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Println(c.counts)
	// Output: map[GET 200:2 LIST 404:1]
}
