// Package crddiff compares kapi's answers for custom resources with
// kube-apiserver's, request by request: scripts of requests (a
// definition's create, its invalid updates, objects valid and invalid,
// reads in every media type, selectors, patches, server-side apply,
// subresources, deletion) run against kapi serving definitions as
// examples/controlplane does (with validation/cel's rule engine), and each
// answer (status code, Content-Type, Warning headers, body with run-to-run
// values masked) is compared with kube-apiserver's recorded in testdata.
//
// The golden files are kube-apiserver's answers, recorded with envtest
// (etcd and kube-apiserver as processes) from KAPI_ENVTEST_ASSETS:
//
//	internal/test/aggregation/build-kube-apiserver.sh   # into ~/.cache/kapi-aggregation/bin
//	KAPI_ENVTEST_ASSETS=~/.cache/kapi-aggregation/bin go test ./internal/test/ctrltest/crddiff -update
//
// Without them (CI), the test compares kapi with the recorded answers. A
// difference kapi keeps is listed beside its script with the reason.
package crddiff
