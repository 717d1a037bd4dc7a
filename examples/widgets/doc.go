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
// Widgets are served in v1 and in the deprecated v1beta1, whose one port
// is v1's port named "default" (the other ports ride along in the
// annotation widgets.example.com/v1-ports). They are stored in v1; an older
// release stored them in v1beta1, which -storage-version v1beta1 plays.
// After the storage version changed, objects stored in the old one are
// still read correctly, and -migrate rewrites them in the current one
// (resumable with -migrate-after; each rewrite is conditional, so on etcd
// it is safe beside serving replicas; a bbolt file has one process at a
// time, so stop the server first):
//
//	go run ./examples/widgets -data /tmp/widgets -storage-version v1beta1
//	go run ./examples/widgets -data /tmp/widgets -migrate
//
// A web console served from another origin calls the API from the
// browser once its origin is allowed (kube-apiserver's flag: regular
// expressions, comma-separated; anchor them), lists with fetch and follows
// a watch over a WebSocket:
//
//	go run ./examples/widgets -cors-allowed-origins '^http://localhost:3000$'
//
// For several replicas on one etcd cluster, see the etcd backend's example,
// github.com/kapi-dev/kapi/storage/etcd/cmd/widgets-etcd.
package main
