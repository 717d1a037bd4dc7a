// Command widgets serves the example's widgets and widget classes over the
// Kubernetes API, in memory:
//
//	go run ./examples/widgets                 # http://127.0.0.1:8080
//	kubectl --server http://127.0.0.1:8080 api-resources
//
// or durably, in a bbolt file that survives restarts and crashes:
//
//	go run ./examples/widgets -data /tmp/widgets   # /tmp/widgets/kapi.db
//
// and encrypted at rest, as a kube-apiserver EncryptionConfiguration file
// says (see package github.com/kapi-dev/kapi/storage/encryption):
//
//	go run ./examples/widgets -data /tmp/widgets -encryption-config encryption.yaml
//
// For several replicas on one etcd cluster, see the etcd backend's example,
// github.com/kapi-dev/kapi/storage/etcd/cmd/widgets-etcd.
package main
