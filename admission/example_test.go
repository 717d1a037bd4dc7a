package admission_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/admission"
	"github.com/kapi-dev/kapi/auth"
)

func ExampleFunc() {
	// Only the team's own users may delete in its namespace; a server takes
	// the hook in apiserver.WithValidatingAdmission.
	ownersDelete := admission.Func(func(_ context.Context, req *admission.Request) error {
		if req.Operation != admission.Delete || req.User.Name == req.Namespace {
			return nil
		}
		return errors.New("only the namespace's owner may delete in it")
	})
	for _, req := range []*admission.Request{
		{Operation: admission.Create, Resource: "notes", Namespace: "alice", Name: "n", User: auth.User{Name: "bob"}},
		{Operation: admission.Delete, Resource: "notes", Namespace: "alice", Name: "n", User: auth.User{Name: "alice"}},
		{Operation: admission.Delete, Resource: "notes", Namespace: "alice", Name: "n", User: auth.User{Name: "bob"}},
	} {
		fmt.Println(req.Operation, req.User.Name, ownersDelete(context.Background(), req))
	}
	// Output:
	// CREATE bob <nil>
	// DELETE alice <nil>
	// DELETE bob only the namespace's owner may delete in it
}
