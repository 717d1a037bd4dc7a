package ctrltest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kapi-dev/kapi/crd/crdtest"
)

// TestStartupSideBySide starts the environment of the project's suite
// (project/config/crd/bases) with crdtest and with controller-runtime's
// envtest (etcd and kube-apiserver as processes) in turn, a few rounds,
// and reports each one's start-up time: from Start until it returns with
// every definition established, as each one's suite waits for. It
// measures rather than checks, and runs only when KAPI_ENVTEST_ASSETS
// names a directory of envtest's binaries (kube-apiserver, etcd, kubectl):
//
//	internal/test/aggregation/build-kube-apiserver.sh   # into ~/.cache/kapi-aggregation/bin
//	KAPI_ENVTEST_ASSETS=~/.cache/kapi-aggregation/bin go test -run TestStartupSideBySide -v ./internal/test/ctrltest
func TestStartupSideBySide(t *testing.T) {
	assets := os.Getenv("KAPI_ENVTEST_ASSETS")
	if assets == "" {
		t.Skip("set KAPI_ENVTEST_ASSETS to a directory holding kube-apiserver, etcd and kubectl")
	}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through it, and warns with a stack trace if it was never set
	crds := []string{filepath.Join("project", "config", "crd", "bases")}
	var kapi, kube []time.Duration
	for range 3 {
		start := time.Now()
		env := &crdtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true}
		if _, err := env.Start(); err != nil {
			t.Fatal(err)
		}
		kapi = append(kapi, time.Since(start))
		if err := env.Stop(); err != nil {
			t.Fatal(err)
		}

		start = time.Now()
		envt := &envtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets}
		if _, err := envt.Start(); err != nil {
			t.Fatal(err)
		}
		kube = append(kube, time.Since(start))
		if err := envt.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("start-up, %d rounds in turn: crdtest %v; envtest (etcd + kube-apiserver) %v", len(kapi), kapi, kube)
}
