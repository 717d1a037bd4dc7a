package audit_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/audit"
)

func ExampleNew() {
	policy, err := audit.ParsePolicy([]byte(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
- level: RequestResponse
  resources: [{group: example.com}]
- level: Metadata
`))
	if err != nil {
		log.Fatal(err)
	}
	file, err := audit.NewRotatingFile(filepath.Join(os.TempDir(), "kapi-audit.log"), 100<<20, 5)
	if err != nil {
		log.Fatal(err)
	}
	defer file.Close()
	auditLog, err := audit.New(file, policy)
	if err != nil {
		log.Fatal(err)
	}
	defer auditLog.Close() // after the server's Close: what is buffered is written

	srv, err := apiserver.New(apiserver.WithObserver(auditLog))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println("auditing")
	// Output: auditing
}
