// Package pathpattern reads the path patterns that kube-apiserver's
// configuration uses for non-resource URLs: an RBAC rule's
// nonResourceURLs and the paths served without authentication
// (--always-allow-paths).
//
// # Patterns
//
// A pattern is a path that must match exactly, or a prefix ending in "*"
// that matches every path it begins; "*" alone matches every path. A "*"
// anywhere but at the end is refused by Check, because kube-apiserver would
// read it as a plain character and the rule would silently never match.
//
// # Users
//
// Package auth's rules and apiserver's always-allowed paths share these
// functions, so that a pattern means the same in both.
package pathpattern
