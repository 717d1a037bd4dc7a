package audit_test

import (
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/audit"
)

// FuzzParsePolicy: any input is a policy or an error, never a panic; a
// policy it accepts can decide for any request.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(policyYAML))
	f.Add([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata, resources: [{group: '*', resources: ['*/status', 'widgets/*'], resourceNames: [a]}], namespaces: ['']}]\n"))
	f.Add([]byte(`{"apiVersion":"audit.k8s.io/v1","kind":"Policy","omitStages":["Panic"],"rules":[{"level":"None","nonResourceURLs":["/x*"]}]}`))
	f.Add([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := audit.ParsePolicy(data)
		if err != nil {
			return
		}
		log, err := audit.New(discard{}, p)
		if err != nil {
			t.Fatalf("a parsed policy is refused by New: %v", err)
		}
		defer log.Close()
		for _, a := range []apiserver.Attributes{
			{Verb: "get", Path: "/x/y"},
			{Verb: "update", ResourceRequest: true, APIGroup: "g", Resource: "widgets", Subresource: "status", Name: "a", Namespace: "n"},
		} {
			rec := &apiserver.RequestRecord{Attributes: a, UserKnown: true}
			ctx := log.RequestStarted(t.Context(), rec)
			log.RequestEnded(ctx, rec)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
