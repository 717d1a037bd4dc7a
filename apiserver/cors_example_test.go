package apiserver_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// A web console served from https://console.example.com lists widgets
// with fetch and watches them over a WebSocket; its preflight is answered
// before authentication.
func ExampleWithCORSAllowedOrigins() {
	srv, err := apiserver.New(apiserver.WithCORSAllowedOrigins(`^https://console\.example\.com$`))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := widgetapi.Register(srv); err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodOptions, "/apis/example.com/v1/namespaces/default/widgets", nil)
	r.Header.Set("Origin", "https://console.example.com")
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	// Output: 204 https://console.example.com
}
