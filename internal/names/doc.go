// Package names checks the syntax of Kubernetes names: qualified names
// (label keys, annotation keys, finalizers), label values, DNS-1123
// subdomains and labels, with kube-apiserver's messages, which clients
// show and tests compare.
//
// # Fast and slow paths
//
// The Is* functions return every message that applies, through regular
// expressions: the slow, obviously correct path, used only once a value
// is known to be bad. The Valid* functions answer yes or no without
// regular expressions for the usual, valid case; FuzzQualifiedNameMatchers
// holds the two equal.
package names
