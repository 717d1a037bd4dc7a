// Package kubecompat holds the differential tests of package encryption
// against kube-apiserver's own code (k8s.io/apiserver): the same
// configuration files are accepted or refused alike, and each side reads
// what the other wrote. It is a module of its own, outside go.work (.ci/run
// tests it with GOWORK=off), so that neither kapi nor the workspace's
// version choices depend on k8s.io/apiserver.
package kubecompat
