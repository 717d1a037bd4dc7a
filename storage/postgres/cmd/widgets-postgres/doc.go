// Command widgets-postgres serves the example's widgets and widget classes
// (and namespaces, leases and events, as examples/widgets does) over the
// Kubernetes API, stored in PostgreSQL, so that any number of replicas of
// it serve one API:
//
//	go run ./storage/postgres/cmd/widgets-postgres -postgres postgres://kapi@127.0.0.1:5432/kapi -addr 127.0.0.1:8080 &
//	go run ./storage/postgres/cmd/widgets-postgres -postgres postgres://kapi@127.0.0.1:5432/kapi -addr 127.0.0.1:8081 &
//	kubectl --server http://127.0.0.1:8080 create -f widget.yaml
//	kubectl --server http://127.0.0.1:8081 get widgets --watch
//
// The first replica creates the store's tables in the schema -schema
// ("kapi" by default) of the database; the role it connects as needs the
// right to. Put a load balancer in front of the replicas: a client's
// writes, reads and watches may go to any of them, and a watch cut off from
// one resumes on another from its last resourceVersion.
package main
