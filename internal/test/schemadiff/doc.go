// Package schemadiff holds kapi's schema engine (package schema) to
// Kubernetes' own: for a corpus of (schema, object) pairs — cases written
// per keyword, generated ones, and the CustomResourceDefinitions of real
// projects taken from their Go modules — it compares the structural check,
// validation, pruning and defaulting with apiextensions-apiserver's
// functions, and a fuzz target drives both with schemas and objects made
// from its bytes.
//
// # Rules
//
// The x-kubernetes-validations half compares package validation/cel,
// through schema.RuleCompiler, with apiextensions-apiserver's CEL
// validator and registry strategy: for (schema with rules, old, new)
// triples — hand-written cases per feature (messages, reasons, field
// paths, transition rules, optionalOldSelf, ratcheting, list semantics,
// formats, libraries, cost limits), generated rules over every kind of
// field, and the rules of real CRDs (Gateway API's, cert-manager's) — the
// check of the rules (compile errors, cost estimates) and the errors of
// each create and update, alone and as a whole write, must be the same in
// field path, cause type and message. FuzzRules compiles and runs a rule
// made from its bytes on both.
//
// # Running
//
//	cd internal/test/schemadiff && go test ./...
//	go test -run=NONE -fuzz=FuzzEngines -fuzztime=60s
//	go test -run=NONE -fuzz=FuzzRules -fuzztime=60s
//
// It is a module of its own so that the root module never requires
// k8s.io/apiextensions-apiserver.
package schemadiff
