// Package crdtest starts kapi servers for the tests of controllers: a
// drop-in for controller-runtime's envtest that serves the
// CustomResourceDefinitions of a kubebuilder project's config/crd/bases in
// the test's own process, without etcd or kube-apiserver binaries.
//
// # Use
//
// Where a suite starts envtest,
//
//	testEnv := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
//	cfg, err := testEnv.Start()
//
// it starts an Environment instead, and makes its rest.Config from the URL:
//
//	testEnv := &crdtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
//	host, err := testEnv.Start()
//	cfg := &rest.Config{Host: host}
//
// The rest of the suite (the manager, the reconcilers, the client, the
// assertions) is unchanged, and testEnv.Stop() stops the server. The server
// serves namespaces (default and kube-system exist), leases (leader
// election), events (recorders) and the definitions, each established
// before Start returns; it stores in memory unless Options say otherwise,
// and needs no credentials (plain HTTP on loopback).
package crdtest
