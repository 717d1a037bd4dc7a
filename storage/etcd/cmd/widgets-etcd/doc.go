// Command widgets-etcd serves the example's widgets and widget classes over
// the Kubernetes API, stored in etcd, so that any number of replicas of it
// serve one API:
//
//	etcd &                                                  # http://127.0.0.1:2379
//	go run ./storage/etcd/cmd/widgets-etcd -etcd http://127.0.0.1:2379 -addr 127.0.0.1:8080 &
//	go run ./storage/etcd/cmd/widgets-etcd -etcd http://127.0.0.1:2379 -addr 127.0.0.1:8081 &
//	kubectl --server http://127.0.0.1:8080 create -f widget.yaml
//	kubectl --server http://127.0.0.1:8081 get widgets --watch
//
// Put a load balancer in front of the replicas: a client's writes, reads
// and watches may go to any of them, and a watch cut off from one resumes on
// another from its last resourceVersion.
package main
