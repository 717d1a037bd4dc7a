package crdtest_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/crd/crdtest"
)

// A test starts an Environment on a project's definitions, and its
// clients talk to its URL.
func ExampleEnvironment() {
	testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{"testdata/crd/bases"}, ErrorIfCRDPathMissing: true}
	host, err := testEnv.Start()
	if err != nil {
		panic(err)
	}
	defer testEnv.Stop()
	_ = host // &rest.Config{Host: host}
	// Output:
}

func TestEnvironment(t *testing.T) {
	testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{"testdata/crd/bases", "testdata/missing"}}
	host, err := testEnv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := testEnv.Stop(); err != nil {
			t.Error(err)
		}
	})
	// Established when Start returns: its objects can be created at once.
	resp, err := http.Post(host+"/apis/batch.example.com/v1/namespaces/default/cronjobs", "application/json",
		strings.NewReader(`{"apiVersion": "batch.example.com/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *"}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"replicas":1`) {
		t.Fatalf("create a cronjob: HTTP %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/api/v1/namespaces/kube-system", "/apis/coordination.k8s.io/v1/namespaces/default/leases", "/api/v1/namespaces/default/events"} {
		resp, err := http.Get(host + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
		}
	}
}

func TestEnvironmentMissingPath(t *testing.T) {
	testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{"testdata/missing"}, ErrorIfCRDPathMissing: true}
	if _, err := testEnv.Start(); err == nil {
		_ = testEnv.Stop()
		t.Fatal("a missing path is not an error")
	}
}

func TestEnvironmentInvalidDefinition(t *testing.T) {
	dir := t.TempDir()
	testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{dir + "/bad.yaml"}, ErrorIfCRDPathMissing: true}
	writeFile(t, dir+"/bad.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bad}\nspec: {group: x}\n")
	_, err := testEnv.Start()
	if err == nil || !strings.Contains(err.Error(), "HTTP 422") {
		_ = testEnv.Stop()
		t.Fatalf("an invalid definition: %v", err)
	}
}

// BenchmarkStart measures an Environment's start, up to the
// definitions established.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{"testdata/crd/bases"}}
		if _, err := testEnv.Start(); err != nil {
			b.Fatal(err)
		}
		if err := testEnv.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
