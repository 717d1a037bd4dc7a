package actions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
)

// Server is what serves endpoints: an *apiserver.Server, whose request
// path runs them (apiserver.Server.AddEndpoint).
type Server interface {
	AddEndpoint(Endpoint) error
}

// Endpoint is what AddSubresource and AddReview give a Server: a
// subresource of a registered resource with handlers of its own, or,
// without Subresource, a kind answered and never stored.
type Endpoint struct {
	Group, Version string
	// Resource is the plural of the resource the subresource belongs to,
	// or of the answered kind.
	Resource, Subresource string
	// Kind, Singular, Namespaced, ShortNames and Categories describe an
	// answered kind, whose objects are of Kind.
	Kind, Singular         string
	Namespaced             bool
	ShortNames, Categories []string
	// Verbs by name: get, create (POST) and update (PUT) for a
	// subresource; create alone for an answered kind.
	Verbs map[string]Verb
}

// Verb serves one verb of an Endpoint: Answer, or Stream for get.
type Verb struct {
	// In is a zero value of the objects a body holds (create and update),
	// Out of the objects answered. Their kind and group version are
	// their TypeMeta's, else the Go type's name and the endpoint's (see
	// KindOf).
	In, Out kapi.Object
	// Answer answers with an Out; in is nil without In. Answering
	// neither an object nor an error is a 500 InternalError.
	Answer func(ctx context.Context, req Request, in kapi.Object) (kapi.Object, error)
	// Stream answers with a stream of ContentType instead (see package
	// actions' Stream).
	Stream      func(ctx context.Context, req Request, w io.Writer) error
	ContentType string
}

// Request is what a handler is told of its request. Who asked is
// apiserver.UserFrom(ctx).
type Request struct {
	Namespace, Name string // of the path: the object's, for a subresource
	Query           url.Values
	DryRun          bool // dryRun=All on a create or update: nothing is to change
	// Object is a subresource's object as stored when the request came,
	// in the resource's version: a private copy, decoded for this request,
	// which the handler may change; nothing changed in it is stored.
	Object kapi.Object
}

// Check says what is wrong with e on its own: a subresource's name, its
// verbs and their handlers.
func (e Endpoint) Check() error {
	var errs []error
	if e.Subresource != "" && len(names.IsDNS1123Label(e.Subresource)) > 0 {
		errs = append(errs, fmt.Errorf("subresource %q is not a DNS label", e.Subresource))
	}
	if len(e.Verbs) == 0 {
		errs = append(errs, errors.New("no verbs"))
	}
	for name, v := range e.Verbs {
		switch {
		case name != "get" && name != "create" && name != "update", e.Subresource == "" && name != "create":
			errs = append(errs, fmt.Errorf("verb %q cannot be served", name))
		case (v.Stream == nil) == (v.Answer == nil), v.Stream != nil && (name != "get" || v.ContentType == ""):
			errs = append(errs, fmt.Errorf("verb %s: either Answer, or Stream with a ContentType for get", name))
		case (v.In == nil) != (name == "get"), v.Answer != nil && v.Out == nil:
			errs = append(errs, fmt.Errorf("verb %s: a body (In) is read on create and update only, and Answer needs Out", name))
		}
		for _, obj := range []kapi.Object{v.In, v.Out} {
			if obj != nil && (reflect.TypeOf(obj).Kind() != reflect.Pointer || reflect.TypeOf(obj).Elem().Kind() != reflect.Struct) {
				errs = append(errs, fmt.Errorf("verb %s: %T is not a pointer to a struct", name, obj))
			}
		}
	}
	return errors.Join(errs...)
}

// KindOf is the group, version and kind of objects of obj's type read or
// answered by an endpoint of group and version: obj's TypeMeta if it
// names them, else the Go type's name in the endpoint's group version.
func KindOf(obj kapi.Object, group, version string) (g, v, kind string) {
	g, v, kind = group, version, reflect.TypeOf(obj).Elem().Name()
	tm := obj.GetTypeMeta()
	if tm.Kind != "" {
		kind = tm.Kind
	}
	if tm.APIVersion != "" {
		if g, v, _ = strings.Cut(tm.APIVersion, "/"); v == "" {
			g, v = "", tm.APIVersion
		}
	}
	return g, v, kind
}
