package actions

import (
	"context"
	"errors"
	"io"
	"reflect"

	"github.com/kapi-dev/kapi"
)

// Handler serves one verb of a subresource: make it with Read, Write or
// Stream.
type Handler struct{ verb *Verb }

// errNoAnswer is a handler's bug: it answered neither an object nor an
// error.
var errNoAnswer = errors.New("actions: the handler answered nothing")

// Read answers a GET with an Out.
func Read[Out any, PO interface {
	*Out
	kapi.Object
}](fn func(ctx context.Context, req Request) (*Out, error)) Handler {
	return Handler{&Verb{Out: PO(new(Out)), Answer: func(ctx context.Context, req Request, _ kapi.Object) (kapi.Object, error) {
		return answer[Out, PO](fn(ctx, req))
	}}}
}

// Write reads a body, an In, and answers with an Out: a POST when it is
// the subresource's Create, a PUT when its Update.
func Write[In, Out any, PI interface {
	*In
	kapi.Object
}, PO interface {
	*Out
	kapi.Object
}](fn func(ctx context.Context, req Request, in *In) (*Out, error)) Handler {
	return Handler{&Verb{In: PI(new(In)), Out: PO(new(Out)), Answer: func(ctx context.Context, req Request, in kapi.Object) (kapi.Object, error) {
		return answer[Out, PO](fn(ctx, req, in.(PI)))
	}}}
}

func answer[Out any, PO interface {
	*Out
	kapi.Object
}](out *Out, err error) (kapi.Object, error) {
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errNoAnswer
	}
	return PO(out), nil
}

// Stream answers a GET with what fn writes to w, in contentType
// ("text/plain" for a log), each write sent at once. The header goes with
// the first write, or when fn flushes w (an http.Flusher) to have it go
// before it waits for something to write: a client waits for it. An
// error returned before the header went is answered as a Status; after
// it, the error is logged and the response broken off, so that the client
// sees a failed stream, not a complete one; a nil return ends it whole.
//
// A Stream is long-running whatever its name: it counts against the
// server's cap on watches, not against its requests in flight, and the
// request timeout does not end it. ctx ends when the client goes, and
// when the server shuts down or closes (as watches end): fn must return
// then, or Shutdown waits for it until its own deadline.
func Stream(contentType string, fn func(ctx context.Context, req Request, w io.Writer) error) Handler {
	return Handler{&Verb{Stream: fn, ContentType: contentType}}
}

// Subresource is a subresource of a registered resource (Group, Version,
// Resource: its plural) named Name, with a handler for each verb it
// serves.
type Subresource struct {
	Group, Version, Resource, Name string
	// Get serves GET (Read or Stream), Create POST and Update PUT (Write).
	Get, Create, Update Handler
}

// AddSubresource serves s on srv. Its resource must be registered first,
// and s added before serving starts.
func AddSubresource(srv Server, s Subresource) error {
	verbs := map[string]Verb{}
	for name, h := range map[string]Handler{"get": s.Get, "create": s.Create, "update": s.Update} {
		if h.verb != nil {
			verbs[name] = *h.verb
		}
	}
	return srv.AddEndpoint(Endpoint{Group: s.Group, Version: s.Version, Resource: s.Resource, Subresource: s.Name, Verbs: verbs})
}

// Review is a kind whose objects are answered and never stored, as
// TokenReview. T is a struct that embeds kapi.TypeMeta (inline) and
// kapi.ObjectMeta (as "metadata"), as a registered resource's.
type Review[T any] struct {
	// Group, Version, Kind and Plural name the kind; Singular defaults to
	// the lower-case Kind. Namespaced reviews are created in a namespace
	// (as LocalSubjectAccessReview), which must exist when the server
	// serves namespaces.
	Group, Version, Kind, Plural, Singular string
	Namespaced                             bool
	ShortNames, Categories                 []string
	// Answer fills in obj, decoded and admitted, with the answer (its
	// status, most often); an error is answered instead (an
	// apiserver.StatusError as it is).
	Answer func(ctx context.Context, req Request, obj *T) error
}

// AddReview serves r on srv, before serving starts.
func AddReview[T any, P interface {
	*T
	kapi.Object
}](srv Server, r Review[T]) error {
	if r.Answer == nil {
		return errors.New("actions: review " + r.Kind + ": no Answer")
	}
	proto := P(new(T))
	apiVersion := r.Version
	if r.Group != "" {
		apiVersion = r.Group + "/" + r.Version
	}
	*proto.GetTypeMeta() = kapi.TypeMeta{Kind: r.Kind, APIVersion: apiVersion}
	answer := func(ctx context.Context, req Request, in kapi.Object) (kapi.Object, error) {
		return in, r.Answer(ctx, req, in.(P))
	}
	if reflect.TypeFor[T]().Kind() != reflect.Struct {
		return errors.New("actions: review " + r.Kind + ": its type is not a struct")
	}
	return srv.AddEndpoint(Endpoint{
		Group: r.Group, Version: r.Version, Resource: r.Plural, Kind: r.Kind, Singular: r.Singular,
		Namespaced: r.Namespaced, ShortNames: r.ShortNames, Categories: r.Categories,
		Verbs: map[string]Verb{"create": {In: proto, Out: proto, Answer: answer}},
	})
}
