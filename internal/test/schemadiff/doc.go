// Package schemadiff holds kapi's schema engine (package schema) to
// Kubernetes' own: for a corpus of (schema, object) pairs — cases written
// per keyword, generated ones, and the CustomResourceDefinitions of real
// projects taken from their Go modules — it compares the structural check,
// validation, pruning and defaulting with apiextensions-apiserver's
// functions, and a fuzz target drives both with schemas and objects made
// from its bytes.
//
// # Running
//
//	cd internal/test/schemadiff && go test ./...
//	go test -run=NONE -fuzz=FuzzEngines -fuzztime=60s
//
// It is a module of its own so that the root module never requires
// k8s.io/apiextensions-apiserver.
package schemadiff
