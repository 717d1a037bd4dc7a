package actions_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/apiserver"
)

// Gadget is a resource of its own.
type Gadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Size int32 `json:"size"`
	} `json:"spec"`
}

// Resize is the body of POST gadgets/NAME/resize, and its answer.
type Resize struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Size            int32 `json:"size"`
	Was             int32 `json:"was,omitempty"`
}

// GadgetCheck asks whether a size is allowed: it is answered, never stored.
type GadgetCheck struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Size            int32 `json:"size"`
	Allowed         bool  `json:"allowed"`
}

func serve(register func(srv *apiserver.Server) error) *httptest.Server {
	srv, _ := apiserver.New()
	if err := apiserver.Register(srv, apiserver.Resource[Gadget]{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"}); err != nil {
		panic(err)
	}
	if err := register(srv); err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	resp, err := http.Post(hs.URL+"/apis/example.com/v1/gadgets", "application/json",
		strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":2}}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	return hs
}

func post(hs *httptest.Server, path, body string) {
	resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(data)))
}

func get(hs *httptest.Server, path string) {
	resp, err := http.Get(hs.URL + path)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(data)))
}

// A subresource with a handler per verb: POST reads a Resize and answers
// one; GET answers a text stream. The handlers get the gadget itself.
func ExampleAddSubresource() {
	hs := serve(func(srv *apiserver.Server) error {
		return actions.AddSubresource(srv, actions.Subresource{
			Group: "example.com", Version: "v1", Resource: "gadgets", Name: "resize",
			Create: actions.Write(func(_ context.Context, req actions.Request, in *Resize) (*Resize, error) {
				in.Was = req.Object.(*Gadget).Spec.Size
				return in, nil
			}),
			Get: actions.Stream("text/plain", func(_ context.Context, req actions.Request, w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s has size %d\n", req.Name, req.Object.(*Gadget).Spec.Size)
				return err
			}),
		})
	})
	defer hs.Close()
	post(hs, "/apis/example.com/v1/gadgets/g/resize", `{"size":5}`)
	get(hs, "/apis/example.com/v1/gadgets/g/resize")
	post(hs, "/apis/example.com/v1/gadgets/nope/resize", `{"size":5}`)
	// Output:
	// 201 {"kind":"Resize","apiVersion":"example.com/v1","metadata":{"creationTimestamp":null},"size":5,"was":2}
	// 200 text/plain g has size 2
	// 404 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"gadgets.example.com \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"example.com","kind":"gadgets"},"code":404}
}

// A GET subresource that answers an object.
func ExampleRead() {
	hs := serve(func(srv *apiserver.Server) error {
		return actions.AddSubresource(srv, actions.Subresource{
			Group: "example.com", Version: "v1", Resource: "gadgets", Name: "size",
			Get: actions.Read(func(_ context.Context, req actions.Request) (*Resize, error) {
				return &Resize{Size: req.Object.(*Gadget).Spec.Size}, nil
			}),
		})
	})
	defer hs.Close()
	get(hs, "/apis/example.com/v1/gadgets/g/size")
	// Output:
	// 200 application/json {"kind":"Resize","apiVersion":"example.com/v1","metadata":{"creationTimestamp":null},"size":2}
}

// A kind answered and never stored: POST answers the object with its
// answer filled in; GET is 405, as for kube-apiserver's reviews.
func ExampleAddReview() {
	hs := serve(func(srv *apiserver.Server) error {
		return actions.AddReview(srv, actions.Review[GadgetCheck]{
			Group: "example.com", Version: "v1", Kind: "GadgetCheck", Plural: "gadgetchecks",
			Answer: func(_ context.Context, _ actions.Request, c *GadgetCheck) error {
				c.Allowed = c.Size <= 10
				return nil
			},
		})
	})
	defer hs.Close()
	post(hs, "/apis/example.com/v1/gadgetchecks", `{"apiVersion":"example.com/v1","kind":"GadgetCheck","size":11}`)
	get(hs, "/apis/example.com/v1/gadgetchecks")
	// Output:
	// 201 {"kind":"GadgetCheck","apiVersion":"example.com/v1","metadata":{"creationTimestamp":null},"size":11,"allowed":false}
	// 405 application/json {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","code":405}
}
