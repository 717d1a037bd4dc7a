// Command widgets-sqlite serves what the widgets example (examples/widgets)
// serves — namespaces, widgets in v1 and v1beta1, widget classes, leases
// and events — over the Kubernetes API, stored in one SQLite file:
//
//	go run ./storage/sqlite/cmd/widgets-sqlite -file /tmp/widgets.sqlite -addr 127.0.0.1:8080 &
//	kubectl --server http://127.0.0.1:8080 create -f widget.yaml
//	kubectl --server http://127.0.0.1:8080 get widgets --watch
//
// One process serves a file: a second one started on the same file exits
// at once, saying the file is in use. Stop the server (SIGINT or SIGTERM)
// and start it again: every acknowledged write is still there, history
// included, and clients' watches resume from their last resourceVersion.
package main
