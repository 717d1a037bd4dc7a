// Command widgets serves the example's widgets and widget classes over the
// Kubernetes API, in memory:
//
//	go run ./examples/widgets                 # http://127.0.0.1:8080
//	kubectl --server http://127.0.0.1:8080 api-resources
package main
