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
//
// # Summaries
//
// A Summary is what the watch cache keeps of an object for selectors (its
// labels and selectable field values), so that a selected list or watch
// decodes no object; Summaries shares equal ones between the objects of a
// resource. Invariant: a summary is never changed once made, since every
// object with equal labels and fields holds the same one; the table is
// bounded (4,096 summaries of at most 1 KiB each), and a summary past the
// bound is made for its object alone, its strings pointing into the stored
// value. The slow, obviously correct path is decoding the object and
// reading its labels and fields, which apiserver does for a cached item
// without a summary.
package selector
