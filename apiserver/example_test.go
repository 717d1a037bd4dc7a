package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
)

// Note is a user's own resource type: TypeMeta inline, ObjectMeta as
// "metadata", then whatever the service needs.
type Note struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            NoteSpec `json:"spec,omitempty"`
}

// NoteSpec is what a user writes.
type NoteSpec struct {
	Text     string `json:"text"`
	Priority int32  `json:"priority,omitempty"`
}

func ExampleRegister() {
	srv, err := apiserver.New() // in memory
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	err = apiserver.Register(srv, apiserver.Resource[Note]{
		Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes",
		Namespaced: true, ShortNames: []string{"nt"},
		Default: func(n *Note) {
			if n.Spec.Priority == 0 {
				n.Spec.Priority = 3
			}
		},
		Validate: func(_ context.Context, n, _ *Note) apiserver.FieldErrors {
			if n.Spec.Text == "" {
				return apiserver.FieldErrors{apiserver.Required("spec.text", "")}
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	// kapi is an http.Handler: mount it beside the service's own routes.
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	mux.Handle("/", srv)

	// What kubectl or client-go would send, here without a network.
	send := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	const notes = "/apis/notes.example.com/v1/namespaces/default/notes"

	rec := send("POST", notes, `{"apiVersion":"notes.example.com/v1","kind":"Note","metadata":{"name":"first"},"spec":{"text":"buy milk"}}`)
	fmt.Println("create:", rec.Code)

	rec = send("GET", notes+"/first", "")
	var n Note
	if err := json.Unmarshal(rec.Body.Bytes(), &n); err != nil {
		log.Fatal(err)
	}
	fmt.Println("get:", rec.Code, n.Name, n.Spec.Text, n.Spec.Priority, n.Generation)

	rec = send("POST", notes, `{"metadata":{"name":"empty"},"spec":{}}`)
	var st kapi.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		log.Fatal(err)
	}
	fmt.Println("invalid:", rec.Code, st.Message)

	fmt.Print("own route: ", send("GET", "/hello", "").Body.String())
	// Output:
	// create: 201
	// get: 200 first buy milk 3 1
	// invalid: 422 Note.notes.example.com "empty" is invalid: spec.text: Required value
	// own route: hello
}
