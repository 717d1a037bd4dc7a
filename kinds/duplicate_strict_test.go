package kinds_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kinds"
)

// A custom resource's body with a repeated field: kube-apiserver refuses
// it under Strict: duplicate field "spec.color".
func TestStrictDuplicateField(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	out := c.want("POST", "/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"d"},"spec":{"color":"red","color":"blue"}}`, 400)
	if !strings.Contains(out, `duplicate field \"spec.color\"`) {
		t.Errorf("strict: %s", out)
	}
}
