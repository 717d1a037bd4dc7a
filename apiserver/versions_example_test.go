package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/versions"
)

// NoteV1beta1 is an older version of Note whose text was called body.
type NoteV1beta1 struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Body string `json:"body"`
	} `json:"spec,omitempty"`
}

// A kind in two versions: Note v1 is stored and is the hub; v1beta1 is
// served, deprecated, and converts through it. Complete checks what
// needs both registrations, before the first request would.
func ExampleConvertVia() {
	srv, err := apiserver.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	err = errors.Join(
		apiserver.Register(srv, apiserver.Resource[Note]{
			Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes", Namespaced: true,
			Storage: true,
		}),
		apiserver.Register(srv, apiserver.Resource[NoteV1beta1]{
			Group: "notes.example.com", Version: "v1beta1", Kind: "Note", Plural: "notes", Namespaced: true,
			Deprecated: true,
			Conversion: apiserver.ConvertVia(
				func(from *NoteV1beta1, to *Note) error { to.Spec.Text = from.Spec.Body; return nil },
				func(from *Note, to *NoteV1beta1) error { to.Spec.Body = from.Spec.Text; return nil },
			),
		}),
		srv.Complete(),
	)
	if err != nil {
		log.Fatal(err)
	}

	send := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := send("POST", "/apis/notes.example.com/v1beta1/namespaces/default/notes",
		`{"apiVersion":"notes.example.com/v1beta1","kind":"Note","metadata":{"name":"n"},"spec":{"body":"buy milk"}}`)
	fmt.Println(rec.Code, rec.Header().Get("Warning"))
	rec = send("GET", "/apis/notes.example.com/v1/namespaces/default/notes/n", "")
	fmt.Println(strings.Contains(rec.Body.String(), `"spec":{"text":"buy milk"}`))
	// Output:
	// 201 299 - "notes.example.com/v1beta1 Note is deprecated; use notes.example.com/v1 Note"
	// true
}

// After the storage version changed, MigrateStorage rewrites what was
// stored in the old one; here nothing needs it.
func ExampleServer_MigrateStorage() {
	srv, err := apiserver.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := apiserver.Register(srv, apiserver.Resource[Note]{Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes"}); err != nil {
		log.Fatal(err)
	}
	p, err := srv.MigrateStorage(context.Background(), "notes", "notes.example.com", versions.MigrateOptions{
		Progress: func(p versions.Progress) {
			fmt.Printf("%d read, %d rewritten, %d left\n", p.Seen, p.Rewritten, p.Remaining)
		},
	})
	fmt.Println(p.Seen, err)
	// Output:
	// 0 read, 0 rewritten, 0 left
	// 0 <nil>
}
