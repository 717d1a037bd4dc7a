// Package e2e holds kapi's end-to-end tests: the real kubectl and client-go
// against the example server in examples/widgets, built once per test run and
// started on a free loopback port for each test.
//
// The package has its own module so that client-go never becomes a
// dependency of the root module.
package e2e
