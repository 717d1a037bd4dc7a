package crd_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkServeDefinition measures the time from a definition's create
// to its kind answering a LIST: what a client that applies a CRD waits for
// before it can create its objects. The server holds the definitions of
// the earlier rounds, as a control plane does.
func BenchmarkServeDefinition(b *testing.B) {
	srv := server(b)
	i := 0
	for b.Loop() {
		i++
		plural := fmt.Sprintf("widgets%d", i)
		doc := strings.NewReplacer(`"widgets.example.com"`, `"`+plural+`.example.com"`, `"plural": "widgets"`, `"plural": "`+plural+`"`,
			`"kind": "Widget"`, fmt.Sprintf(`"kind": "Widget%d"`, i), `"shortNames": ["wd"]`, `"shortNames": []`).Replace(widgets)
		if code, c := do(b, srv, "POST", crds, doc); code != http.StatusCreated {
			b.Fatalf("create: %d %v", code, c)
		}
		for {
			if code, _ := do(b, srv, "GET", "/apis/example.com/v1/namespaces/default/"+plural, ""); code == http.StatusOK {
				break
			}
		}
	}
}
