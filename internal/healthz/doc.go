// Package healthz answers a server's probes (/healthz, /livez, /readyz and
// /<probe>/<check>) in kube-apiserver's healthz format, which load
// balancers, kubelet probes and kubectl get --raw read: "ok", or one
// "[+]name ok" / "[-]name failed: reason withheld" line per check. Which
// checks a probe runs is the server's (package apiserver).
//
// # Invariant
//
// A probe runs every check on every request, in order, and answers 503
// when one fails; the reason of a failure is never in a probe's answer,
// only in the log at Debug and at /<probe>/<name>, as kube-apiserver
// withholds it.
//
// # The slow, obviously correct path
//
// There is no faster path: each probe is a loop over its checks.
// apiserver's health tests compare the answers with kube-apiserver's.
package healthz
