// Command modules keeps kapi's nested modules consumable: every nested
// go.mod requires kapi's modules at a version that exists, the
// pseudo-version of a commit in this repository's history, with no replace
// lines (which consumers ignore; go.work ties the modules together for
// development).
//
// # Checking and updating the versions
//
//	go run ./internal/modules            # check: CI runs this
//	go run ./internal/modules -w         # require every kapi module at HEAD
//	go run ./internal/modules -w COMMIT  # ... at COMMIT
//
// The check needs no network: it reads go.work, the go.mod files and git.
// Each requirement must be a pseudo-version (v0.0.0-yyyymmddhhmmss-abcdef123456)
// whose commit is in HEAD's history, whose time is that commit's, and at
// which the required module exists; all name the same commit. After a
// change to the root module that a nested module depends on (a new
// function it calls), that commit is too old: run -w once the change is
// committed, and commit the go.mod files it rewrote.
//
// # As a consumer sees them
//
// The package's test builds a module proxy in GOPROXY's file layout
// (https://go.dev/ref/mod#goproxy-protocol) from the repository: kapi at
// the commit the nested modules require (from git), and every module at a
// version made up for the working tree. A fresh module then gets kapi and
// nested modules through it, with no replace lines, and builds a program
// that uses them; a nested module that needs more of kapi than the commit
// it requires has fails there. Third-party modules come from the local
// module cache (falling back to GOPROXY), so the test needs no network on
// a machine that has built the workspace.
//
//	go run ./internal/modules -proxy DIR  # write the proxy, print its GOPROXY
package main
