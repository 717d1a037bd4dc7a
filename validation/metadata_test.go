package validation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

func TestMetadata(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		errs []*validation.Error
		want []string
	}{
		{"valid labels", validation.Labels(map[string]string{"app": "web", "example.com/tier": ""}, "metadata.labels"), nil},
		{"bad label key and value", validation.Labels(map[string]string{"a/b/c": "ok", "k": "web-"}, "metadata.labels"),
			[]string{`metadata.labels: Invalid value: "a/b/c": a valid label key`, `metadata.labels: Invalid value: "web-": a valid label must be`}},
		{"annotation keys in any case", validation.Annotations(map[string]string{"Example.com/Note": "x"}, "metadata.annotations"), nil},
		{"annotations too big", validation.Annotations(map[string]string{"a": strings.Repeat("x", validation.TotalAnnotationBytes)}, "metadata.annotations"),
			[]string{"metadata.annotations: Too long: may not be more than 262144 bytes"}},
		{"owner reference without uid", validation.OwnerReferences([]kapi.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "n"}}, "metadata.ownerReferences"),
			[]string{"metadata.ownerReferences[0].uid: Required value: must not be empty"}},
		{"bad owner apiVersion", validation.OwnerReferences([]kapi.OwnerReference{{APIVersion: "a/b/c", Kind: "K", Name: "n", UID: "u"}}, "metadata.ownerReferences"),
			[]string{`metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>`}},
		{"two controllers", validation.OwnerReferences([]kapi.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "a", UID: "1", Controller: &yes}, {APIVersion: "v1", Kind: "K", Name: "b", UID: "2", Controller: &yes}}, "metadata.ownerReferences"),
			[]string{"metadata.ownerReferences: Invalid value:"}},
		{"orphan and foreground", validation.Finalizers([]string{"orphan", "foregroundDeletion"}, "metadata.finalizers"),
			[]string{"finalizer orphan and foregroundDeletion cannot be both set"}},
		{"bad finalizer", validation.Finalizers([]string{"a b"}, "metadata.finalizers"), []string{`metadata.finalizers: Invalid value: "a b"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", tc.errs, len(tc.want))
			}
			for i, e := range tc.errs {
				if !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("error %d = %q, want it to hold %q", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}

func ExampleLabels() {
	for _, err := range validation.Labels(map[string]string{"app": "web-"}, "metadata.labels") {
		fmt.Println(err.Field, err.Type)
	}
	// Output: metadata.labels FieldValueInvalid
}
