// Package aggregation holds an end-to-end test of kapi as an APIService of
// a real kube-apiserver (built from the Go module proxy by
// build-kube-apiserver.sh), with the extension server in a network
// namespace the test makes. It is opt-in (KAPI_AGGREGATION=1, or run.sh):
// the build does not fit CI's time.
package aggregation
