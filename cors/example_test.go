package cors_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kapi-dev/kapi/cors"
)

// A console served from https://console.example.com calls an API served
// elsewhere; its preflight is answered before the API's handler runs.
func ExampleNew() {
	policy, err := cors.New([]string{`^https://console\.example\.com$`})
	if err != nil {
		panic(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the API") })
	h := policy.Handler(api)

	r := httptest.NewRequest(http.MethodOptions, "/apis/example.com/v1/widgets", nil)
	r.Header.Set("Origin", "https://console.example.com")
	r.Header.Set("Access-Control-Request-Method", "PATCH")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Access-Control-Allow-Origin"), w.Header().Get("Access-Control-Allow-Methods"))
	// Output: 204 https://console.example.com POST, GET, OPTIONS, PUT, DELETE, PATCH
}
