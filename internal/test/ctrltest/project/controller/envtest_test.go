package controller

import (
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// envtestAssets names the directory of envtest's binaries (kube-apiserver,
// etcd, kubectl; what setup-envtest or KUBEBUILDER_ASSETS would give): with
// it set, the suite runs on controller-runtime's envtest, etcd and
// kube-apiserver started as processes, as kubebuilder's suite does; without
// it (CI), on crdtest. internal/test/aggregation/build-kube-apiserver.sh
// builds the two servers from the Go module proxy.
const envtestAssets = "KAPI_ENVTEST_ASSETS"

// startEnvtest starts the suite's environment as kubebuilder scaffolds it.
func startEnvtest(assets string) (*rest.Config, func() error, error) {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	return cfg, env.Stop, err
}
