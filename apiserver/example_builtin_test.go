package apiserver_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
)

// A server with namespaces, leases and events, as a cluster has them: notes
// go only into namespaces that exist.
func ExampleWithNamespaces() {
	srv, err := apiserver.New(apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	err = apiserver.Register(srv, apiserver.Resource[Note]{
		Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes", Namespaced: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	post := func(path, body string) {
		resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		message := ""
		if resp.StatusCode >= 400 {
			message = " " + strings.SplitAfter(string(data), `"message":`)[1]
			message = message[:strings.Index(message, `,"reason"`)]
		}
		fmt.Println(resp.StatusCode, path+message)
	}
	note := `{"apiVersion":"notes.example.com/v1","kind":"Note","metadata":{"name":"n"}}`
	post("/apis/notes.example.com/v1/namespaces/team/notes", note)
	post("/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`)
	post("/apis/notes.example.com/v1/namespaces/team/notes", note)
	post("/apis/notes.example.com/v1/namespaces/default/notes", note)
	// Output:
	// 404 /apis/notes.example.com/v1/namespaces/team/notes "namespaces \"team\" not found"
	// 201 /api/v1/namespaces
	// 201 /apis/notes.example.com/v1/namespaces/team/notes
	// 201 /apis/notes.example.com/v1/namespaces/default/notes
}
