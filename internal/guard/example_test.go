package guard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/guard"
)

// A handler behind the guard, with the default limits.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := guard.New(ctx, guard.Config{
		Limits:   guard.DefaultLimits(),
		Logger:   slog.New(slog.DiscardHandler),
		Reply:    func(w http.ResponseWriter, _ *http.Request, st kapi.Status) { w.WriteHeader(int(st.Code)) },
		StatusOf: func(error) kapi.Status { return kapi.Status{Code: http.StatusGatewayTimeout} },
	})
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, _ := r.Context().Deadline()
		fmt.Println("deadline within a minute:", time.Until(deadline) <= time.Minute)
	}), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods?timeout=10s", nil))
	fmt.Println(rec.Code)
	// Output:
	// deadline within a minute: true
	// 200
}
