// Package selector parses Kubernetes label and field selectors
// (labelSelector and fieldSelector query parameters, and the raw selectors
// of access reviews) into requirements, and says whether a value meets
// one.
//
// # Syntax
//
// A label selector is comma-separated requirements: key, !key, key=v,
// key==v, key!=v, key in (a,b), key notin (a,b), key>n and key<n, with
// keys and values checked as kube-apiserver checks them (package
// internal/names). A field selector is key=v, key==v and key!=v; which
// fields a resource supports is the caller's to check.
//
// # Matching
//
// Requirement.Matches reads one value; apiserver applies a selector to
// objects and to the watch cache's summaries of them.
package selector
