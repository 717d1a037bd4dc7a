// Package applyconfig reads the body of a server-side apply: its JSON, and
// that JSON read once for patch (patch.ParseConfiguration).
//
// # Why a package
//
// kubectl sends an apply configuration as JSON labelled
// application/apply-patch+yaml. Reading it as YAML would cost more than the
// apply, so a body that is plainly JSON is taken as it is
// (codec.YAMLToJSON); that check is mostly a check that the body is valid
// JSON, which reading it for patch makes anyway. Read makes it once, with
// the two packages it needs, so that apiserver's apply only asks for the
// result.
package applyconfig
