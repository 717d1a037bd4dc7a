// Package versions is what it takes to serve one kind in several versions:
// their order, their conversions, and the migration of stored objects to
// the storage version.
//
// # Order
//
// [Compare] orders version names as Kubernetes does (GA before beta before
// alpha, higher numbers first, names outside the scheme last): discovery
// lists versions in that order and the first served one is preferred.
//
// # Hub and spoke
//
// Each version of a kind is its own Go type. Rather than a conversion per
// pair of versions, each version converts to and from one hub type
// ([Via]); the hub may be one of the versions' types, which then needs no
// conversion, or a type of its own. A [Set] holds the versions of one kind,
// checks that exactly one is the storage version and that every version
// reaches the hub, and converts an object from any version to any other
// through the hub. Metadata is copied by the set, not by the user's
// functions: they convert what differs (spec, status) and may read and
// write the destination's annotations, which belong to it alone.
//
// # Another group
//
// A version may belong to another group than the set's ([Version].Group):
// its objects are the set's, stored in the storage version, served in that
// group. Kubernetes serves core v1 events as events.k8s.io/v1 events in
// this way. The set's methods name such a version "group/version".
//
// # Lossless round trips
//
// A version that cannot hold a field of the hub keeps it in an annotation
// of its own, as Kubernetes' own types do: its fromHub function writes the
// field there (for example as JSON), and its toHub function reads it back
// and deletes the annotation. A client of the older version that reads an
// object and writes it back then sends the annotation along, and the field
// survives. [SaveInAnnotation] and [RestoreFromAnnotation] do the JSON part.
//
// # Deprecation
//
// [Set.Warning] is the warning every request to a deprecated version gets:
// its own text, or kube-apiserver's for deprecated custom resource
// versions ("example.com/v1beta1 Widget is deprecated; use example.com/v1
// Widget").
//
// # Migration
//
// Objects are stored in the storage version, and the stored bytes say
// which version they are in, so objects written while another version was
// the storage version still read correctly. [Migrate] rewrites them in the
// current storage version: a no-op update of each key with its revision as
// precondition, so a concurrent write wins and the object it wrote is
// already current; it goes in key order, can resume after the last key it
// reports, and reports its progress.
package versions
