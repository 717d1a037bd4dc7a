// Package kubecompat holds the differential tests of package encryption
// against kube-apiserver's own code (k8s.io/apiserver): the same
// configuration files are accepted or refused alike, and each side reads
// what the other wrote. It is a module of its own so that kapi does not
// depend on k8s.io/apiserver.
package kubecompat
